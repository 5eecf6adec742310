"""What ``site.main()`` of this interpreter would make of ``sys.path``, found by reading only.

``check`` wants to audit startup code without running it: its probe runs with ``-S``, so
no ``.pth`` import line, ``.start`` entry point, ``sitecustomize`` or ``usercustomize``
runs, and :func:`emulate` rebuilds what a normal start would give (``sys.path``,
``sys.prefix``, ``sys.exec_prefix``, the user site's state) as this CPython version's
``site`` does it: ``removeduppaths``, ``venv`` (3.14+: the prefixes come from getpath),
the user site, ``getsitepackages`` of the target's own ``site`` (a distribution's patch
included), each directory's ``.pth`` files (3.15+: PEP 829's batch, ``.start`` files)
read by :mod:`.reader`.  Code is recorded, never run: ``check``'s probe starts its
target without ``site`` (:mod:`..probe.static_check`) and describes this outcome.  Module level:
``os``, ``sys`` and sitewarden's reader.
"""

import os
import sys

from ..facts import reader
from . import line_checks

#: The note of every recorded piece of startup code.
NOT_APPLIED = "runs code at startup: not applied"


class StaticSite:
    """The outcome of a normal start, emulated; :meth:`apply` makes it this process's."""

    def __init__(self):
        self.path = []  # sys.path right after site.main()
        self.path0 = None  # what the interpreter prepends after site (script dir, '')
        self.prefix = self.exec_prefix = None
        self.prefixes = []  # site.PREFIXES
        self.venv = None  # the pyvenv.cfg site reads, or None
        self.system_site = None  # include-system-site-packages (a venv's)
        self.home = None  # its ``home`` key: site sets sys._home
        self.enable_user_site = None  # site.ENABLE_USER_SITE
        self.user_base = self.user_site = None
        self.site_dirs = []  # the site directories site processes, in order
        self.files = []  # the startup files site reads, in order
        self.added = []  # [startup file or None (a site directory), directory] appended
        self.code = []  # {"kind", "file", "line", "text", "runs", "note"}: not run
        self.errors = []  # {"file", "error"}: what a normal start reports (or dies of)
        self.sitecustomize = self.usercustomize = None  # the file each import would load
        self._site = None

    @property
    def full_path(self):
        """``sys.path`` as the program sees it: :attr:`path0` first, when there is one."""
        return ([self.path0] if self.path0 is not None else []) + self.path

    def apply(self):
        """Make this process look started normally (nothing run): ``sys.path``, the
        prefixes and ``site``'s globals, so code reading them sees a normal start; the
        judges of startup code (:mod:`.line_checks`) then know nothing ran."""
        line_checks.STATIC = self
        sys.path[:] = self.full_path
        sys.prefix, sys.exec_prefix = self.prefix, self.exec_prefix
        sys._home = self.home
        site = self._site
        site.PREFIXES = list(self.prefixes)
        site.ENABLE_USER_SITE = self.enable_user_site
        site.USER_BASE, site.USER_SITE = self.user_base, self.user_site

    def as_json(self):
        out = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        out["full_path"] = self.full_path
        return out


def emulate(site_module=None, path=None, path0=None):
    """A :class:`StaticSite`: what ``site.main()`` would do in this ``-S`` process, the
    process left as it is (``site``'s and ``sys``'s values borrowed for a call are put
    back; ``sys.path_importer_cache`` keeps the finders of the entries it searched).
    ``site_module``: the target's ``site``, imported, not run (default: the one
    in ``sys.modules``); ``path``: the ``sys.path`` site starts from (default: this
    one, minus the entry the interpreter puts first after site: -c's ``''``); with
    ``path``, ``path0`` is that entry, or None (``-P``, ``-I``)."""
    site = site_module if site_module is not None else sys.modules.get("site")
    if site is None:
        raise RuntimeError("import site first: python -S imports none (and runs no main())")
    s = StaticSite()
    s._site = site
    s.path0 = path0
    if path is None:
        if not sys.flags.no_site:
            raise RuntimeError("site.main() already ran: sys.path is no longer where it starts")
        path = list(sys.path)
        # the script's directory ('' for -c) comes after site, unless -P (or -I) says none
        if not getattr(sys.flags, "safe_path", sys.flags.isolated) and path:
            s.path0 = path.pop(0)
    reader.reset()  # a new probe run: each startup file read once from here on
    version = sys.version_info[:2]
    files = _Files(site, s, version)
    r = _Start(site, s, version, files)
    r.removeduppaths(path)
    r.venv()
    if s.enable_user_site is None:
        s.enable_user_site = site.check_enableusersite()
    r.user_site()
    r.site_packages()
    files.finish()
    _customize(s)
    return s


