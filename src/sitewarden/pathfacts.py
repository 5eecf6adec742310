"""What a ``sys.path`` entry is, from its text and at most one directory listing.

Shared by the runtime watch (``_watch``), the exact classification (``layout``),
the path findings (``pathcheck``), shadowing and metadata reading (``distinfo``);
imports nothing of sitewarden (a leaf), and nothing but ``os`` and ``sys`` at
module level, since every guarded process loads it at its first import.  No
``sysconfig``, no metadata, no ``stat`` of each file.

And the one way sitewarden opens a file it did not write (:func:`open_regular`,
:func:`read_regular`): never a FIFO, device or socket, never waiting, never more than a
limit, never raising.  The audit reads through ``facts.reader``, which builds on it; the
runtime (``detect``), the private cache and the CLI's ``deployed`` call it here, where
nothing more is loaded.
"""

import os
import sys

_memo = {}


def cwd():
    """The working directory, or None when it was deleted (a shell still inside a
    removed directory): a relative path then names nothing that exists."""
    try:
        return os.getcwd()
    except OSError:  # FileNotFoundError: deleted; PermissionError: an ancestor unreadable
        return None


def real(path):
    """``os.path.realpath`` of an entry ('' is the current directory): absolute, with
    every symbolic link resolved; never raises.  Between :func:`remember_real` and
    :func:`forget_real` each path is resolved once.  A relative path in a deleted working
    directory is returned as it is (it names nothing that exists)."""
    memo = _memo.get("real")
    if memo is not None and path in memo:
        return memo[path]
    if isinstance(path, str) and not os.path.isabs(path) and cwd() is None:
        return path
    try:
        found = os.path.realpath(path or os.curdir)
    except (OSError, TypeError, ValueError):  # a deleted working directory, not a str
        return path
    if memo is not None:
        memo[path] = found
    return found


def remember_real():
    """Resolve each path once until :func:`forget_real`: one shadowing check asks
    ``realpath`` of the same few directories dozens of times (about 90k instructions
    each), and a check is short enough for no link to change under it."""
    _memo["real"] = {}


def forget_real():
    _memo.pop("real", None)


def package_dir(site_dir):
    """The ``sitewarden`` package in ``site_dir`` (a deployment's, the CLI's payload's):
    the one place its name is joined to a directory."""
    return os.path.join(site_dir, "sitewarden")


def deployment_dirs(paths):
    """The directories of ``paths`` (``sys.path`` entries) that hold a deployed guard (its
    manifest), absolute, each once: their silence files apply (``settings``)."""
    out = []
    for path in paths:
        if isinstance(path, str) and path:
            path = absolute(path)
            if path not in out and os.path.isfile(
                    os.path.join(package_dir(path), "_deployment.json")):
                out.append(path)
    return out


def absolute(path):
    """An entry as an absolute, normalised string: textual (no filesystem access),
    so symbolic links are not resolved (see :func:`real`) and case is kept.  A
    relative path in a deleted working directory is returned as it is."""
    try:
        if os.path.isabs(path):
            return os.path.normpath(path)
        here = cwd()
        return path if here is None else os.path.normpath(os.path.join(here, path))
    except (TypeError, ValueError):  # not a str path, or one holding a NUL
        return path


def under(path, root):
    """Is ``path`` ``root`` or inside it?  Textual: both already made comparable the
    same way (:func:`absolute` or :func:`real`)."""
    if not root:
        return False
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


# ---------------------------------------------------------------- module names


def module_suffixes():
    """Suffixes of importable single-file modules, longest first."""
    suffixes = [".py", ".pyc"]
    try:
        import _imp  # built in; startup module: os and sys only at module level

        suffixes.extend(_imp.extension_suffixes())
    except (ImportError, AttributeError):  # not CPython's import system
        suffixes.extend([".so", ".abi3.so"])
    return sorted(set(suffixes), key=len, reverse=True)


def module_name_of_file(filename, suffixes=None):
    """``six.py`` -> ``six``; ``_yaml.cpython-311-x86_64-linux-gnu.so`` -> ``_yaml``; else None."""
    for suffix in suffixes or module_suffixes():
        if filename.endswith(suffix) and len(filename) > len(suffix):
            stem = filename[: -len(suffix)]
            return stem if "." not in stem and "-" not in stem else None
    return None


def top_level_names(directory, suffixes=None):
    """Names that may be importable directly from ``directory``: single-file
    modules (``.py``, ``.pyc``, extension suffixes) and every identifier
    without a dot (packages, namespace portions; ``find_spec`` tells them
    apart later).  One ``os.listdir``, no ``stat`` (``/usr/bin`` as a
    script directory holds a thousand symbolic links)."""
    suffixes = frozenset(suffixes or module_suffixes())
    names = set()
    try:
        listing = os.listdir(directory or os.curdir)
    except (OSError, TypeError, ValueError):
        return names
    for name in listing:
        dot = name.find(".")
        if dot < 0:
            if name.isidentifier() and name != "__pycache__":
                names.add(name)
        elif dot > 0 and name[dot:] in suffixes:
            stem = name[:dot]
            if stem.isidentifier():
                names.add(stem)
    return names


