"""``check``'s inventory of the code a start of the target runs before ``main``.

Every ``.pth`` file ``site`` processes (the user site when enabled, then each site
directory, in ``site``'s order; names sorted, dot files skipped), each line classified
as ``site`` reads it (3.8-3.14: ``addpackage``; 3.15+: PEP 829's ``StartupState``, with
``.start`` entry points and the ``.pth`` import lines a same-named ``.start`` turns off),
then ``sitecustomize`` and ``usercustomize`` (the file imported, links followed).  Each
file gets its owner (:mod:`.owners`) and, for each ``sys.path`` directory (a site
directory, ``PYTHONPATH``, a ``.pth`` path line), who else may write to it (``os.stat``
of it and of its parents: a parent they can write lets them rename it).

Nothing is executed (:mod:`.startup_checks` judges the lines and the directories).
Its records (``StartupSection``, ``StartupFile``, ``StartupLine``, ``Owner``,
``PathDirectory``, ``Writers``) are in :mod:`.startup_records` (the CLI reads them without this
module): one JSON form each, the ``startup`` section of ``check --json``
(``docs/check-schema.md``).  Module level: ``os`` and ``sys``.
"""

import os
import sys

from .. import pathfacts
from . import layout, owners, private_cache, startup_checks
from .records import Finding
from .startup_records import Owner, PathDirectory, StartupFile, StartupLine, StartupSection

#: The sitecustomize hook's block (``cli.deployed.BLOCK_BEGIN``; detect cannot import cli).
SITEWARDEN_BLOCK = "# >>> sitewarden guard >>>"


# ---------------------------------------------------------------- reading as site does


def _pep829(site):
    return hasattr(site, "StartupState")


