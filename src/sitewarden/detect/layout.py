"""Where each ``sys.path`` entry comes from.

Every entry gets one class:

``stdlib``      the standard library (``pythonXY.zip``, ``lib/pythonX.Y``, ``lib-dynload``);
``local``       the default install scheme's purelib/platlib: where pip writes
                (in a virtual environment: the venv's own site-packages);
``user``        the user site directory;
``system``      inside a virtual environment: the base interpreter's own scheme
                directories (``--system-site-packages``);
``distro``      site directories that are not an install scheme's: Debian's
                ``/usr/lib/python3/dist-packages``, Fedora's ``/usr/lib{,64}/python3.X/
                site-packages`` when pip writes to ``/usr/local``...;
``pythonpath``  from ``PYTHONPATH`` (unless ``-E``/``-I``);
``script``      ``sys.path[0]``: the script's directory, or the current
                directory for ``-c``, ``-m`` and the REPL (absent under ``-P``/``-I``);
``pth``         added by a ``.pth`` file (or, found by elimination, by code run at startup);
``foreign``     another interpreter's directory (another ``pythonX.Y``, python2, a
                ``-pyX.Y.egg`` of another version);
``other``       anything else.

Two ways in.  :func:`facts` + :func:`classify` are exact: they ask ``sysconfig``
for the scheme (via :func:`sitewarden.facts.marker.default_scheme`) and are used by
``sitewarden check`` and by the runtime once a shadowing candidate was found.
``pathfacts.distro_candidates`` is the cheap runtime pre-selection: no ``sysconfig``
(which imports ``threading`` on 3.12+), no file read, no symbolic link resolved
(``pathfacts.is_candidate`` resolves an entry's links only when its text does not
match); it returns a superset of the distro directories, checked exactly later.
Module level: ``os``, ``sys`` and sitewarden's own modules.
"""

import os
import sys

from .. import _swallowed, pathfacts
from ..facts import marker
from ..facts.records import Layout, PathEntry, Record

CLASSES = (
    "stdlib", "local", "user", "system", "distro",
    "pythonpath", "script", "pth", "foreign", "other",
)

_cache = {}


class LayoutFacts(Record):
    """What :func:`classify` needs to know of an interpreter (made by :func:`facts`):
    ``script``: ``sys.path[0]`` holds the script's directory; ``pth``: ``{path_key: .pth
    file}`` of the ``.pth`` path lines and ``pth_importers`` the ``.pth`` files with
    import lines (both None unless read)."""

    __slots__ = ("version", "abiflags", "sys_path", "cwd", "venv", "prefix", "base_prefix",
                 "scheme", "stdlib", "local", "user", "user_enabled", "system", "site_dirs",
                 "pythonpath", "script", "safe_path", "pth", "pth_importers")
    FIELDS = tuple((name, name, None) for name in __slots__)


def path_key(path):
    """An entry as compared with other entries: absolute, normalised and case-folded
    where the filesystem ignores case (``os.path.normcase``); symbolic links are not
    resolved (``pathfacts.real`` does).  ``''`` is the current directory; in a deleted
    one, a relative path stays relative (normalised: ``''`` is ``.``)."""
    try:
        if not os.path.isabs(path or os.curdir) and pathfacts.cwd() is None:
            return os.path.normcase(os.path.normpath(path or os.curdir))
        return os.path.normcase(os.path.abspath(path or os.curdir))
    except OSError:  # the working directory was deleted: a relative entry names nothing
        return path



# ---------------------------------------------------------------- exact facts