def file_names(directory):
    """The names in ``directory``, as importlib's own finder for that ``sys.path``
    entry lists them: asked once (as the next import would ask it), its listing is
    shared with every import that searches the entry, so a script directory of
    thousands of files is listed once per process, not twice.  ``os.listdir``
    where there is no such finder."""
    try:
        external = sys.modules["_frozen_importlib_external"]  # loaded at startup
        cache = sys.path_importer_cache
        finder = cache.get(directory)
        if finder is None and directory not in cache:
            finder = external.PathFinder._path_importer_cache(directory)
        if isinstance(finder, external.FileFinder):  # a zip's importer keeps no listing
            finder.find_spec("__sitewarden__")  # fills its cache if the directory changed
            names = finder._path_cache
            if isinstance(names, set):
                return names
    except Exception:
        from . import _swallowed  # the package is loaded: this imports nothing

        _swallowed("the import system's listing of %s (listed again)" % (directory,))
    try:
        return os.listdir(directory or os.curdir)
    except (OSError, TypeError, ValueError):
        return ()


def listed_parts(directory):
    """Every dot-separated part of every name in ``directory``: a superset of the
    top-level names it provides (``six.py`` gives ``six`` and ``py``), computed by a
    few C calls, with no Python loop per file: every guarded process pays for it,
    at its first import, for each distro candidate."""
    return set("\n".join(file_names(directory)).replace(".", "\n").split("\n"))


def present_among(directory, names, suffixes):
    """Which of ``names`` ``directory`` provides as top-level modules, as
    :func:`top_level_names` would say (a package or namespace portion: a name
    without a dot; a single-file module: ``name`` + one of ``suffixes``), found by
    set operations in C: the directory's names split at dots, or, for a directory
    larger than ``names`` times ``suffixes``, ``names`` with each suffix appended."""
    listing = file_names(directory)
    if not listing:
        return set()
    if 3 * len(listing) < len(names) * (len(suffixes) + 1):
        hits = set("\n".join(listing).replace(".", "\n").split("\n")).intersection(names)
        if not hits:
            return hits
        listing = set(listing)
        found = set(hits.intersection(listing))
        for suffix in suffixes:
            found.update(listing.intersection([name + suffix for name in hits]))
    else:
        listing = listing if isinstance(listing, (set, frozenset)) else set(listing)
        names = list(names)
        found = set(listing.intersection(names))
        for suffix in suffixes:  # "a.py\nb.py" for every name at once
            found.update(listing.intersection(
                ((suffix + "\n").join(names) + suffix).split("\n")))
    return {n.partition(".")[0] for n in found
            if n != "__pycache__" and n.partition(".")[0].isidentifier()}


# ---------------------------------------------------------------- foreign entries


def version_of_component(part):
    """``(major, minor, threaded)`` named by one path component, or None.

    ``python3.9``, ``python3.13t``, ``python3.7m``, ``python39.zip``, ``python2``,
    and eggs ``name-1.0-py2.7.egg`` / ``name-1.0-py3.9-linux-x86_64.egg``.
    """
    low = part.lower()
    if low.startswith("python"):
        rest = low[6:]
        if rest.endswith(".zip"):
            digits = rest[:-4]
            if digits.isdigit() and 2 <= len(digits) <= 3:
                return int(digits[0]), int(digits[1:]), False
            return None
        threaded = False
        while rest and rest[-1] in "dmt":
            threaded = threaded or rest[-1] == "t"
            rest = rest[:-1]
        if rest.isdigit() and len(rest) == 1:
            return int(rest), None, threaded
        major, dot, minor = rest.partition(".")
        if dot and major.isdigit() and minor.isdigit() and len(major) == 1:
            return int(major), int(minor), threaded
        return None
    if low.endswith(".egg") and "-py" in low:
        tail = low[:-4].rsplit("-py", 1)[1]
        tail = tail.split("-", 1)[0]
        major, dot, minor = tail.partition(".")
        if dot and major.isdigit() and minor.isdigit():
            return int(major), int(minor), False
    return None