def _site_dirs(site):
    """``(user site or None, [site directories in site's order])``, existing ones only."""
    user = None
    if getattr(site, "ENABLE_USER_SITE", False):
        try:
            user = site.getusersitepackages()
        except AttributeError:  # an old virtualenv's site.py
            user = None
    try:
        dirs = list(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site.py
        dirs = []
    out, seen = [], set()
    for d in ([user] if user else []) + dirs:
        key = os.path.normcase(os.path.abspath(d))
        if key not in seen and os.path.isdir(d):
            seen.add(key)
            out.append(d)
    return user, out


def _decode(data, version):
    """A ``.pth`` file's text as ``site`` decodes it: 3.13+ UTF-8 (a BOM accepted), else
    the locale encoding (before 3.13: always the locale's)."""
    if version >= (3, 13):
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            pass
    return data.decode(_locale_encoding(), "replace")


def _locale_encoding():
    """``locale.getencoding()`` without ``locale`` (which imports ``re``)."""
    if sys.flags.utf8_mode:
        return "utf-8"
    import _locale  # built in; the locale module would import re for nothing

    get = getattr(_locale, "getencoding", None)  # 3.11+
    try:
        return get() if get else _locale.nl_langinfo(_locale.CODESET) or "utf-8"
    except (AttributeError, ValueError):  # no nl_langinfo (not POSIX)
        return "utf-8"


def _skips_dot_files(site):
    """Does this ``site`` skip ``.pth`` names starting with a dot (3.13, and backports)?"""
    try:
        with open(site.__file__, encoding="utf-8") as f:
            return 'startswith(".")' in f.read()
    except (OSError, TypeError, AttributeError, UnicodeDecodeError):  # no source: by version
        return sys.version_info >= (3, 13)


def _read_lines(path, version, pep829):
    """The file's lines, or None when ``site`` cannot read it (it skips it silently)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        text = _decode(data, version)
    except (LookupError, UnicodeDecodeError):
        return None
    if pep829 and path.endswith(".start"):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None  # site skips a .start that is not UTF-8
    return text.splitlines()


def read_startup_files(site, version=None):
    """Every ``.pth`` (and, on 3.15+, ``.start``) file ``site`` reads, in its order, with
    each line classified; import lines and entry points not yet judged."""
    version = tuple(version or sys.version_info[:2])
    pep829 = _pep829(site)
    dots = _skips_dot_files(site)
    _user, dirs = _site_dirs(site)
    files, known = [], set()
    for sitedir in dirs:
        try:
            names = os.listdir(sitedir)
        except OSError:
            continue
        pths = sorted(n for n in names if n.endswith(".pth") and not (dots and n[:1] == "."))
        starts = sorted(n for n in names if pep829 and n.endswith(".start") and n[:1] != ".")
        start_files, start_paths = [], set()
        for name in starts:
            path = os.path.join(sitedir, name)
            lines = _read_lines(path, version, True)
            if lines is None:
                continue
            start_paths.add(path)
            out = []
            for n, line in enumerate(lines, 1):
                line = line.strip()
                if line:
                    out.append(StartupLine(n, line, "comment" if line.startswith("#")
                                           else "entry-point", runs=not line.startswith("#")))
            start_files.append(StartupFile(path, "start", sitedir, out, realpath=_real_file(path)))
        for name in pths:
            path = os.path.join(sitedir, name)
            lines = _read_lines(path, version, pep829)
            if lines is None:
                continue
            start = path[:-len(".pth")] + ".start"
            disabled = start if start in start_paths else None
            files.append(StartupFile(
                path, "pth", sitedir,
                _pth_lines(sitedir, lines, pep829, version, disabled, known),
                disabled_by=disabled, realpath=_real_file(path)))
        files.extend(start_files)
    return files


def _real_file(path):
    """``os.path.realpath`` of a startup file: its site directory resolved once per report
    (``pathfacts.real``), the file with one ``lstat`` (a link: resolved whole), where a
    ``realpath`` costs one ``lstat`` per component."""
    if os.path.islink(path):
        return os.path.realpath(path)
    head, tail = os.path.split(path)
    return os.path.join(pathfacts.real(head), tail)


def _pth_lines(sitedir, lines, pep829, version, disabled, known):
    out = []
    for n, raw in enumerate(lines, 1):
        line = raw.strip() if pep829 else raw
        if line.startswith("#"):
            out.append(StartupLine(n, line, "comment"))
            continue
        if not line.strip():
            continue
        if line.startswith(("import ", "import\t")):
            runs = disabled is None and version < (3, 18)
            note = ("turned off by %s" % disabled if disabled else
                    None if runs else "ignored by Python 3.18+")
            out.append(StartupLine(n, line, "import", runs=runs, note=note))
            continue
        directory = os.path.abspath(os.path.join(sitedir, line.rstrip()))
        try:
            exists = os.path.exists(directory)
        except (TypeError, ValueError):  # a NUL in the line
            exists = False
        note = None
        key = os.path.normcase(directory)
        if key in known:
            note = "already on sys.path"
        known.add(key)
        out.append(StartupLine(n, line, "path", directory, exists, note=note))
    return out


# ---------------------------------------------------------------- owners


def _sitewarden_own(f):
    name = os.path.basename(f.path)
    if name in ("sitewarden.pth", "sitewarden.start"):
        return os.path.isfile(os.path.join(f.site_dir or "", "sitewarden", "__init__.py"))
    if f.kind == "sitecustomize":
        try:
            with open(f.realpath, encoding="utf-8", errors="replace") as fh:
                return SITEWARDEN_BLOCK in fh.read()
        except OSError:
            return False
    return False


def assign_owners(files):
    """Each file's :class:`Owner` (dpkg first, then a RECORD, then sitewarden's own) and
    known template."""
    wanted = [f.path for f in files if owners.dpkg_candidate(f.path)
              or owners.dpkg_candidate(f.realpath)]
    quiet = [f.path for f in files if f.kind in ("pth", "start") and not f.executable()]
    dpkg = (owners.dpkg_owners(wanted, likely_only=quiet, index_dir=private_cache.DIRECTORY)
            if wanted else {})
    for f in files:
        if f.path in dpkg:
            f.owner = Owner("dpkg", package=dpkg[f.path])
        else:
            dist = owners.record_owner(f.path)
            if dist is not None:
                f.owner = Owner("distribution", distribution=dist.name, version=dist.version,
                                metadata=dist.path, installer=dist.installer)
            elif _sitewarden_own(f):
                f.owner = Owner("sitewarden")
        if f.kind in ("pth", "start"):
            code = [x.text for x in f.lines if x.kind in ("import", "entry-point")]
            f.template = owners.template_of(os.path.basename(f.path), code)


# ---------------------------------------------------------------- findings


def _short(text, n=80):
    return text if len(text) <= n else text[:n - 3] + "..."


def _fix(f):
    if f.owner.kind == "dpkg":
        return ("it belongs to the Debian package %s: reinstall it (apt install --reinstall "
                "%s), or remove it if it stays broken" % (f.owner.package, f.owner.package))
    if f.owner.kind == "distribution":
        return "reinstall or uninstall %s (pip)" % f.owner.distribution
    if f.owner.kind == "sitewarden":
        return "repair sitewarden (sitewarden install, or apt install --reinstall sitewarden)"
    return "remove %s (no package installed it) or correct the line" % f.path


def _failure(f, line, pep829):
    if f.kind in ("sitecustomize", "usercustomize"):
        said = "Error in %s; set PYTHONVERBOSE for traceback: %s" % (f.kind, f.error)
        where = dict(file=f.path, line=None, text=None, error=f.error)
    elif line.kind == "entry-point":
        said = ("Invalid entry point syntax in %s: %r" % (f.path, line.text)
                if line.error.startswith("ValueError") else
                "Error resolving entry point %s from %s: %s" % (line.text, f.path, line.error))
        where = dict(file=f.path, line=line.number, text=line.text, error=line.error)
    else:
        said = ("Error in import line from %s: %s: %s" % (f.path, _short(line.text), line.error)
                if pep829 else "Error processing line %d of %s: %s" % (
                    line.number, f.path, line.error))
        where = dict(file=f.path, line=line.number, text=line.text, error=line.error)
    rest = "" if pep829 or f.kind != "pth" else " (and ignores the rest of the file)"
    return Finding("startup-line-fails", "high",
                   "%s: every start of this interpreter prints this error with a traceback%s; "
                   "%s" % (said, rest, _fix(f)), **where)


def findings(files, directories, euid, pep829):
    out = []
    for f in files:
        if f.error and f.kind in ("sitecustomize", "usercustomize"):
            out.append(_failure(f, None, pep829))
        for line in f.lines:
            if line.error:
                out.append(_failure(f, line, pep829))
            if line.kind == "path" and line.exists is False and line.runs is not False:
                out.append(Finding(
                    "missing-pth-directory", "info",
                    "%s line %d names %s, which does not exist%s" % (
                        f.path, line.number, line.directory,
                        ": Python 3.15+ prints an error about it at every start" if pep829
                        else ""),
                    file=f.path, line=line.number, directory=line.directory))
        code = [x for x in f.executable() if not x.error]  # a failing line is reported as such
        first = code[0] if code else None
        what = ("(line %d: %s)" % (first.number, _short(first.text)) if first
                else "(the whole module)")
        if not (code or (f.kind in ("sitecustomize", "usercustomize") and not f.error)) \
                or f.template or f.owner.kind in ("dpkg", "sitewarden"):
            continue
        lines = [x.number for x in code]
        if f.owner.kind is None:
            out.append(Finding(
                "unowned-startup-code", "medium",
                "%s runs code at every start of this interpreter %s and no package installed "
                "it (no Debian package, no distribution's RECORD lists it): find out what it "
                "does and remove it if nobody should run it (startup files are where "
                "supply-chain payloads live: ATT&CK T1546.018)" % (f.path, what),
                file=f.path, lines=lines))
        elif f.owner.kind == "distribution":
            out.append(Finding(
                "distribution-startup-code", "info",
                "%s, installed by %s, runs code at every start of this interpreter %s" % (
                    f.path, f.owner.text(), what),
                file=f.path, lines=lines, distribution=f.owner.distribution,
                version=f.owner.version))
    for d in directories:
        w = d.writers
        if not w:
            continue
        entry = "sys.path directory %s (%s)" % (d.path, _source_text(d))
        out.append(Finding("writable-path-entry", startup_checks.severity_of(w, euid),
                           startup_checks.writers_text(entry, w, euid), entry=d.path,
                           source=d.source, scope=w.scope, via=w.via, how=w.how,
                           mode="%04o" % w.mode))
    return out


def _source_text(d):
    source = d.source
    if source in (None, "site"):
        return "a site directory" if source else "the standard library"
    if source == "PYTHONPATH":
        return "from PYTHONPATH"
    return "from %s" % source


# ---------------------------------------------------------------- the collector


def judge(files, pep829, memo=None):
    """Set each import line's and entry point's ``error`` (and, before 3.15, stop each
    file at its first error, as ``site`` does: the rest is not processed).  ``memo``: a
    :class:`.startup_checks.LineMemo`."""
    for f in files:
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
                line.error = startup_checks.line_error(line.text, memo)
            elif line.kind == "entry-point":
                line.error = startup_checks.entry_point_error(line.text)
            if line.error and not pep829 and f.kind == "pth":
                failed = line.number


def customize_files(site):
    """``sitecustomize`` (and ``usercustomize`` when the user site is enabled)."""
    out = []
    names = ["sitecustomize"] + (["usercustomize"] if getattr(site, "ENABLE_USER_SITE", False)
                                 else [])
    for name in names:
        path, loaded = startup_checks.customize_file(name)
        if path:
            out.append(StartupFile(path, name, os.path.dirname(path), realpath=_real_file(path),
                                   error=None if loaded else startup_checks.customize_error(path)))
    return out


def path_directories(files, euid):
    """Every ``sys.path`` directory (but the script's) and every ``.pth`` path line's,
    with who else may change it: :class:`PathDirectory` records."""
    cache, seen, out = {}, set(), []
    _facts, entries = layout.current(read_pth=True)
    items = [(e.path, e.source, e.cls, e.exists) for e in entries
             if e.cls != "script" and isinstance(e.path, str) and os.path.isabs(e.path)
             and not (e.cls == "stdlib" and not e.exists)]
    for f in files:
        for line in f.lines:
            if line.kind == "path" and line.runs is not False:
                line.writers = startup_checks.writers(line.directory, euid, cache)
                items.append((line.directory, f.path, "pth", line.exists))
    for path, source, cls, exists in items:
        key = pathfacts.real(path)
        if key in seen:
            continue
        seen.add(key)
        out.append(PathDirectory(path, source, cls, exists,
                                 startup_checks.writers(path or os.curdir, euid, cache)))
    return out


def collect():
    """``check`` collector: the ``startup`` section and its findings."""
    site = sys.modules.get("site")
    pep829 = site is not None and _pep829(site)
    section = StartupSection(bool(site is not None and not sys.flags.no_site), pep829)
    if not section.site:
        return "startup", section, []
    section.user_site = (_site_dirs(site)[0] if getattr(site, "ENABLE_USER_SITE", False)
                         else None)
    files = read_startup_files(site)
    memo = startup_checks.LineMemo(private_cache.DIRECTORY)
    judge(files, pep829, memo)
    memo.save()
    files += customize_files(site)
    assign_owners(files)
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    section.path_directories = path_directories(files, euid)
    section.files = files
    return "startup", section, findings(files, section.path_directories, euid, pep829)
