"""``check``'s inventory of the code a start of the target runs before ``main``.

Every ``.pth`` file ``site`` processes, each line classified as ``site`` reads it
(3.8-3.14: ``addpackage``; 3.15+: PEP 829's ``StartupState``, with ``.start`` entry
points and the ``.pth`` import lines a same-named ``.start`` turns off), as
:mod:`.reader` reads them, then ``sitecustomize`` and ``usercustomize`` (the file
imported, links followed).  Each file gets its owner, verified, and its known template
(:mod:`.provenance`), what its code does (:mod:`.analysis`), who else may
change it, and for each ``sys.path`` directory (a site directory, ``PYTHONPATH``, a
``.pth`` path line), who else may write to it (``os.stat`` of it and of its parents: a
parent they can write lets them rename it).

Nothing is executed (:mod:`.line_checks` judges the lines and the directories).
Its records (``StartupSection``, ``StartupFile``, ``StartupLine``, ``Owner``,
``PathDirectory``, ``Writers``) are in :mod:`.records` (the CLI reads them without this
module): one JSON form each, the ``startup`` section of ``check --json``
(``docs/check-schema.md``).  Module level: ``os`` and ``sys``.
"""

import os
import sys

from .. import pathfacts, settings
from ..detect import layout
from ..facts import private_cache, reader
from ..facts.reader import pep829_site, real_file, site_dirs
from ..facts.records import Finding
from ..facts.startup_records import PathDirectory, StartupFile, StartupSection
from . import line_checks, provenance
from .findings import findings
from .startup_files import read_startup_files


def judge(files, pep829, memo=None):
    """Set each import line's and entry point's ``error`` (and, before 3.15, stop each
    file at its first error, as ``site`` does: the rest is not processed).  ``memo``: a
    :class:`.line_checks.LineMemo`.  The files a line that does not run would add
    (``started_by``) are not processed either."""
    by_place = {}
    for f in files:
        by_place.update(((f.path, line.number), line) for line in f.lines)
        parent = by_place.get(tuple(f.started_by or ()))
        if parent is not None and parent.runs is False:
            for line in f.lines:
                if line.kind != "comment":
                    line.runs = False
                    line.note = "not processed: %s line %d does not run" % tuple(f.started_by)
            f.error = None
            continue
        if os.path.basename(f.path) in ("sitewarden.pth", "sitewarden.start"):
            continue  # without its runtime: an ``orphaned-hook`` finding (check.guard) says so
        failed = None
        for line in f.lines:
            if failed is not None:
                if line.kind in ("import", "path"):
                    line.runs = False
                    line.note = "not processed: line %d failed before it" % failed
                continue
            if not line.runs:
                continue
            if line.kind == "import":
                line.error = line_checks.line_error(line.text, memo)
            elif line.kind == "entry-point":
                line.error = line_checks.entry_point_error(line.text)
            if line.error and not pep829 and f.kind == "pth":
                failed = line.number
        if failed is not None and f.error and f.error == f.decode_error:
            f.error = None  # site abandons the file before the bytes it cannot decode


def customize_files(site, memo=None):
    """``sitecustomize`` (and ``usercustomize`` when the user site is enabled); ``memo``:
    the check's :class:`.line_checks.LineMemo`."""
    out = []
    names = ["sitecustomize"] + (["usercustomize"] if getattr(site, "ENABLE_USER_SITE", False)
                                 else [])
    for name in names:
        path, loaded = line_checks.customize_file(name)
        if path:
            out.append(StartupFile(path, name, os.path.dirname(path), realpath=real_file(path),
                                   error=None if loaded else line_checks.customize_error(
                                       path, reader.read_bytes(path), memo)))
    return out


def path_directories(files, euid):
    """Every ``sys.path`` directory (but the script's) and every ``.pth`` path line's,
    with who else may change it: :class:`PathDirectory` records (not a line holding a
    NUL byte: no directory has that name)."""
    cache, seen, out = {}, set(), []
    _facts, entries = layout.current(read_pth=True)
    items = [(e.path, e.source, e.cls, e.exists) for e in entries
             if e.cls != "script" and isinstance(e.path, str) and os.path.isabs(e.path)
             and not (e.cls == "stdlib" and not e.exists)]
    for f in files:
        for line in f.lines:
            if line.kind == "path" and line.runs is not False and "\0" not in line.directory:
                line.writers = line_checks.writers(line.directory, euid, cache)
                items.append((line.directory, f.path, "pth", line.exists))
    for path, source, cls, exists in items:
        key = pathfacts.real(path)
        if key in seen:
            continue
        seen.add(key)
        out.append(PathDirectory(path, source, cls, exists,
                                 line_checks.writers(path or os.curdir, euid, cache)))
    return out


def odd_names(files):
    """``startup-file-odd-name``: a ``.pth`` or ``.start`` file whose name holds a line
    break, another control character or bytes that are not UTF-8 (``surrogateescape``):
    made to forge a report's lines or hide from a listing; ``site`` reads it as any other."""
    return [Finding(
        "startup-file-odd-name", "medium",
        "%s has a name holding control characters or bytes that are not UTF-8 (%r): site "
        "reads it like any other .%s file at every start of this interpreter; such a name "
        "is made to hide from listings or forge report lines: find out who put it there" % (
            f.path, os.path.basename(f.path), f.kind), file=f.path)
        for f in files if f.kind in ("pth", "start") and not os.path.basename(f.path).isprintable()]


def collect():
    """``check`` collector: the ``startup`` section and its findings."""
    site = sys.modules.get("site")
    pep829 = site is not None and pep829_site(site)
    started = not sys.flags.no_site or line_checks.STATIC is not None  # emulated
    section = StartupSection(bool(site is not None and started), pep829)
    if not section.site:
        return "startup", section, []
    section.user_site = (site_dirs(site)[0] if getattr(site, "ENABLE_USER_SITE", False)
                         else None)
    files = read_startup_files(site)
    memo = line_checks.LineMemo(private_cache.DIRECTORY)
    judge(files, pep829, memo)
    files += customize_files(site, memo)
    provenance.assign_owners(files)
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    section.path_directories = path_directories(files, euid)
    section.files = files
    found = findings(files, section.path_directories, euid, pep829, memo) + odd_names(files)
    memo.save()
    words = settings.startup_acknowledgements(pathfacts.deployment_dirs(sys.path))
    if words or PIN_ALL:
        from . import acknowledgements  # reason: only where there is one to read, or to pin

        section.acknowledgements, more = acknowledgements.apply(files, found, words, PIN_ALL)
        found += more
    return "startup", section, found


#: ``sitewarden acknowledge``'s probe (``probe.runner``, kind ``pins``): each finding an
#: acknowledgement lifts carries the word that would (``acknowledgements.apply``).
PIN_ALL = False
