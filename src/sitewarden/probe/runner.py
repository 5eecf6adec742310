"""Facts about an interpreter, learned by running code inside it.

The CLI never guesses a target's layout from outside: like uv and virtualenv,
it runs this module in the target from a private copy of sitewarden and reads JSON
from a pipe of its own.  ``facts`` (``-E -S``) and ``check``'s ``static`` probe
(``-I -S``, :data:`STATIC_BOOTSTRAP`) start the target without ``site``: none of its
startup code runs, nor anything of ``PYTHONPATH`` or the working directory.  ``full``
and ``check`` (:data:`BOOTSTRAP`) run after a normal start,
kept as the tests' reference for what a start does.
Must run on CPython 3.8+ with only the standard library; like every module that
can run inside a target, it imports only ``os`` and ``sys`` at module level.
"""

import os
import sys

from .. import _swallowed
from .jsonout import dumps

#: Version of the facts format, checked by the CLI.
FACTS_FORMAT = 1


def _sitecustomize_location(search_path):
    """The file ``import sitecustomize`` would load, searched on the site-enabled path."""
    finder = sys.modules["_frozen_importlib_external"].PathFinder  # loaded at startup

    try:
        spec = finder.find_spec("sitecustomize", search_path)
    except Exception:
        _swallowed("locating sitecustomize")
        return None
    if spec is None:
        return None
    return spec.origin