def _base_scheme_dirs(sysconfig):
    """A virtual environment's base interpreter's install scheme directories."""
    names = sysconfig.get_scheme_names()
    if os.name == "nt":
        scheme = "nt"
    elif "posix_local" in names:  # Debian, Ubuntu
        scheme = "posix_local"
    else:
        scheme = "posix_prefix"
    base = getattr(sys, "base_prefix", sys.prefix)
    platbase = getattr(sys, "base_exec_prefix", sys.exec_prefix)
    try:
        paths = sysconfig.get_paths(scheme, vars={
            "base": base, "platbase": platbase,
            "installed_base": base, "installed_platbase": platbase,
        })
    except Exception:
        _swallowed("the local scheme's directories (%s)" % (scheme,))
        return []
    out = [paths.get("purelib"), paths.get("platlib")]
    if base in ("/usr", "/usr/"):
        # Fedora patches posix_prefix to /usr/local outside venvs only: inside a
        # venv the computed paths may name /usr/lib*; the base's scheme is /usr/local.
        out = [p for p in out if p and pathfacts.under(path_key(p), "/usr/local")] or \
            [p.replace("/usr/", "/usr/local/", 1) for p in out if p and p.startswith("/usr/")]
    return _unique(*out)


def _unique(*paths):
    """``paths`` in order, each once, empty ones left out: a scheme's ``purelib`` and
    ``platlib`` are the same directory wherever the platform's libraries are not apart
    (everywhere but Fedora's ``lib64``), and a layout lists a directory once."""
    out = []
    for p in paths:
        if p and p not in out:
            out.append(p)
    return out


def _stdlib_dirs(sysconfig, paths):
    """The standard library's directories (and their ``lib-dynload``); in a venv
    ``platstdlib`` names the venv, so the base's are computed too."""
    dirs = [paths.get("stdlib"), paths.get("platstdlib")]
    base_prefix = getattr(sys, "base_prefix", sys.prefix)
    base_exec_prefix = getattr(sys, "base_exec_prefix", sys.exec_prefix)
    if (base_prefix, base_exec_prefix) != (sys.prefix, sys.exec_prefix):  # else: ``paths``
        try:
            base = sysconfig.get_paths(vars={"base": base_prefix, "platbase": base_exec_prefix})
            dirs += [base.get("stdlib"), base.get("platstdlib")]
        except Exception:
            _swallowed("the base interpreter's standard library directories")
    here = getattr(sys, "_stdlib_dir", None) or os.path.dirname(
        getattr(sys.modules.get("os"), "__file__", None) or "")
    dirs.append(here or None)
    out = []
    for d in dirs:
        if d and d not in out:
            out.append(d)
    for d in list(out):
        dynload = os.path.join(d, "lib-dynload")
        if dynload not in out:
            out.append(dynload)
    return out


def pythonpath_entries(environ=None):
    """``PYTHONPATH`` as the interpreter added it (absolute), unless ``-E``/``-I``."""
    # An empty component (``PYTHONPATH=:/x``, what ``export PYTHONPATH=$PYTHONPATH:/x``
    # gives) is the current directory, as CPython adds it; an empty variable adds nothing.
    return [pathfacts.absolute(p or os.curdir) for p in pythonpath_components(environ)]


def pythonpath_components(environ=None):
    """``PYTHONPATH`` as written, split (``''`` for an empty component), unless ``-E``/``-I``."""
    if sys.flags.ignore_environment:
        return []
    environ = os.environ if environ is None else environ
    raw = environ.get("PYTHONPATH", "")
    return raw.split(os.pathsep) if raw else []


def empty_pythonpath_entry(entry, environ=None):
    """Is ``entry`` on ``sys.path`` only because ``PYTHONPATH`` has an empty component?"""
    parts = pythonpath_components(environ)
    if "" not in parts:
        return False
    n = path_key(entry)
    return n == path_key("") and not any(p and path_key(p) == n for p in parts)


def has_script_entry():
    """Does ``sys.path[0]`` hold the script directory (or the cwd)?  Not under
    ``-P``/``PYTHONSAFEPATH`` (3.11+) nor ``-I``."""
    return not (getattr(sys.flags, "safe_path", False) or sys.flags.isolated)