def _error(s, path, error):
    """What a normal start reports about ``path`` (or dies of): ``error``, a text or an
    exception."""
    if not isinstance(error, str):
        error = "%s: %s" % (type(error).__name__, error)
    s.errors.append({"file": path, "error": error})


class _Start:
    """One emulated ``site.main()`` up to its site directories: ``removeduppaths``, the
    venv's ``pyvenv.cfg`` and prefixes, the user site, ``getsitepackages``; each site
    directory's files go to :class:`_Files`."""

    def __init__(self, site, s, version, files):
        self.site, self.s, self.version, self.files = site, s, version, files
        s.enable_user_site = site.ENABLE_USER_SITE  # None, unless someone set it
        s.prefixes = list(site.PREFIXES)
        s.prefix, s.exec_prefix = sys.prefix, sys.exec_prefix

    def removeduppaths(self, path):
        """Absolute, each once (by ``normcase``); 3.15+ starts its batch with an empty
        ``known_paths`` (the duplicates check is against ``sys.path`` itself)."""
        known = set()
        for entry in path:
            entry, case = self.site.makepath(entry)
            if case not in known:
                self.s.path.append(entry)
                known.add(case)
        if not self.files.pep829:
            self.files.known = known

    def venv(self):
        """``pyvenv.cfg`` beside the executable or one up: the venv's site directories
        first; the prefixes (set here before 3.14, by getpath since); no user site
        without the system's site directories."""
        s = self.s
        executable = sys.executable
        if sys.platform == "darwin" and "__PYVENV_LAUNCHER__" in os.environ:
            executable = os.environ["__PYVENV_LAUNCHER__"]
        exe_dir = os.path.dirname(os.path.abspath(executable))
        site_prefix = os.path.dirname(exe_dir)
        confs = [c for c in (os.path.join(exe_dir, "pyvenv.cfg"),
                             os.path.join(site_prefix, "pyvenv.cfg")) if os.path.isfile(c)]
        if not confs:
            return
        s.venv = confs[0]
        s.system_site = self._read_cfg(s.venv) == "true"
        if self.version < (3, 14):
            s.prefix = s.exec_prefix = site_prefix
        elif (sys.prefix, sys.exec_prefix) != (site_prefix, site_prefix):
            _error(s, s.venv, "RuntimeWarning: Unexpected value in sys.prefix or "
                   "sys.exec_prefix, expected %s" % site_prefix)
        self.add_site_packages([s.prefix])
        if self.version < (3, 14):
            if s.system_site:
                s.prefixes.insert(0, s.prefix)
            else:
                s.prefixes = [s.prefix]
        elif s.system_site:
            s.prefixes += [sys.base_prefix, sys.base_exec_prefix]
        if not s.system_site:
            s.enable_user_site = False

    def _read_cfg(self, path):
        """``include-system-site-packages`` of a ``pyvenv.cfg`` (lower case; default
        ``true``), its ``home`` kept; what reading it raises is the start's error."""
        system_site = "true"
        text, why = reader.read_text(path)  # the one reader: never waits on a FIFO
        if text is None:  # site raises (or waits): the start fails
            _error(self.s, path, why)
            return system_site
        for line in text.split("\n"):
            if "=" in line:
                key, _, value = line.partition("=")
                key, value = key.strip().lower(), value.strip()
                if key == "include-system-site-packages":
                    system_site = value.lower()
                elif key == "home":
                    self.s.home = value
        return system_site

    def user_site(self):
        """``getusersitepackages()`` of the target's ``site`` (its globals put back): the
        directory, read when enabled and a directory."""
        site, s = self.site, self.s
        saved = site.ENABLE_USER_SITE, site.USER_BASE, site.USER_SITE
        try:
            site.ENABLE_USER_SITE = s.enable_user_site
            user_site = site.getusersitepackages()
            s.enable_user_site = site.ENABLE_USER_SITE  # 3.10+: False without a home
            s.user_base, s.user_site = site.USER_BASE, user_site
        finally:
            site.ENABLE_USER_SITE, site.USER_BASE, site.USER_SITE = saved
        if s.enable_user_site and os.path.isdir(user_site):
            self.files.addsitedir(user_site)

    def site_packages(self):
        self.add_site_packages(self.s.prefixes)

    def add_site_packages(self, prefixes):
        """``getsitepackages(prefixes)`` of the target's ``site`` (Debian's and the like
        ask ``sys.prefix`` whether this is a venv: it holds the emulated one meanwhile)."""
        s, saved = self.s, (sys.prefix, sys.exec_prefix)
        try:
            sys.prefix, sys.exec_prefix = s.prefix, s.exec_prefix
            dirs = list(self.site.getsitepackages(list(prefixes)))
        finally:
            sys.prefix, sys.exec_prefix = saved
        for sitedir in dirs:
            if os.path.isdir(sitedir):
                self.files.addsitedir(sitedir)


