"""Which startup files a start reads, as records: every ``.pth`` (and, on 3.15+,
``.start``) file of the site directories in ``site``'s order, each line classified, and the
files of the directories a literal ``site.addsitedir`` adds.

Read through the one reader (:mod:`..facts.reader`), never run.  Runs in ``check``'s
probe (:mod:`.inventory` judges what is read); module level: ``os`` and ``sys``.
"""

import os
import sys

from ..facts.reader import (
    _pth_lines,
    _skips_dot_files,
    pep829_site,
    pth_names,
    read_file,
    real_file,
    site_dirs,
)
from ..facts.startup_records import StartupFile, StartupLine
from . import prover
from .line_checks import _ONLY_AST, _walk


def read_startup_files(site, version=None):
    """Every ``.pth`` (and, on 3.15+, ``.start``) file ``site`` reads, in its order, with
    each line classified; import lines and entry points not yet judged.

    A file ``site`` cannot decode has its ``decode_error`` (a ``.pth``: its ``error``,
    the start fails); a FIFO, socket, device its ``file_type``, a file over
    :data:`..facts.reader.READ_LIMIT` its ``size``.  The files of a directory an import line adds
    (``site.addsitedir('<literal>')``) follow its file, with their ``started_by``."""
    version = tuple(version or sys.version_info[:2])
    _user, dirs = site_dirs(site)
    seen = {os.path.normcase(os.path.abspath(d)) for d in dirs}
    state = (version, pep829_site(site), _skips_dot_files(site), set(), seen)
    files = []
    for sitedir in dirs:
        files.extend(_read_dir(sitedir, state))
    return files


def _read_dir(sitedir, state, started_by=None):
    """The startup files of a site directory in ``site``'s order, each ``.pth`` followed
    by those of the directories it adds.  ``state``: ``(version, pep829, skips dot files,
    path lines' directories so far, directories read so far)``."""
    version, pep829, dots, known, _seen = state
    try:
        names = os.listdir(sitedir)
    except OSError:
        return []
    pths = pth_names(names, dots)
    starts = sorted(n for n in names if pep829 and n.endswith(".start") and n[:1] != ".")
    files, start_files, start_paths = [], [], set()
    for name in starts:
        path = os.path.join(sitedir, name)
        read = read_file(path, version, start=True)
        if read is None:
            continue
        lines, facts = read
        if not (facts.decode_error or facts.file_type):
            start_paths.add(path)  # site read it: it turns off its .pth's import lines
        out = []
        for n, line in enumerate(lines or (), 1):
            line = line.strip()
            if line:
                out.append(StartupLine(n, line, "comment" if line.startswith("#")
                                       else "entry-point", runs=not line.startswith("#")))
        start_files.append(StartupFile(path, "start", sitedir, out, realpath=real_file(path),
                                       started_by=started_by, **facts.fields()))
    for name in pths:
        path = os.path.join(sitedir, name)
        read = read_file(path, version)
        if read is None:
            continue
        lines, facts = read
        start = path[:-len(".pth")] + ".start"
        disabled = start if start in start_paths else None
        f = StartupFile(path, "pth", sitedir,
                        _pth_lines(sitedir, lines or (), pep829, version, disabled, known),
                        disabled_by=disabled, realpath=real_file(path),
                        error=facts.decode_error, started_by=started_by, **facts.fields())
        files.append(f)
        files.extend(_added_dirs(f, state))
    return files + start_files


def _added_dirs(f, state):
    """The startup files of the directories ``f``'s running import lines add with
    ``site.addsitedir('<absolute literal>')`` (a relative one depends on each start's
    working directory), each directory once (``site`` would read one again: the line's
    ``note`` says so)."""
    seen, out = state[4], []
    for line in f.lines:
        if line.kind != "import" or not line.runs:
            continue
        for directory in _addsitedirs(line.text, f.path):
            if not os.path.isabs(directory):
                continue
            directory = os.path.abspath(directory)
            key = os.path.normcase(directory)
            if key in seen:
                said = "site.addsitedir(%r): its startup files are listed once" % directory
            elif not os.path.isdir(directory):
                said = "site.addsitedir(%r): no such directory" % directory
            else:
                seen.add(key)
                said = "site.addsitedir(%r): its startup files follow" % directory
                out.extend(_read_dir(directory, state, [f.path, line.number]))
            line.note = said if not line.note else "%s; %s" % (line.note, said)
    return out


def _addsitedirs(text, pth):
    """The directories an import line passes to ``site.addsitedir``: its literals, then
    those the prover evaluates (a decoded or joined one: :mod:`.prover`), in order."""
    found = _addsitedir_literals(text)
    if found or "addsitedir" not in text:
        return found
    proof = prover.prove(text, "", pth)
    return [values[0] for target, op, values, _line in proof.path_changes
            if op == "addsitedir" and values and isinstance(values[0], str)]


def _addsitedir_literals(text):
    """The string literals an import line passes first to ``site.addsitedir(...)`` (or
    ``addsitedir(...)``), in order; [] when it calls none or does not compile."""
    if "addsitedir" not in text:
        return []
    try:
        tree = compile(text, "<string>", "exec", _ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return []
    calls = [n for n in _walk(tree) if type(n).__name__ == "Call" and n.args
             and getattr(n.func, "attr", getattr(n.func, "id", None)) == "addsitedir"
             and type(n.args[0]).__name__ == "Constant" and isinstance(n.args[0].value, str)]
    return [n.args[0].value for n in sorted(calls, key=lambda n: n.col_offset)]