def foreign_version(path, version_info=None, abiflags=None):
    """The ``"X.Y"`` (or ``"2"``) of another interpreter that ``path`` belongs to, or None.

    Purely textual (no filesystem access).  ``lib/python3/dist-packages``
    (Debian's version-less directory) is not foreign to a Python 3.
    """
    if not path:
        return None
    version_info = sys.version_info if version_info is None else version_info
    if abiflags is None:
        abiflags = getattr(sys, "abiflags", "")
    threaded_here = "t" in abiflags
    path = path.lower()
    if "python" not in path and ".egg" not in path:
        return None  # most entries: no component to look at
    for low in path.replace("\\", "/").split("/"):
        if not (low.startswith("python") or low.endswith(".egg")):
            continue
        found = version_of_component(low)
        if found is None:
            continue
        major, minor, threaded = found
        if major != version_info[0]:
            return "%d" % major if minor is None else "%d.%d" % (major, minor)
        if minor is not None and minor != version_info[1]:
            return "%d.%d" % (major, minor)
        if minor is not None and threaded != threaded_here and low.startswith("python") \
                and not low.endswith(".zip"):
            return "%d.%d%s" % (major, minor, "t" if threaded else "")
    return None


# ---------------------------------------------------------------- distro candidates


def _upstream_site_dirs(prefix, exec_prefix):
    """The upstream ``posix_prefix`` site-packages of a prefix, built by hand."""
    version = "python%d.%d" % sys.version_info[:2]
    libdirs = ["lib", getattr(sys, "platlibdir", "lib") or "lib"]
    out = []
    for base in (prefix, exec_prefix):
        for lib in libdirs:
            out.append(os.path.join(base, lib, version, "site-packages"))
            out.append(os.path.join(base, lib, version + "t", "site-packages"))
    return out