class _Files:
    """The startup files of the emulated ``site.main()``, read by :mod:`.reader` as this
    version's ``site`` reads them: the ``known_paths`` of 3.8-3.14, the batch of 3.15+."""

    def __init__(self, site, s, version):
        self.site, self.s, self.version = site, s, version
        self.pep829 = reader.pep829_site(site)
        self.dots = reader._skips_dot_files(site)
        # 3.13+ site skips files flagged hidden, where a stat has the flags (BSD, Windows)
        self.hidden = version >= (3, 13) and (hasattr(os.stat_result, "st_flags") or hasattr(
            os.stat_result, "st_file_attributes"))
        self.known = set()
        self.processed = set()  # 3.15+: the site directories read in this batch
        self.entries = []  # 3.15+: [file or None, directory], appended by finish()
        self.imports = {}  # 3.15+: .pth path -> its import line records
        self.starts = {}  # 3.15+: .start path -> its entry point records

    def addsitedir(self, sitedir):
        """The directory, then its ``.pth`` files by sorted name (3.15+: then its
        ``.start`` files, and each directory once per batch)."""
        sitedir, case = self.site.makepath(sitedir)
        if self.pep829:
            if case in self.processed:
                return
            self.processed.add(case)
            if case not in self.known:
                self.known.add(case)
                self.entries.append([None, sitedir])
        elif case not in self.known:
            self.s.path.append(sitedir)
            self.s.added.append([None, sitedir])
            self.known.add(case)
        self.s.site_dirs.append(sitedir)
        try:
            names = os.listdir(sitedir)
        except OSError:
            return
        for name in reader.pth_names(names, self.dots):
            self.read_pth(sitedir, name)
        if self.pep829:
            for name in sorted(n for n in names if n.endswith(".start")
                               and not n.startswith(".")):
                self.read_start(sitedir, name)

    def lines(self, sitedir, name, start=False):
        """The file's lines as site gets them, or None where site reads none."""
        path = os.path.join(sitedir, name)
        if self.hidden and _hidden(path):
            return path, None
        read = reader.read_file(path, self.version, start)
        if read is None or read[1].file_type in reader.UNOPENED:
            return path, None  # site cannot open it either: skipped
        lines, facts = read
        if facts.file_type:
            _error(self.s, path, "a %s: not read (a normal start reads it, or blocks)"
                   % facts.file_type)
        elif lines is None:
            _error(self.s, path, "not read: over %d bytes" % reader.READ_LIMIT)
        elif facts.decode_error and start:  # PEP 829: a .start not UTF-8 is skipped
            _error(self.s, path, facts.decode_error + " (skipped)")
            return path, None
        elif facts.decode_error:  # after its readable lines, site fails
            _error(self.s, path, facts.decode_error + " (the start fails)")
        self.s.files.append(path)
        return path, lines or []

    def read_pth(self, sitedir, name):
        """``addpackage`` (3.15+: ``_read_pth_file``): path lines joined to the directory,
        kept if new (before 3.15 and in :meth:`finish`: if they exist; one holding a NUL
        never does); import lines recorded."""
        path, lines = self.lines(sitedir, name)
        for n, line in enumerate(lines or (), 1):
            if self.pep829:
                line = line.strip()
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith(("import ", "import\t")):
                record = self.record("import", path, n, line)
                if self.pep829:
                    self.imports.setdefault(path, []).append(record)
                else:
                    self.s.code.append(record)
                continue
            try:
                directory, case = self.site.makepath(sitedir, line.rstrip())
            except (TypeError, ValueError) as exc:  # 3.15+ skips the line, older ones the file
                _error(self.s, path, exc)
                if self.pep829:
                    continue
                break
            if self.pep829:
                if case not in self.known:
                    self.entries.append([path, directory])
                    self.known.add(case)
            elif case not in self.known and _exists(directory):
                self.s.path.append(directory)
                self.s.added.append([path, directory])
                self.known.add(case)

    def read_start(self, sitedir, name):
        """PEP 829: a ``.start`` file read turns off its ``.pth``'s import lines, even
        empty; its entry points are recorded."""
        path, lines = self.lines(sitedir, name, start=True)
        if lines is None:
            return
        points = self.starts.setdefault(path, [])
        for n, line in enumerate(lines, 1):
            line = line.strip()
            if line and not line.startswith("#"):
                points.append(self.record("entry-point", path, n, line))

    def finish(self):
        """3.15+'s ``process()``: the paths first (existing ones, each once on
        ``sys.path``), then the import lines a ``.start`` does not turn off, then the
        entry points."""
        if not self.pep829:
            return
        s = self.s
        for source, directory in self.entries:
            if directory in s.path:
                continue
            if source is None or _exists(directory):
                s.path.append(directory)
                s.added.append([source, directory])
            else:
                _error(s, source, "%s does not exist; skipping sys.path append" % directory)
        for pth, records in self.imports.items():
            start = pth[:-len(".pth")] + ".start"
            for record in records:
                if start in self.starts:
                    record.update(runs=False, note="turned off by %s" % start)
                s.code.append(record)
        for records in self.starts.values():
            s.code.extend(records)

    def record(self, kind, path, n, text):
        runs = kind != "import" or self.version < (3, 18)
        note = NOT_APPLIED if runs else "ignored by Python 3.18+"
        if not self.pep829:
            note += "; if it fails, site ignores the rest of the file"
        return {"kind": kind, "file": path, "line": n, "text": text, "runs": runs,
                "note": note}


