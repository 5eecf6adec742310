"""The runtime tree deployed into interpreters: sitewarden plus a private packaging.

Built from the running CLI's own files.  ``packaging`` is the copy committed in
``sitewarden/_vendor/packaging`` (one pinned version, relative imports only: see
``src/sitewarden/_vendor/vendor.txt`` and ``packaging/vendor``), never the CLI
environment's, so a commit fixes every byte of what is deployed and the deployed
guard never imports, shadows or depends on a ``packaging`` the target has or lacks.
"""

from __future__ import annotations

import atexit  # built in: free
import os
import stat
import zlib

import sitewarden

from .. import pathfacts
from ..facts.private_cache import in_system_tree

TYPE_CHECKING = False  # pathlib is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from pathlib import Path

#: What ``sitewarden/_vendor`` holds that is not deployed (how the copy is made).
VENDOR_SKIP = {"patches", "vendor.txt", "__pycache__"}


def package_dir() -> str:
    return os.path.dirname(os.path.realpath(sitewarden.__file__))


def hooks_dir() -> str:
    """Where ``sitewarden.pth``, ``sitewarden.start`` and the sitecustomize block are."""
    try:
        import sitewarden._hooks as hooks  # present only in a built wheel

        for entry in hooks.__path__:
            if os.path.isfile(os.path.join(entry, "sitewarden.pth")):
                return entry
    except ImportError:
        pass
    checkout = os.path.join(os.path.dirname(os.path.dirname(package_dir())), "hooks")
    if os.path.isfile(os.path.join(checkout, "sitewarden.pth")):  # src/sitewarden -> hooks
        return checkout
    raise FileNotFoundError("sitewarden's hooks directory is missing from this installation")


def hook_text(name: str) -> str:
    with open(os.path.join(hooks_dir(), name), encoding="utf-8") as f:
        return f.read()


def _runtime_sources() -> list[tuple[str, str]]:
    """``(relative path inside the deployed tree, source file)`` pairs."""
    out = _code_sources()
    out.extend(_packaging_licenses(os.path.join(package_dir(), "_vendor", "packaging")))
    return out