def site_dirs():
    """``site.getsitepackages()`` (never raises)."""
    site = sys.modules.get("site")
    if site is None:
        return []
    try:
        return list(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site.py has no getsitepackages
        return []


def user_site():
    site = sys.modules.get("site")
    if site is None:
        return None
    try:
        return site.getusersitepackages()
    except AttributeError:  # an old virtualenv's site.py
        return getattr(site, "USER_SITE", None)


def distro_candidates():
    """The site directories that may be distro-owned, as :func:`absolute` strings.

    A superset, computed without ``sysconfig``, without reading files and
    without resolving symbolic links (every guarded process pays for it):
    every site directory except the user site, a virtual environment's own
    directories, the ``/usr/local`` ones of a ``/usr`` Python (Debian's and
    Fedora's install scheme) and, for a Python not installed in ``/usr``
    (pyenv, python.org, Homebrew, conda), its upstream ``site-packages``.
    The exact classification (``layout.classify``) decides later.
    """
    base_prefix = getattr(sys, "base_prefix", sys.prefix)
    base_exec_prefix = getattr(sys, "base_exec_prefix", sys.exec_prefix)
    excluded = set()
    user = user_site()
    if user:
        excluded.add(absolute(user))
    own_root = absolute(sys.prefix) if sys.prefix != base_prefix else None
    usr = absolute(base_prefix) == "/usr"
    if not usr:
        excluded.update(absolute(p) for p in _upstream_site_dirs(base_prefix, base_exec_prefix))
    local_root = "/usr/local" if usr else None
    out = []
    for d in site_dirs():
        n = absolute(d)
        if n in excluded or n in out:
            continue
        if own_root is not None and under(n, own_root):
            continue
        if local_root is not None and under(n, local_root):
            continue
        out.append(n)
    return out


# ---------------------------------------------------------------- the standard library


def stdlib_names():
    """Top-level standard library module names (``sys.stdlib_module_names`` on 3.10+)."""
    names = getattr(sys, "stdlib_module_names", None)
    if names is None:
        from ._stdlib_names import NAMES as names  # 3.8/3.9 only (no sys.stdlib_module_names)
    return names


def stdlib_dir():
    d = getattr(sys, "_stdlib_dir", None)
    if not d:
        os_file = getattr(sys.modules.get("os"), "__file__", None)
        d = os.path.dirname(os_file) if os_file else None
    return d


def is_stdlib_entry(entry, stdlib_real=None):
    """Cheap test (no sysconfig) for a standard library ``sys.path`` entry."""
    if not isinstance(entry, str) or not entry:
        return False
    base = os.path.basename(entry.rstrip(os.sep))
    if base == "python%d%d.zip" % sys.version_info[:2] or base == "lib-dynload":
        return True
    d = stdlib_dir()
    if not d or base != os.path.basename(d.rstrip(os.sep)):
        return False  # lib/pythonX.Y under another name: not worth a realpath
    if stdlib_real is None:
        stdlib_real = real(d)
    return absolute(entry) == absolute(d) or real(entry) == stdlib_real


def entries_ahead_of_stdlib(path=None):
    """``[(index, entry)]`` before the first standard library entry."""
    path = sys.path if path is None else path
    out = []
    for index, entry in enumerate(path):
        if is_stdlib_entry(entry):
            return out
        if isinstance(entry, str):
            out.append((index, entry))
    return out  # no standard library entry found: nothing is "ahead" of it


def candidates():
    """:func:`distro_candidates`, computed once per process (at the first import after
    startup, when the watch builds its index)."""
    found = _memo.get("candidates")
    if found is None:
        found = _memo["candidates"] = frozenset(distro_candidates())
    return found


def is_candidate(entry):
    """Is ``entry`` one of the distro candidates (also through a symbolic link)?"""
    found = candidates()
    if not found:
        return False
    if absolute(entry) in found:
        return True
    reals = _memo.get("candidate_reals")
    if reals is None:
        reals = _memo["candidate_reals"] = frozenset(real(c) for c in found)
    return real(entry) in reals


# ---------------------------------------------------------------- reading a file

#: The type bits of ``st_mode`` (``stat`` not imported) and what each names.
_S_IFMT, _S_IFREG = 0o170000, 0o100000
FILE_TYPES = {0o010000: "fifo", 0o140000: "socket", 0o020000: "character device",
              0o060000: "block device", 0o040000: "directory"}
_ELOOP = 40 if sys.platform.startswith("linux") else 62  # errno not imported
#: How a file is opened to be read: never waiting (a FIFO, a terminal), never kept.
_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(
    os, "O_NOCTTY", 0)
#: :func:`read_regular`'s ``why`` when there is nothing to open: no such file or
#: directory, a symbolic link loop (a start finds nothing there either).
MISSING = "no such file"
#: How :func:`read_regular`'s ``why`` ends for a FIFO, device, socket or directory.
NOT_REGULAR = "not a regular file"


def open_regular(path, follow=True):
    """``(fd, stat, None)``: ``path`` opened to read when it is a regular file (links
    followed, unless not ``follow``), or ``(None, stat or None, error)``: what is there
    (None: nothing, or it cannot be asked) and what ``os`` raised (None: it is not a
    regular file).  The one way sitewarden opens a file it did not write: asked before
    (``stat``: a FIFO, device, socket or directory is never opened, a device's open
    has effects) and after (``fstat`` of the descriptor: what was swapped in between is
    closed again), opened ``O_NONBLOCK``.  The caller closes ``fd``.  Never raises."""
    st = None
    try:
        st = os.stat(path) if follow else os.lstat(path)
        if st.st_mode & _S_IFMT != _S_IFREG:
            return None, st, None
        fd = os.open(path, _OPEN | (0 if follow else getattr(os, "O_NOFOLLOW", 0)))
    except (OSError, ValueError, TypeError) as exc:  # ValueError: a NUL in the name
        return None, st, exc
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return None, None, exc
    if st.st_mode & _S_IFMT != _S_IFREG:
        os.close(fd)
        return None, st, None
    return fd, st, None


def read_regular(path, limit, follow=True, cut=False):
    """``(bytes, stat, None)`` of the regular file ``path``, at most ``limit`` bytes
    (read to its end whatever its size says; ``cut``: a larger file's first ``limit``),
    or ``(None, stat or None, why)``: :data:`MISSING`, ``a fifo, not a regular file``
    (:func:`kind_of`), ``larger than N bytes``, ``cannot be read (<reason>)``.  Opened
    by :func:`open_regular`; never blocks, never raises.  ``stat`` is the descriptor's,
    taken before the read: what changes the file after it changes its ``st_ctime``."""
    fd, st, exc = open_regular(path, follow)
    if fd is None:
        return None, st, _why(st, exc)
    try:
        data = None if st.st_size > limit and not cut else read_all(
            fd, limit, st.st_size, cut)
    except OSError as exc:  # EIO, a file that would block
        return None, st, _why(st, exc)
    finally:
        os.close(fd)
    if data is None:
        return None, st, "larger than %d bytes" % limit
    return data, st, None


def kind_of(st):
    """What a ``stat`` result that is not a regular file's names: ``fifo``, ``socket``..."""
    return FILE_TYPES.get(st.st_mode & _S_IFMT, "special file")


def _why(st, exc):
    if getattr(exc, "errno", None) in (2, 20, _ELOOP):  # ENOENT, ENOTDIR, ELOOP
        return MISSING
    if exc is not None or st is None:
        return "cannot be read (%s)" % (getattr(exc, "strerror", None) or exc)
    return "a %s, %s" % (kind_of(st), NOT_REGULAR)


def read_all(fd, limit, size=0, cut=False):
    """The bytes of the open file ``fd``, or None: more than ``limit`` (``cut``: its
    first ``limit``).  The first read asks for what its size (``size``) says and one
    byte more: a file that did not grow is read in one call (a ``/proc`` file, its size
    0, is read on)."""
    chunks, total, want = [], 0, max(size + 1, 1 << 16)
    while total <= limit:
        asked = min(want, limit + 1 - total)
        chunk = os.read(fd, asked)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < asked and total == size:  # all its size said: its end
            return b"".join(chunks)
        want = 1 << 20
    return b"".join(chunks)[:limit] if cut else None