def _customize(s):
    """Which file ``import sitecustomize`` (and, with the user site, ``usercustomize``)
    would load, by the ``PathFinder`` of ``sys.meta_path`` on the emulated path (the
    script's directory is not on it yet); nothing imported.  The finders it makes for
    the emulated entries stay in ``sys.path_importer_cache``: this ``-S`` process goes on
    with that path (the probe's next lookups list no directory again)."""
    finder = next((f for f in sys.meta_path if getattr(f, "__name__", None) == "PathFinder"
                   and getattr(f, "__module__", "").startswith("_frozen_importlib")), None)
    if finder is None:  # no path-based imports: neither file can load
        return
    for name in ("sitecustomize", "usercustomize"):
        if name == "usercustomize" and not s.enable_user_site:
            continue
        spec = finder.find_spec(name, list(s.path))
        if spec is None:
            continue
        origin = spec.origin if spec.loader is not None else None
        setattr(s, name, origin)
        s.code.append({"kind": name, "file": origin, "line": None, "text": name,
                       "runs": origin is not None, "note": NOT_APPLIED if origin else
                       "a namespace package: no code"})


def _hidden(path):
    """3.13+ ``site`` skips a file flagged hidden (``UF_HIDDEN``, Windows' attribute)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return bool(getattr(st, "st_flags", 0) & 0x8000 or getattr(st, "st_file_attributes", 0) & 2)


def _exists(path):
    try:
        return os.path.exists(path)
    except (TypeError, ValueError):  # a NUL in the line (3.8+'s exists() says False)
        return False