def _python_files(top: str, skip: set[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    """``(posix path relative to top, path)`` of the ``.py`` files under ``top``, sorted,
    leaving out ``__pycache__`` and the top-level entries named in ``skip``.  With
    ``scandir``, whose entries know their type: ``check`` pays for this at every run
    (:func:`_stamp`)."""
    found: list[tuple[str, str]] = []
    pending = [(top, "")]
    while pending:
        directory, rel = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                if not rel and name in skip:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if name != "__pycache__":
                        pending.append((entry.path, rel + name + "/"))
                elif name.endswith(".py") and entry.is_file():
                    found.append((rel + name, entry.path))
    return sorted(found)


def _code_sources() -> list[tuple[str, str]]:
    """The Python files of the runtime tree: sitewarden's and the vendored packaging's."""
    pkg = package_dir()
    vendor = os.path.join(pkg, "_vendor")
    if not os.path.isfile(os.path.join(vendor, "packaging", "__init__.py")):
        raise FileNotFoundError("sitewarden's vendored packaging is missing from this "
                                "installation: %s" % os.path.join(vendor, "packaging"))
    return [("sitewarden/" + rel, path) for rel, path in _python_files(pkg, ("_hooks",))
            if not rel.startswith("_vendor/") or rel.split("/")[1] not in VENDOR_SKIP]


def _packaging_licenses(src: str) -> list[tuple[str, str]]:
    """packaging's licence texts travel with the vendored copy (committed beside it)."""
    return [("sitewarden/_vendor/packaging/" + n, os.path.join(src, n))
            for n in sorted(os.listdir(src))
            if n.startswith("LICENSE") and os.path.isfile(os.path.join(src, n))]


def runtime_files() -> dict[str, bytes]:
    """The deployed tree's files (relative path -> bytes)."""
    files = {}
    for rel, path in _runtime_sources():
        with open(path, "rb") as f:
            files[rel] = f.read()
    return files


def _stamp(sources: list[tuple[str, str]]) -> str:
    """A cache key from the runtime sources' names, sizes and modification times (no
    file read: ``check`` pays for this at every run).  Not a security measure: the
    cache is private to the user (see _private_cache_dir)."""
    lines = []
    for rel, path in sources:
        st = os.stat(path)
        lines.append("%s %s %s" % (rel, st.st_size, st.st_mtime_ns))
    text = "\n".join(lines).encode()
    return "%08x%08x" % (zlib.crc32(text), zlib.adler32(text))


def write_tree(root: str | Path, files: dict[str, bytes]) -> None:
    """Write ``files`` under ``root`` with modes 0644/0755, whatever the umask."""
    for rel, data in files.items():
        dest = os.path.join(root, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        os.chmod(dest, 0o644)
    for dirpath, _dirs, _files in os.walk(root):
        os.chmod(dirpath, 0o755)


#: Runtime copies kept beside the one in use (the most recently used first), and how long
#: an unused one is kept at most; one used in the last IN_USE seconds is never removed
#: (another ``sitewarden`` may be running from it).
KEEP_OTHER_COPIES = 2
MAX_IDLE = 14 * 24 * 3600
IN_USE = 600


def cache_home(environ: dict[str, str] | None = None) -> str:
    """The user's cache directory: ``$XDG_CACHE_HOME`` (when absolute, as the XDG Base
    Directory specification says), else ``~/.cache``."""
    environ = os.environ if environ is None else environ  # type: ignore[assignment]
    base = environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = environ.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".cache")
    return base


def _private_cache_dir(environ: dict[str, str] | None = None) -> str | None:
    """A cache directory only this user can write to, or None.

    The probe runs the cached copy inside target interpreters, possibly as
    root: a directory another user could write to would let them run code.  Never in
    a system tree (``private_cache.in_system_tree``): an ``XDG_CACHE_HOME`` or a
    ``HOME`` under ``/usr`` gets no cache, not files among the distribution's.
    """
    base = cache_home(environ)
    root = os.path.join(base, "sitewarden", "runtime")
    try:
        if in_system_tree(os.path.realpath(os.path.dirname(root))):
            return None
        os.makedirs(root, mode=0o700, exist_ok=True)
        for d in (root, os.path.dirname(root)):
            st = os.lstat(d)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return None
    except OSError:
        return None
    return root


def cache_key() -> str:
    """The name of this runtime's directory in the private cache."""
    return "%s-%s" % (sitewarden.__version__, _stamp(_code_sources()))


def payload_dir(environ: dict[str, str] | None = None) -> str:
    """A directory holding the runtime tree, for running the probe in a target.

    Cached in the user's private cache under a key made from the sources'
    names, sizes and times, so that a run of ``check`` reads no source file;
    each target writes its bytecode there once (``probe._load_runtime``).  Its time is
    set at each use: copies of other sources that nobody used for a while are removed
    when a new one is made (:func:`_prune`).  A private temporary directory, removed
    when the CLI exits, when no safe cache exists.  ``environ``: where ``HOME`` and
    ``XDG_CACHE_HOME`` are read (this process's environment by default).
    """
    root = _private_cache_dir(environ)
    if root is None:
        tmp = _staged_tree("sitewarden-runtime-")
        atexit.register(_remove_tree, tmp)  # not left behind at every run
        return tmp
    key = cache_key()
    final = os.path.join(root, key)
    if os.path.isfile(os.path.join(pathfacts.package_dir(final), "__init__.py")):
        try:
            os.utime(final)  # in use: not pruned (one system call)
        except OSError:
            pass
        return final
    staging = _staged_tree(".staging-", root)
    try:
        os.rename(staging, final)
    except OSError:  # another process won the race
        _remove_tree(staging)
    _prune(root, key)
    return final


def _prune(root: str, keep: str) -> None:
    """Remove the runtime copies in ``root`` other than ``keep`` that are not among the
    :data:`KEEP_OTHER_COPIES` most recently used, or that nobody used for
    :data:`MAX_IDLE` seconds, and staging directories left by a killed CLI; never one
    used in the last :data:`IN_USE` seconds.  Each copy holds what probes kept in it."""
    import time  # only when a new copy was made

    now = time.time()
    copies = []
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.name == keep or not entry.is_dir(follow_symlinks=False):
                    continue
                copies.append((entry.stat(follow_symlinks=False).st_mtime, entry.name))
    except OSError:
        return
    copies.sort(reverse=True)  # the most recently used first
    rank = 0
    for mtime, name in copies:
        staging = name.startswith(".")
        rank += not staging
        idle = now - mtime
        if idle >= IN_USE and (staging or idle > MAX_IDLE or rank > KEEP_OTHER_COPIES):
            _remove_tree(os.path.join(root, name))


def _staged_tree(prefix: str, parent: str | None = None) -> str:
    """A new private directory holding the runtime tree."""
    import tempfile  # only when a tree is built, never on the cached path of every check

    staging = tempfile.mkdtemp(prefix=prefix, dir=parent)
    write_tree(staging, runtime_files())
    return staging


def _remove_tree(path: str) -> None:
    import shutil  # only for a tree that is not kept (see _staged_tree)

    shutil.rmtree(path, ignore_errors=True)