def venv_config():
    """The ``pyvenv.cfg`` that makes this interpreter a virtual environment's, or None.

    PEP 405, as ``site.venv`` finds it: beside the executable or one directory up, the
    executable's path as started (a venv's python is a link to its base).  ``site``
    then sets ``sys.prefix``; the facts probe runs without ``site`` (``-S``), and must
    say "virtual environment" where a normal start (``check``'s probe) does."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable or ""))
    for d in (exe_dir, os.path.dirname(exe_dir)):
        path = os.path.join(d, "pyvenv.cfg")
        if os.path.isfile(path):
            return path
    return None


def facts():
    """Install-relevant facts of this interpreter: a :class:`~.records.ProbeFacts`."""
    import site  # not at module level: the probe imports the standard library

    from ..facts import marker  # likewise: only once _stdlib_first is in place
    from ..facts.records import MarkerState, ProbeFacts  # (and sitewarden's own modules)

    # A start with site reads pyvenv.cfg and sets sys.prefix (site.venv); the -S facts
    # probe sees the base's prefix, and asks the same file.
    venv = bool(marker.in_virtualenv() or (sys.flags.no_site and venv_config() is not None))
    scheme = marker.default_scheme()
    paths = marker.scheme_paths(scheme)
    try:
        user_site = site.getusersitepackages()
    except AttributeError:  # an old virtualenv's site.py
        user_site = None
    try:
        site_dirs = list(site.getsitepackages())
    except AttributeError:  # old virtualenv's site.py had no getsitepackages
        site_dirs = []
    search_path = [p for p in sys.path if p] + [d for d in site_dirs if d not in sys.path]
    if user_site and user_site not in search_path:
        search_path.insert(0, user_site)
    return ProbeFacts.make(
        format=FACTS_FORMAT,
        implementation=sys.implementation.name,
        version=list(sys.version_info[:3]),
        version_string=sys.version.split()[0],
        executable=sys.executable,
        prefix=sys.prefix,
        base_prefix=getattr(sys, "base_prefix", sys.prefix),
        virtualenv=venv,
        scheme=scheme,
        purelib=paths.get("purelib"),
        platlib=paths.get("platlib"),
        stdlib=paths.get("stdlib"),
        scripts=paths.get("scripts"),
        site_dirs=site_dirs,
        user_site=user_site,
        user_site_enabled=bool(site.check_enableusersite()),
        sitecustomize=_sitecustomize_location(search_path),
        cache_tag=sys.implementation.cache_tag,
        marker=MarkerState.read(venv=venv),
        uid=os.getuid() if hasattr(os, "getuid") else None,
    )


#: What each probe imports of sitewarden (see _load_runtime): what it uses, no more (each
#: module loaded costs about 0.8M instructions).  ``_stdlib_names`` serves 3.8 and 3.9 only.
_STDLIB_NAMES = ("_stdlib_names",) if sys.version_info < (3, 10) else ()
_CHECK_MODULES = """facts.marker probe.check detect.layout detect.pathcheck detect.shadowing
detect.cases detect.shadowscan facts.records facts.distinfo facts.metadata detect.specs detect.emit
audit.inventory audit.findings facts.reader audit.startup_files audit.line_checks
facts.startup_records audit.provenance audit.analysis audit.prover audit.prover_gate
audit.prover_values audit.prover_tables audit.proof_checks audit.own_runtime
audit.templates audit.capabilities facts.owners facts.integrity facts.private_cache
audit.site_emulation probe.static_check pathfacts facts.distribution"""
_RUNTIME = {
    "facts": ("facts.marker", "facts.records", "pathfacts") + _STDLIB_NAMES,
    "check": tuple(_CHECK_MODULES.split()) + _STDLIB_NAMES,
}
_RUNTIME.update(dict.fromkeys(("full", "static", "report", "shadows", "status", "pins"),
                             _RUNTIME["check"]))
#: What each static kind collects (None: everything): an installer's shadow report needs
#: the shadowing section alone; ``status``, the startup files (whether they load the guard).
_SECTIONS = {"shadows": ("shadowing",), "status": ("startup",)}
#: The probes that start the target without ``site`` (``STATIC_BOOTSTRAP``); ``pins``:
#: ``static`` for ``sitewarden acknowledge``, each finding it may lift with its pin.
STATIC_KINDS = ("static", "status", "report", "shadows", "pins")


def _load_runtime(names, payload=None, kind=None):
    """Import the modules the probe will use: from the payload's bundle of their code
    (:class:`_Bundle`) when there is one, else one by one, writing their bytecode into
    the payload (the CLI's private cache: compiled once per interpreter, so later probes
    skip the compiler), whatever ``PYTHONDONTWRITEBYTECODE`` says, and then the bundle
    for the next probe.  Only sitewarden's own modules are imported here, and what they
    import at module level is loaded already (``os`` and ``sys``), so nothing is
    written anywhere else."""
    saved = sys.dont_write_bytecode
    report = kind in ("report", "shadows")  # an installer's: nothing written, nothing kept
    sys.dont_write_bytecode = saved if report else False
    # (private_cache's bytecode written too)
    bundle = _Bundle.read(payload, None if report else kind)
    if bundle is not None:
        sys.meta_path.insert(0, bundle)
    loaded = set(sys.modules)
    try:
        for name in names:
            __import__("sitewarden." + name)
    except Exception:
        _swallowed("caching the bytecode of sitewarden.%s" % (name,))
    finally:
        sys.dont_write_bytecode = saved
        if bundle is not None:
            sys.meta_path.remove(bundle)
    if (bundle is None or bundle.missed) and not report:
        _Bundle.write(payload, kind, [m for m in sys.modules if m not in loaded])


class _Bundle:
    """The code of the modules a probe of one kind loads, kept in its payload (the CLI's
    private cache) as one file per interpreter bytecode format: one read and one
    ``marshal.loads`` instead of a finder's search, a ``stat`` and a read of each of
    ~20 files (~2.9M instructions on 3.15).  First on ``sys.meta_path`` while
    :func:`_load_runtime` imports; each module gets the spec the path finder would
    give it (its file, its bytecode path, its package's directory), so that nothing
    else tells it apart.  The payload's sources never change (its name is their
    stamp); the bundle is written from bytecode checked against them, is kept and read
    by ``private_cache`` (as marshal data), and is ignored when it is not one."""

    #: Bumped when the file's layout changes.
    FORMAT = 1

    def __init__(self, payload, modules):
        self.payload = payload
        self.modules = modules  # name -> (path relative to the payload, package?, code)
        self.missed = False  # a module of the kind was not in it: written again

    @classmethod
    def path(cls, payload, kind):
        ext = sys.modules["_frozen_importlib_external"]  # loaded at startup
        return os.path.join(payload, "probe-modules-%s-%d-%s-%s" % (
            kind, cls.FORMAT, sys.implementation.cache_tag, ext.MAGIC_NUMBER.hex()))

    @classmethod
    def read(cls, payload, kind):
        """The payload's bundle for ``kind``, or None (none yet, or not one)."""
        if payload is None or kind is None:
            return None
        private_cache = _private_cache()
        if private_cache.private_directory(payload) is None:
            return None
        modules = private_cache.load(cls.path(payload, kind))
        if type(modules) is not dict:
            return None
        code_type = type(_checked_bytecode.__code__)
        for name, entry in modules.items():
            if not (type(name) is str and name.startswith("sitewarden.")
                    and type(entry) is tuple and len(entry) == 3
                    and type(entry[0]) is str and not os.path.isabs(entry[0])
                    and ".." not in entry[0].split("/") and type(entry[1]) is bool
                    and type(entry[2]) is code_type):
                return None
        return cls(payload, modules)

    def find_spec(self, fullname, path=None, target=None):
        entry = self.modules.get(fullname)
        if entry is None:
            if fullname.startswith("sitewarden."):
                self.missed = True
            return None
        ext = sys.modules["_frozen_importlib_external"]  # loaded at startup
        return ext.spec_from_file_location(
            fullname, os.path.join(self.payload, entry[0]), loader=self,
            submodule_search_locations=[] if entry[1] else None)

    def create_module(self, spec):
        return None  # the default module

    def exec_module(self, module):
        exec(self.modules[module.__name__][2], module.__dict__)

    @classmethod
    def write(cls, payload, kind, names):
        """Keep the code of the sitewarden modules ``names`` loaded from the payload, from
        their bytecode when it matches their source, for the next probe of ``kind``."""
        if payload is None or kind is None:
            return
        try:
            private_cache = _private_cache()
            if private_cache.private_directory(payload) is None:
                return
            ext = sys.modules["_frozen_importlib_external"]  # loaded at startup
            marshal = sys.modules["marshal"]  # loaded at startup
            top = os.path.join(payload, "")
            modules = {}
            for name in names:
                spec = getattr(sys.modules.get(name), "__spec__", None)
                origin = getattr(spec, "origin", None)
                if not (name.startswith("sitewarden.") and isinstance(origin, str)
                        and origin.startswith(top) and origin.endswith(".py")):
                    continue
                code = _checked_bytecode(ext, marshal, origin)
                if code is None:
                    return  # not compiled where a probe can read it: no bundle
                modules[name] = (origin[len(top):].replace(os.sep, "/"),
                                 spec.submodule_search_locations is not None, code)
            private_cache.keep(cls.path(payload, kind), modules)
        except Exception:
            _swallowed("keeping the probe's modules in one file (each is imported)")