def pth_entries(site_dirs):
    """What the ``.pth`` files in ``site_dirs`` do, their lines as this interpreter's
    ``site`` reads them (``facts.reader``, which ``check`` reads them with everywhere):
    ``({path_key(path): pth file}, [pth files with import lines])``."""
    from ..facts import reader  # not for the runtime's usual path: read for check, or a shadow

    out = {}
    importers = []
    for pth, lines in reader.pth_files(site_dirs):
        for line in lines:
            if line.kind == "import" and pth not in importers:
                importers.append(pth)
            elif line.kind == "path":
                out.setdefault(path_key(line.directory), pth)
    return out, importers


def facts(read_pth=False):
    """The facts :func:`classify` needs, from the running interpreter (exact:
    imports ``sysconfig``).  ``read_pth`` reads the site directories' ``.pth``
    files (``check`` only, never at runtime)."""
    import sysconfig  # imports threading on 3.12+: only for the exact classification

    try:
        scheme = marker.default_scheme()
        paths = marker.scheme_paths(scheme)
    except Exception:
        _swallowed("the install scheme's paths (the default paths are used)")
        scheme, paths = None, sysconfig.get_paths()
    venv = marker.in_virtualenv()
    stdlib = _stdlib_dirs(sysconfig, paths)
    site_dirs = pathfacts.site_dirs()
    user = pathfacts.user_site()
    system = _base_scheme_dirs(sysconfig) if venv else []
    data = LayoutFacts.make(
        version=list(sys.version_info[:2]),
        abiflags=getattr(sys, "abiflags", ""),
        sys_path=list(sys.path),
        cwd=pathfacts.cwd(),  # None: deleted (relative entries name nothing)
        venv=venv,
        prefix=sys.prefix,
        base_prefix=getattr(sys, "base_prefix", sys.prefix),
        scheme=scheme,
        stdlib=[p for p in stdlib if p],
        # purelib and platlib: one directory where the interpreter has no separate lib64
        local=_unique(paths.get("purelib"), paths.get("platlib")),
        user=user,
        user_enabled=bool(getattr(sys.modules.get("site"), "ENABLE_USER_SITE", False)),
        system=system,
        site_dirs=site_dirs,
        pythonpath=pythonpath_entries(),
        script=has_script_entry(),
        safe_path=bool(getattr(sys.flags, "safe_path", False)),
    )
    if read_pth:
        dirs = ([user] if user else []) + site_dirs
        data.pth, data.pth_importers = pth_entries([d for d in dirs if d])
    return data


# ---------------------------------------------------------------- classification


def _site_classes(f):
    """``{realpath: class}`` of the known directories (stdlib and site dirs)."""
    out = {}

    def put(path, cls):
        if path:
            out.setdefault(pathfacts.real(path), cls)

    for p in f.stdlib or ():
        put(p, "stdlib")
    for p in f.local or ():
        put(p, "local")
    if f.user:
        put(f.user, "user")
    for p in f.system or ():
        put(p, "system")
    prefix_real = pathfacts.real(f.prefix) if f.venv else None
    for p in f.site_dirs or ():
        r = pathfacts.real(p)
        if r in out:
            continue
        if prefix_real is not None and pathfacts.under(r, prefix_real):
            out[r] = "local"  # a venv's own directories (Debian adds dist-packages variants)
        elif f.venv and any(pathfacts.under(r, pathfacts.real(s)) for s in f.system or ()):
            out[r] = "system"
        else:
            out[r] = "distro"
    return out