def _private_cache():
    from ..facts import private_cache  # imports os, pathfacts (bytecode written: _load_runtime)

    return private_cache


def _checked_bytecode(ext, marshal, source):
    """The code in ``source``'s timestamp-checked bytecode file when it matches the
    source's modification time and size, else None."""
    try:
        data = _private_cache().read(ext.cache_from_source(source), private=False)
        st = os.stat(source)
    except OSError:
        return None
    if data is None or data[:16] != _bytecode_header(ext, st):
        return None
    return marshal.loads(data[16:])


def _bytecode_header(ext, st):
    """The header of timestamp-checked bytecode for a source whose ``stat`` is ``st``
    (PEP 552: magic number, flags 0, modification time, size)."""
    return b"".join((ext.MAGIC_NUMBER, (0).to_bytes(4, "little"),
                     (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little"),
                     (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")))


def _cache_vendored_bytecode():
    """Write the bytecode of the vendored ``packaging`` (and of ``facts.vendored``, its
    door) into the payload once, compiling without importing.  A check imports them
    only for an environment marker or a specifier, after :func:`_stdlib_first`; under
    ``PYTHONDONTWRITEBYTECODE`` (common in container images) every such check would
    compile them again (~90M instructions).  Not imported here: packaging's
    standard-library imports must not write bytecode where the user said none.
    ``_vendor/__init__`` is written last: found, the rest is done."""
    ext = sys.modules["_frozen_importlib_external"]  # loaded at startup
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    vendor = os.path.join(package, "_vendor")
    last = os.path.join(vendor, "__init__.py")
    try:
        if not os.path.isfile(last) or os.path.exists(ext.cache_from_source(last)):
            return
        import marshal  # built in

        sources = [os.path.join(d, n) for d, _dirs, names in os.walk(vendor)
                   for n in sorted(names) if n.endswith(".py")]
        sources.append(os.path.join(package, "facts", "vendored.py"))
        for path in sorted(sources, key=lambda p: p == last):
            _write_bytecode(ext, marshal, path)
    except Exception:
        _swallowed("caching the vendored packaging's bytecode (compiled at import)")


def _write_bytecode(ext, marshal, path):
    """``path``'s timestamp-checked bytecode, where importing it would look (PEP 552)."""
    st = os.stat(path)
    source = _private_cache().read(path, private=False)
    if source is None:
        return
    data = _bytecode_header(ext, st) + marshal.dumps(compile(source, path, "exec",
                                                             dont_inherit=True))
    cached = ext.cache_from_source(path)
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    _private_cache().write(cached, data, 0o666)  # beside it, renamed; the umask applies


class _StdlibFirst:
    """First on ``sys.meta_path`` while a probe runs: a standard-library module (and
    ``sysconfig``'s ``_sysconfigdata_*``) is taken from the standard library's own
    ``sys.path`` entries before anything ahead of them is asked.  ``check`` reports a
    ``re.py`` in the working directory or on ``PYTHONPATH``; it must neither die of
    it nor run it, whenever the probe imports the module (``re``: only to parse a
    marker or a requirement with an environment marker).  Built-in and frozen
    modules are left to their own finders."""

    def __init__(self, entries, names):
        self.entries = entries
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or not (fullname in self.names
                                    or fullname.startswith("_sysconfigdata")):
            return None
        imp = sys.modules["_imp"]  # built in, loaded at startup
        if imp.is_builtin(fullname) or imp.is_frozen(fullname):
            return None
        external = sys.modules["_frozen_importlib_external"]  # loaded at startup
        return external.PathFinder.find_spec(fullname, self.entries)


def _stdlib_first():
    """Put :class:`_StdlibFirst` first on ``sys.meta_path`` (the probe's process only)."""
    from ..pathfacts import is_stdlib_entry, stdlib_names  # after _load_runtime: bytecode cached

    entries = [e for e in sys.path if is_stdlib_entry(e)]
    if entries:
        sys.meta_path.insert(0, _StdlibFirst(entries, frozenset(stdlib_names())))


def _sysconfig_without_threading():
    """Import ``sysconfig`` (the scheme paths every probe asks) with the one thing it takes
    of ``threading`` (3.12+: ``threading.RLock()`` for its lock, at module level, nothing
    else): ``_thread.RLock``, the class ``threading.RLock`` makes.  Importing ``threading``
    costs a probe ~4.2M instructions on 3.15; the probe starts no thread.  The stand-in is
    taken off ``sys.modules`` at once: whoever imports ``threading`` later gets the real
    one; asked for anything else (a later ``sysconfig``'s), it imports the real one and
    answers with its attribute.  Nothing done when either module is loaded already or the
    import fails (the caller's own import then says why)."""
    if sys.version_info < (3, 12) or "sysconfig" in sys.modules or "threading" in sys.modules:
        return
    thread = sys.modules.get("_thread")  # built in, loaded at startup
    if thread is None or not hasattr(thread, "RLock"):
        return
    stand_in = type(sys)("threading")
    stand_in.RLock = thread.RLock

    def real(name):  # anything else of it (a later sysconfig's): the real module's
        if sys.modules.get("threading") is stand_in:
            del sys.modules["threading"]
        return getattr(__import__("threading"), name)

    stand_in.__getattr__ = real  # PEP 562: asked for what the module lacks
    sys.modules["threading"] = stand_in
    try:
        __import__("sysconfig")  # the standard library's (_StdlibFirst is in place)
    except Exception:  # its caller imports it again, with threading, and fails as it would
        _swallowed("importing sysconfig without threading (imported again, with it)")
    finally:
        if sys.modules.get("threading") is stand_in:
            del sys.modules["threading"]


def main(argv=None, startup=None, report_fd=None, payload=None, start=None):
    """``facts`` (run as ``-E -S``), ``static`` (``-S``: facts, the report and whether a
    normal start would load the guard, all of a normal start emulated, see
    :mod:`.static_check`; ``start``: ``(sys.path before site, the -c entry)`` as
    :data:`STATIC_BOOTSTRAP` found them; ``status``: the same with the startup section
    alone, for ``status``; ``report``: the same for an installer's report,
    run from the deployed runtime, which it writes nothing into), or, after a normal
    start, ``check`` (the
    report) or ``full``: facts, report and ``startup`` (whether the start loaded the
    guard, as BOOTSTRAP saw it before taking the guard off ``sys.meta_path``).  The JSON
    goes to the file descriptor ``report_fd`` (the CLI's pipe), else to stdout.
    ``payload``: the directory the probe runs from (the CLI's private cache), where a
    check keeps what the next one can reuse (:mod:`.private_cache`)."""
    argv = sys.argv[1:] if argv is None else argv
    kind = argv[0] if argv else "facts"
    _load_runtime(_RUNTIME.get(kind, ()), payload,
                  ("check" if kind in ("full", "static", "status", "pins") else kind)
                  if kind in _RUNTIME else None)
    if kind not in ("facts", "report", "shadows"):
        _cache_vendored_bytecode()
    _stdlib_first()
    _sysconfig_without_threading()
    if kind not in ("facts", "check", "full") + STATIC_KINDS:
        raise SystemExit("unknown probe %r" % (kind,))
    if kind == "facts":
        write_report(dumps(facts().as_json(), indent=None), report_fd)
        return
    from . import check, static_check  # after _load_runtime: bytecode cached

    private_cache = _private_cache()

    # report: an installer's (guard.startup_report), from the deployed runtime: nothing kept
    private_cache.DIRECTORY = payload if kind not in ("report", "shadows") else None
    if kind in STATIC_KINDS:
        data = static_check.report(start[0], start[1], facts, _SECTIONS.get(kind),
                                   kind == "pins")
    else:
        report = check.collect().as_json()
        data = report if kind == "check" else {"facts": facts().as_json(), "check": report,
                                               "startup": startup}
    write_report(dumps(data, indent=None), report_fd)


def write_report(text, fd):
    """``text`` on the file descriptor ``fd``, all of it; on stdout when None."""
    if fd is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    data = text.encode("utf-8")
    while data:
        data = data[os.write(fd, data):]


def exit_without_teardown(status):
    """Out of this process once its output is written: exit handlers run (startup
    code's, a temporary runtime tree's removal), streams flushed (what the handlers
    wrote too), and no teardown of every module loaded, which would cost a ``check`` a
    tenth of its instructions in each of its two processes (~12M in the probe, on 3.14)."""
    atexit = sys.modules.get("atexit")  # built in; whoever registered a handler loaded it
    if atexit is not None:
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: started with that descriptor closed
                stream.flush()
        except (OSError, ValueError):  # closed early, or a broken pipe
            pass
    os._exit(status)


#: What the probe writes first on its report channel, as soon as ``-c`` runs: the CLI
#: tells a start that never reached the probe (startup code that exits, a program that
#: is not Python) from a probe that failed.
REPORT_HEADER = "sitewarden-probe\n"

#: What both bootstraps run first, Python 2 compatible on purpose (an unsupported
#: interpreter says so in JSON): the report channel's header, then the version check; the
#: payload directory taken off ``sys.argv``.  Only built-in modules are imported.
_PROLOGUE = """\
import sys
report_fd = int(sys.argv.pop(3)) if len(sys.argv) > 3 else None
_posix = __import__('posix')  # built in
if report_fd is not None:
    _posix.write(report_fd, %r.encode('ascii'))
impl = getattr(getattr(sys, 'implementation', None), 'name', 'cpython')
if sys.version_info < (3, 8) or impl != 'cpython':
    _text = ('{"unsupported": true, "implementation": "%%s", "version": "%%d.%%d.%%d"}'
             %% ((impl,) + tuple(sys.version_info[:3])))
    if report_fd is None:
        sys.stdout.write(_text)
    else:
        _posix.write(report_fd, _text.encode('ascii'))
    sys.exit(0)
payload = sys.argv[1]
del sys.argv[1]
""" % (REPORT_HEADER,)

#: Run by the CLI in the target as ``-c BOOTSTRAP <payload dir> <kind> [<report fd>]``:
#: with a report fd (the write end of a pipe the CLI passed), the report goes there,
#: after :data:`REPORT_HEADER`, so that whatever startup code prints to stdout or
#: stderr does not matter; without one, on stdout.
BOOTSTRAP = _PROLOGUE + """\
# Did this start load a guard?  Then take it off sys.meta_path before anything is
# imported: the probe describes the interpreter, not the guard watching it.
_guards = [f for f in sys.meta_path if getattr(f, '_sitewarden_finder', False) is True]
_mod = sys.modules.get('sitewarden')
startup = {'active': bool(_guards), 'module_file': getattr(_mod, '__file__', None),
           'version': getattr(_mod, '__version__', None)}
sys.meta_path[:] = [f for f in sys.meta_path if not [g for g in _guards if g is f]]
for _name in [m for m in sys.modules if m == 'sitewarden' or m.startswith('sitewarden.')]:
    del sys.modules[_name]
sys.path.insert(0, payload)
# The payload is the CLI's private cache: its bytecode is written there once, even
# under PYTHONDONTWRITEBYTECODE (these modules import only os and sys).
_dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, False
import sitewarden.probe.runner
sys.dont_write_bytecode = _dont_write
sys.path.remove(payload)
sitewarden.probe.runner.main(None, startup, report_fd, payload)
sitewarden.probe.runner.exit_without_teardown(0)
"""

#: Run by the CLI in the target as ``-I -S -c STATIC_BOOTSTRAP <payload dir> <kind> [<report
#: fd>]`` (``check``, ``status``, the apt hook, an installer's report): isolated (``-I``:
#: nothing of ``PYTHONPATH``, the user site or the working directory is importable while
#: the interpreter starts, ``encodings`` included, nor after), no ``site``, and nothing
#: imported but the standard library and the payload until ``_StdlibFirst`` is in place.
#: Python 2 compatible up to the version check, as BOOTSTRAP; then only what must run
#: before this module is imported (its ``sys.path``: the payload, then the standard
#: library's entries), the rest in :func:`static_main`, from bytecode: the text of ``-c``
#: is compiled at every start (~3M instructions more on 3.15 when it held the rest).
STATIC_BOOTSTRAP = _PROLOGUE + """\
path = list(sys.path)
_v = sys.version_info
_std = set()
for _prefix, _exec in ((sys.prefix, sys.exec_prefix), (sys.base_prefix, sys.base_exec_prefix)):
    for _lib in ('lib', getattr(sys, 'platlibdir', 'lib')):
        _std.add('%s/%s/python%d%d.zip' % (_prefix, _lib, _v[0], _v[1]))
        _std.add('%s/%s/python%d.%d' % (_prefix, _lib, _v[0], _v[1]))
        _std.add('%s/%s/python%d.%d/lib-dynload' % (_exec, _lib, _v[0], _v[1]))
sys.path[:] = [payload] + ([e for e in path if e in _std] or path[-3:])
_dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, sys.argv[1] in ('report', 'shadows')
import sitewarden.probe.runner
sys.dont_write_bytecode = _dont_write
sitewarden.probe.runner.static_main(path, _std, report_fd, payload)
"""


def static_main(path, std, report_fd, payload):
    """What :data:`STATIC_BOOTSTRAP` runs once this module is imported: the start it
    describes is the user's normal one, rebuilt from the environment's text (data here,
    never acted on): ``PYTHONPATH``'s entries as the interpreter adds them (made absolute
    on 3.11+), the ``-c`` entry unless ``PYTHONSAFEPATH``, and ``sys.flags`` replaced by
    that start's (not isolated; ``PYTHONNOUSERSITE``, ``PYTHONSAFEPATH``...).  ``path``:
    ``sys.path`` as the interpreter started; ``std``: the standard library's entries it
    may hold.  The ``sys.path`` that ``site`` would start from is handed to :func:`main`.
    (Started without ``-I``, it describes that start's own path.)"""
    path, path0 = list(path), None
    if sys.flags.isolated:
        path, path0 = _isolated_start(path)
    elif path and not getattr(sys.flags, "safe_path", 0):
        path0 = path.pop(0)
    sys.path[:] = [e for e in path if e in std] or path[-3:]
    main(None, None, report_fd, payload, (path, path0))
    exit_without_teardown(0)


def _isolated_start(path):
    """``(sys.path, the -c entry)`` of the normal start an isolated probe describes; its
    ``sys.flags`` and ``sys.dont_write_bytecode`` set as that start's."""
    posix = sys.modules["posix"]  # built in
    fs = sys.getfilesystemencoding()

    def env(name):
        value = posix.environ.get(name.encode("ascii"))
        return value.decode(fs, "surrogateescape") if value else ""

    entries = env("PYTHONPATH").split(":") if env("PYTHONPATH") else []
    if sys.version_info >= (3, 11):
        try:
            here = posix.getcwd()
            entries = [os.path.normpath(os.path.join(here, e)) for e in entries]
        except OSError:
            pass
    safe = sys.version_info >= (3, 11) and bool(env("PYTHONSAFEPATH"))
    flags = dict((n, getattr(sys.flags, n)) for n in dir(sys.flags)
                 if not n.startswith(("_", "n_")) and n not in ("count", "index"))
    dont_write = int(bool(env("PYTHONDONTWRITEBYTECODE")))
    flags.update(isolated=0, ignore_environment=0, no_user_site=int(bool(env(
        "PYTHONNOUSERSITE"))), dont_write_bytecode=dont_write)
    if "safe_path" in flags:
        flags.update(safe_path=int(safe))
    sys.flags = type(sys.implementation)(**flags)
    sys.dont_write_bytecode = bool(dont_write)
    return entries + path, (None if safe else "")


#: Run in the target with a normal start, as ``-c STATUS_SCRIPT [<report fd>]``: is the
#: guard loaded, and from where?  JSON on the report fd (as :data:`BOOTSTRAP`), else stdout.
STATUS_SCRIPT = """\
import json, os, sys
finders = [f for f in sys.meta_path if getattr(f, '_sitewarden_finder', False) is True]
mod = sys.modules.get('sitewarden')
text = json.dumps({
    'active': bool(finders),
    'meta_path_index': sys.meta_path.index(finders[0]) if finders else None,
    'module_file': getattr(mod, '__file__', None),
    'version': getattr(mod, '__version__', None),
})
if len(sys.argv) > 1:
    data = text.encode('utf-8')
    while data:
        data = data[os.write(int(sys.argv[1]), data):]
else:
    sys.stdout.write(text)
"""