def classify(f):
    """Classify every entry of ``f.sys_path`` (``f``: a :class:`LayoutFacts`).

    Returns a list of :class:`~.records.PathEntry`: ``index``, ``path``,
    ``realpath``, ``cls``, ``source`` (``PYTHONPATH``, ``script``, a ``.pth`` file,
    ``site``, ``startup`` or None), ``exists``, ``duplicate_of`` (index of the same
    entry earlier, by string) and ``same_as`` (index of the same directory
    earlier, through a symlink), ``foreign`` (the other version), ``note``.
    Pure but for ``realpath``/``exists``.
    """
    known = _site_classes(f)
    pythonpath = set(path_key(p) for p in f.pythonpath or ())
    entries = []
    seen_key = {}
    seen_real = {}
    stdlib_seen = False
    for index, path in enumerate(f.sys_path or ()):
        if not isinstance(path, str):
            entries.append(PathEntry(index, repr(path), None, "other", None, False,
                                     note="not a string"))
            continue
        if path == "" and f.cwd:
            n, r = os.path.normcase(f.cwd), pathfacts.real(f.cwd)
        else:
            n, r = path_key(path), pathfacts.real(path)
            if not os.path.isabs(r):
                r = None  # a relative entry in a deleted working directory: names nothing
        cls, source, foreign = _class_and_source(f, index, path, n, known.get(r), pythonpath)
        note = None
        if cls == "stdlib":
            stdlib_seen = True
        elif not stdlib_seen and source not in ("script", "PYTHONPATH"):
            note = "ahead of the standard library"
        try:
            exists = os.path.exists(r if r else path)
        except (TypeError, ValueError):  # not a str path, or one holding a NUL
            exists = False
        dup = seen_key.get(n)
        same = None
        if dup is None:
            seen_key[n] = index
            same = seen_real.get(r) if r is not None else None
            if same is None and r is not None:
                seen_real[r] = index
        entries.append(PathEntry(index, path, r, cls, source, exists, dup, same, foreign,
                                 note))
    return entries


def _class_and_source(f, index, path, key, cls, pythonpath):
    """``(class, source, foreign version)`` of the entry ``path`` (``key``: its
    :func:`path_key`; ``cls``: its class as a known directory, or None)."""
    version = tuple(f.version or sys.version_info[:2])
    pth = f.pth
    source = "site" if cls in ("local", "user", "system", "distro") else None
    base = os.path.basename(key)
    if cls is None and base.startswith("python") and base.endswith(".zip"):
        zip_version = pathfacts.version_of_component(base)
        if zip_version is not None and zip_version[:2] == version:
            cls = "stdlib"
    foreign = None
    if cls is None or cls == "other":
        foreign = pathfacts.foreign_version(path or "", version, f.abiflags or "")
    if index == 0 and f.script and cls != "stdlib":
        source = "script"
    elif key in pythonpath:
        source = "PYTHONPATH"
    elif pth is not None and key in pth:
        source = pth[key]
    elif cls is None:
        source = "startup"
    if cls is None:
        if foreign is not None:
            cls = "foreign"
        elif source == "script":
            cls = "script"
        elif source == "PYTHONPATH":
            cls = "pythonpath"
        elif pth is None or key in pth or f.pth_importers:
            # At runtime (.pth files are not read) by elimination; in check,
            # a path line names it, or a .pth import line may have added it.
            cls = "pth"
        else:
            cls = "other"
    return cls, source, foreign


def current(read_pth=False):
    """``(facts, entries)`` of the running interpreter, cached per ``sys.path``."""
    key = (tuple(p if isinstance(p, str) else repr(p) for p in sys.path), read_pth)
    hit = _cache.get("current")
    if hit is not None and hit[0] == key:
        return hit[1]
    f = facts(read_pth=read_pth)
    result = (f, classify(f))
    _cache["current"] = (key, result)
    return result


def class_of(path, entries):
    """The class of ``path`` (a ``sys.path`` string) among classified entries."""
    for e in entries:
        if e.path == path:
            return e.cls
    r = pathfacts.real(path)  # resolved only when no entry has the same text
    n = path_key(path)
    for e in entries:
        if e.realpath == r or path_key(e.path) == n:
            return e.cls
    return "other"


# ---------------------------------------------------------------- check collector


def collect():
    """``check`` collector: every ``sys.path`` entry with its class."""
    f, entries = current(read_pth=True)
    data = Layout.make(
        venv=f.venv, scheme=f.scheme, stdlib=f.stdlib, local=f.local, user=f.user,
        user_enabled=f.user_enabled, system=f.system,
        distro=sorted(set(e.path for e in entries if e.cls == "distro")),
        pythonpath=f.pythonpath, safe_path=f.safe_path, script_entry=f.script,
        entries=entries)
    return "layout", data, []
