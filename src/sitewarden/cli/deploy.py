"""Deploy the guard into a target interpreter's site directory, and remove it.

A deployment is the ``sitewarden/`` runtime package (with its private
``packaging``) plus the startup hook: ``sitewarden.pth`` (Python < 3.18), the
PEP 829 ``sitewarden.start`` (3.18+, where ``.pth`` import lines no longer run),
or a marked block in ``sitecustomize``.  Never both files by default: on
3.15-3.17 a ``.start`` file makes ``site`` import ``pkgutil``, ``re``, ``enum``...
at every start (+76% instructions for ``-c pass`` on sid's 3.15.2) while the
``.pth`` line alone does the same job (see README, "Hook policy").  Every
file written is listed in ``sitewarden/_deployment.json``; ``uninstall``
removes exactly those and restores what it changed, byte for byte.

Crash safety: the package is built and compiled in a hidden staging
directory beside its destination and swapped in with one atomic rename
(``RENAME_EXCHANGE`` when upgrading), hooks are written last, each through a
temporary file and a rename; a kill at any point leaves the old deployment
or the new one.  Concurrent runs on one directory are serialised with
``flock`` on the directory itself, so no lock file is left behind.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import sitewarden

from . import payload
from .deployed import (
    BLOCK_BEGIN,
    BLOCK_END,
    DPKG,
    HOOKS,
    MANIFEST,
    PACKAGE,
    PTH,
    STAGING_PREFIX,
    START,
    START_READ_FROM,
    DeployError,
    Deployment,
    _staging_leftovers,
    read_deployment,
    shell_quote,
    startup_dirs,
)
from .targets import Target

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any, Iterator

SITECUSTOMIZE_BLOCK = "sitecustomize-block.py"
#: First version whose ``site`` ignores ``.pth`` import lines: the ``.start`` file carries
#: the guard from there on.
START_DEFAULT_FROM = (3, 18)
#: The startup files each hook writes into the site directory (the Debian package
#: ships the same, see packaging/build-deb).
HOOK_FILES = {"pth": (PTH,), "start": (START,), "sitecustomize": ()}


def default_hook(version: tuple[int, int]) -> str:
    """The hook for a target version: ``.pth`` while its import lines run, then ``.start``."""
    return "start" if tuple(version) >= START_DEFAULT_FROM else "pth"


# ---------------------------------------------------------------- locations


def default_site_dir(target: Target, user: bool) -> Path:
    """The target's default-scheme purelib (Debian: /usr/local/lib/python3.X/dist-packages),
    or its user site with ``--user``."""
    if user:
        if not target.user_site:
            raise DeployError("%s has no user site directory" % target.executable)
        return Path(target.user_site)
    return Path(target.purelib)


def _under(path: str, root: str) -> bool:
    """Is ``path`` ``root`` or inside it (both real paths)?"""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def distro_dirs(target: Target) -> list[str]:
    """The target's site directories that belong to the distribution: those that are
    neither its install scheme's (purelib, platlib) nor its user site (Debian's
    ``/usr/lib/python3/dist-packages`` and ``/usr/lib/python3.X/dist-packages``, Fedora's
    ``/usr/lib{,64}/python3.X/site-packages``), as ``check`` classes them ``distro``."""
    own = {os.path.realpath(d) for d in (target.purelib, target.platlib, target.user_site) if d}
    return [d for d in target.site_dirs or () if os.path.realpath(d) not in own]


def refuse_distro_site_dir(target: Target, site_dir: Path) -> None:
    """Refuse (DeployError, before anything is written) a site directory whose real path
    is, or is inside, one of the distribution's site directories or the target's
    standard library (but for the install scheme's own directories, which a pyenv or
    python.org build keeps inside it): the distribution's package manager owns those."""
    real = os.path.realpath(site_dir)
    own = [os.path.realpath(d) for d in (target.purelib, target.platlib, target.user_site) if d]
    if any(_under(real, d) for d in own):
        return
    distro = [d for d in distro_dirs(target) if _under(real, os.path.realpath(d))]
    stdlib = target.facts.get("stdlib")
    in_stdlib = bool(stdlib) and _under(real, os.path.realpath(stdlib))
    if not distro and not in_stdlib:
        return
    where = []
    if distro:
        top = os.path.realpath(distro[0])
        where.append("the distribution's site directory" if top == real
                     else "inside the distribution's site directory %s" % distro[0])
    if in_stdlib:
        where.append("the standard library of %s" % target.executable
                     if os.path.realpath(stdlib) == real
                     else "inside the standard library of %s (%s)" % (target.executable, stdlib))
    shown = str(site_dir) if real == str(site_dir) else "%s (%s)" % (site_dir, real)
    scheme = "sitewarden install --python %s (into %s)" % (
        shell_quote(target.executable), target.purelib)
    if os.path.exists("/etc/debian_version"):
        fix = ("To guard %s from there, install the Debian package: apt install sitewarden "
               "(README, \"The Debian package\": it puts the guard in "
               "/usr/lib/python3/dist-packages for every python3.X, and apt keeps it up to "
               "date); or deploy into the install scheme's directory: %s"
               % (target.executable, scheme))
        owner = "dpkg's packages own it"
    else:
        fix = "Deploy into the install scheme's directory: %s" % scheme
        owner = "the distribution's packages own it"
    raise DeployError("%s is %s: %s, and sitewarden install never writes there. %s" % (
        shown, " and ".join(where), owner, fix))


def validate_site_dir(target: Target, site_dir: Path) -> None:
    """``--site-dir`` must be a directory whose ``.pth`` files the target reads.  (A
    distribution's one passes here, so that ``uninstall`` can remove what an older
    sitewarden deployed there; :func:`install` refuses it.)"""
    real = os.path.realpath(site_dir)
    if real not in {os.path.realpath(d) for d in startup_dirs(target)}:
        refuse_distro_site_dir(target, site_dir)  # the standard library: say whose it is
        raise DeployError(
            "%s is not a site directory of %s: its .pth files are never read. "
            "Site directories: %s" % (site_dir, target.executable, ", ".join(startup_dirs(target)))
        )


def remove_orphaned_block(path: str) -> bool:
    """Remove a sitewarden block that no manifest records from ``path`` (the lines from
    its begin to its end marker); delete the file if sitewarden created it and nothing
    else is left.  True if something was removed."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    start = text.find(BLOCK_BEGIN)
    end = text.find(BLOCK_END, start)
    if start < 0 or end < 0:
        return False
    end = text.find("\n", end)
    rest = text[:start] + (text[end + 1:] if end >= 0 else "")
    header = "# Created by `sitewarden install --hook sitecustomize`.\n"
    if rest in ("", header):
        p.unlink()
        _remove_pycache_for(p)
    else:
        _atomic_write(p, rest.encode("utf-8"), like=os.stat(p))
    return True


# ---------------------------------------------------------------- filesystem helpers


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialise deployers on ``directory`` without leaving a lock file in it."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes, mode: int = 0o644, like: os.stat_result | None = None,
                  mtime_ns: int | None = None) -> None:
    """Replace ``path`` (never following a symlink at it) with a temp file + rename."""
    fd, tmp = tempfile.mkstemp(prefix=STAGING_PREFIX, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(like.st_mode) if like is not None else mode)
        if like is not None and os.geteuid() == 0:
            os.chown(tmp, like.st_uid, like.st_gid)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE)."""
    try:
        import ctypes  # only where the kernel may exchange; ctypes costs ~5 ms to import

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    shutil.rmtree(path)


def _clean_stale_staging(site_dir: Path) -> list[str]:
    """Remove leftovers of killed runs (hidden ``.sitewarden-*`` entries); their names."""
    names = _staging_leftovers(site_dir)
    for name in names:
        with contextlib.suppress(OSError):
            _remove_tree(site_dir / name)
    return names


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise DeployError(
            "%s is a symbolic link; sitewarden never writes through links. Remove it first." % path
        )


def _make_dirs(path: Path) -> list[str]:
    """Create ``path`` and missing parents (0755); return those created, outermost first."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    created = []
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise DeployError("cannot create %s: %s" % (d, exc.strerror or exc)) from None
        os.chmod(d, 0o755)
        created.append(str(d))
    return created


# ---------------------------------------------------------------- compile


#: Compiles the staged runtime for every optimisation level, timestamp-based whatever
#: ``SOURCE_DATE_EPOCH`` says (a checked-hash ``.pyc`` would make every start read and
#: hash the source).  With a third argument, the payload cache (``payload.payload_dir``):
#: a staged file equal to the cached one takes the cached file's modification time and
#: reuses its bytecode when the header matches (this interpreter's magic number, that
#: time and size), else is compiled and its bytecode kept there for the next install.
#: ``co_filename`` is whatever path compiled it first: importlib sets it to the real
#: source path at every load (``_imp._fix_co_filename``).
COMPILE_SCRIPT = """\
import importlib.util, os, py_compile, sys
staging, final, cache = sys.argv[1], sys.argv[2], sys.argv[3:4]
MODE = py_compile.PycInvalidationMode.TIMESTAMP

def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return None

def header(path):
    st = os.stat(path)
    return (importlib.util.MAGIC_NUMBER + bytes(4)
            + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, 'little')
            + (st.st_size & 0xFFFFFFFF).to_bytes(4, 'little'))

def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = '%s.%d.tmp' % (path, os.getpid())
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)

for dirpath, dirs, files in os.walk(staging):
    dirs.sort()
    for name in sorted(files):
        if not name.endswith('.py'):
            continue
        src = os.path.join(dirpath, name)
        rel = os.path.relpath(src, staging)
        cached_src = os.path.join(cache[0], rel) if cache else None
        if cached_src is not None and read(cached_src) == read(src):
            st = os.stat(cached_src)
            os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
        else:
            cached_src = None
        head = header(src)
        for level in (0, 1, 2):
            pyc = importlib.util.cache_from_source(src, optimization=level or '')
            kept = cached_src and importlib.util.cache_from_source(
                cached_src, optimization=level or '')
            data = read(kept) if kept else None
            if data is not None and data[:16] == head:
                write(pyc, data)
                continue
            py_compile.compile(src, cfile=pyc, dfile=os.path.join(final, rel), doraise=True,
                               optimize=level, invalidation_mode=MODE)
            if kept:
                try:
                    write(kept, read(pyc))
                except (OSError, TypeError):
                    pass  # a cache this process cannot write: compiled again next time
"""


#: Bytecode of a sitecustomize sitewarden edits: ``paths`` prints the bytecode file of
#: each optimisation level as the target names it, ``compile`` (re)writes them.
SOURCE_BYTECODE_SCRIPT = """\
import importlib.util, json, py_compile, sys
mode, source, levels = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
out = {}
for level in levels:
    out[level] = importlib.util.cache_from_source(source, optimization=level or '')
    if mode == 'compile':
        py_compile.compile(source, cfile=out[level], doraise=True, optimize=level,
                           invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
print(json.dumps(out))
"""

#: Optimisation levels an interpreter loads bytecode for: none, ``-O``, ``-OO``.
BYTECODE_LEVELS = (0, 1, 2)


def _source_bytecode(python: str, mode: str, source: str,
                     levels: tuple[int, ...] | list[int] = BYTECODE_LEVELS) -> dict[int, str]:
    """Run :data:`SOURCE_BYTECODE_SCRIPT` with the target interpreter (``-I -S``)."""
    if not levels:
        return {}
    proc = subprocess.run(
        [python, "-I", "-S", "-c", SOURCE_BYTECODE_SCRIPT, mode, source, *map(str, levels)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )
    if proc.returncode != 0:
        raise DeployError("%s could not compile %s: %s" % (
            python, source, (proc.stderr.strip().splitlines() or ["?"])[-1]))
    return {int(k): v for k, v in json.loads(proc.stdout).items()}


def _compile(target: Target, staging: Path, final: Path) -> None:
    """Compile bytecode with the target interpreter itself (:data:`COMPILE_SCRIPT`),
    reusing what an earlier install into the same kind of interpreter compiled.

    ``-I``: neither ``PYTHON*`` variables, the user site nor the current directory
    (the CLI may run as root in a directory others can write: a ``py_compile.py``
    there must not run); ``-S``: no ``.pth`` files."""
    proc = subprocess.run(
        [target.executable, "-I", "-S", "-c", COMPILE_SCRIPT, str(staging), str(final),
         os.path.join(payload.payload_dir(), PACKAGE)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
    )
    if proc.returncode != 0:
        raise DeployError(
            "%s could not compile the runtime: %s"
            % (target.executable, (proc.stderr.strip().splitlines() or ["?"])[-1])
        )


def _files_under(root: Path, prefix: str) -> list[str]:
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            out.append(prefix + rel.replace(os.sep, "/"))
    return sorted(out)


def _chmod_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)


# ---------------------------------------------------------------- install


def install(target: Target, site_dir: Path, hook: str | None = None) -> Deployment:
    """Deploy (or upgrade in place) the guard into ``site_dir`` of ``target``; ``hook``
    None: :func:`default_hook` for its version."""
    if hook is None:
        hook = default_hook(target.version)
    if hook not in HOOKS:
        raise DeployError("unknown hook %r (choose pth, start or sitecustomize)" % hook)
    if hook == "start" and tuple(target.version) < START_READ_FROM:
        raise DeployError(
            "Python %s does not read .start files (PEP 829, Python 3.15+); use the default "
            ".pth hook" % target.version_string)
    hook_texts = _hook_texts(hook)  # before anything is written: a broken CLI writes nothing
    site_dir = Path(os.path.abspath(site_dir))
    refuse_distro_site_dir(target, site_dir)
    created_dirs: list[str] = []
    if not site_dir.exists():
        created_dirs = _make_dirs(site_dir)
    if not site_dir.is_dir():
        raise DeployError("%s is not a directory" % site_dir)
    if not os.access(site_dir, os.W_OK | os.X_OK):
        raise DeployError(
            "%s is not writable by this user; run as its owner (e.g. with sudo) "
            "or use --user" % site_dir
        )
    try:
        with _locked(site_dir):
            return _install_locked(target, site_dir, hook, created_dirs, hook_texts)
    except DeployError:
        _undo_created_dirs(created_dirs)
        raise
    except OSError as exc:
        _undo_created_dirs(created_dirs)
        raise DeployError(
            "cannot write to %s: %s" % (exc.filename or site_dir, exc.strerror or exc)
        ) from None


def _hook_texts(hook: str) -> dict[str, str]:
    """The startup files ``hook`` installs, read from this CLI's installation; a
    DeployError naming the fix when they cannot be (a partial copy of sitewarden)."""
    names = HOOK_FILES[hook] + ((SITECUSTOMIZE_BLOCK,) if hook == "sitecustomize" else ())
    try:
        return {name: payload.hook_text(name) for name in names}
    except OSError as exc:
        raise DeployError(
            "this sitewarden installation is incomplete (%s): nothing was deployed; "
            "reinstall sitewarden (pip install --force-reinstall sitewarden, or "
            "apt install --reinstall sitewarden)" % (exc.strerror or exc)) from None


def _undo_created_dirs(created: list[str]) -> None:
    for d in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(d)


def _install_locked(
    target: Target, site_dir: Path, hook: str, created_dirs: list[str],
    hook_texts: dict[str, str],
) -> Deployment:
    package = site_dir / PACKAGE
    previous = _previous_deployment(site_dir, package)
    old_sc = None
    if previous is not None and previous.manifest is not None:
        created_dirs = previous.manifest.get("created_dirs", []) + created_dirs
        old_sc = previous.manifest.get("sitecustomize")
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=site_dir))
    try:
        new_package = staging / PACKAGE
        payload.write_tree(staging, payload.runtime_files())
        _compile(target, new_package, package)
        _chmod_tree(new_package)
        hook_files = list(HOOK_FILES[hook])
        sitecustomize = None
        if hook == "sitecustomize":
            sitecustomize = _add_sitecustomize_block(target, site_dir, old_sc,
                                                     hook_texts[SITECUSTOMIZE_BLOCK])
        elif old_sc is not None:
            _remove_sitecustomize_block(old_sc, target.executable)
        files = _files_under(new_package, PACKAGE + "/") + [MANIFEST] + hook_files
        _write_manifest(new_package / "_deployment.json", {
            "version": sitewarden.__version__,
            "hook": hook,
            "python": target.executable,
            "python_version": target.version_string,
            "site_dir": str(site_dir),
            "files": sorted(set(files)),
            "created_dirs": created_dirs,
            "sitecustomize": sitecustomize,
            "written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        })
        _swap_in(new_package, package, staging / "old")
        _write_hooks(site_dir, hook_files, hook_texts)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    dep = read_deployment(site_dir)
    assert dep is not None
    return dep


def _previous_deployment(site_dir: Path, package: Path) -> Deployment | None:
    """What ``site_dir`` holds, after refusing what an install must not replace: the Debian
    package's files, symlinks at our names, a ``sitewarden`` package we did not deploy."""
    previous = read_deployment(site_dir)
    if previous is not None and previous.installer == DPKG:
        raise DeployError(
            "%s holds the Debian package sitewarden (dpkg owns its files): upgrade it with "
            "apt, or deploy elsewhere with --user or --site-dir" % site_dir)
    _clean_stale_staging(site_dir)
    for path in (package, site_dir / PTH, site_dir / START):
        _refuse_symlink(path)
    previous = read_deployment(site_dir)
    if package.exists() and (previous is None or previous.manifest is None):
        raise DeployError(
            "%s already holds a 'sitewarden' package that sitewarden did not deploy "
            "(installed by pip?); deploy elsewhere with --user or --site-dir, or remove it first"
            % site_dir
        )
    return previous


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.chmod(path, 0o644)


def _swap_in(new_package: Path, package: Path, old: Path) -> None:
    """Put the staged package in place, atomically where the kernel can exchange."""
    if package.exists():
        if not _exchange(new_package, package):
            os.rename(package, old)
            os.rename(new_package, package)
    else:
        os.rename(new_package, package)


def _write_hooks(site_dir: Path, hook_files: list[str], texts: dict[str, str]) -> None:
    """Hooks last: a kill before this point leaves an inert or the old hook.  The new one
    is written before the other kind is removed (e.g. the .start an older sitewarden wrote
    beside its .pth), so a start always finds one of them."""
    for name in hook_files:
        _atomic_write(site_dir / name, texts[name].encode("utf-8"))
    for name in (PTH, START):
        if name not in hook_files:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(site_dir / name)


# ---------------------------------------------------------------- sitecustomize


def _add_sitecustomize_block(target: Target, site_dir: Path,
                             previous: dict[str, Any] | None, text: str) -> dict[str, Any]:
    """Append the guard's block (``text``) to the interpreter's sitecustomize, or create
    one."""
    block = text if text.endswith("\n") else text + "\n"
    existing = target.sitecustomize
    if previous is not None:
        _remove_sitecustomize_block(previous, target.executable)
    if existing and not os.path.exists(existing):
        existing = None  # it was ours and we just removed it
    if existing:
        if not existing.endswith(".py"):
            raise DeployError(
                "the interpreter's sitecustomize is %s, not a .py file; sitewarden will not "
                "edit it. Use the default --hook pth" % existing
            )
        real = Path(os.path.realpath(existing))
        st = os.stat(real)
        original = real.read_bytes()
        if BLOCK_BEGIN.encode() in original:
            raise DeployError("%s already holds a sitewarden block" % real)
        inserted = block if original.endswith(b"\n") or not original else "\n" + block
        bytecode = _bytecode_before(target.executable, existing)
        _atomic_write(real, original + inserted.encode("utf-8"), like=st)
        info = {
            "path": str(real),
            "link": existing if str(real) != existing else None,
            "created": False,
            "inserted": inserted,
            "original_mtime_ns": st.st_mtime_ns,
            "bytecode": bytecode,
        }
        _compile_sitecustomize(target.executable, info)
        return info
    path = site_dir / "sitecustomize.py"
    _refuse_symlink(path)
    header = "# Created by `sitewarden install --hook sitecustomize`.\n"
    bytecode = _bytecode_before(target.executable, str(path))
    _atomic_write(path, (header + block).encode("utf-8"))
    info = {"path": str(path), "link": None, "created": True, "inserted": header + block,
            "original_mtime_ns": None, "bytecode": bytecode}
    _compile_sitecustomize(target.executable, info)
    return info


def _bytecode_before(python: str, source: str) -> dict[str, Any]:
    """Where the target keeps the bytecode of ``source`` (as ``import sitecustomize``
    names it: through the stdlib's symbolic link on Debian), and which of it exists."""
    paths = _source_bytecode(python, "paths", source)
    cache = os.path.dirname(paths[0])
    return {"source": source, "python": python,
            "paths": {str(level): p for level, p in paths.items()},
            "existed": [level for level, p in paths.items() if os.path.exists(p)],
            "cache_dir_created": not os.path.isdir(cache)}


def _compile_sitecustomize(python: str, info: dict[str, Any]) -> None:
    """Bytecode current for every optimisation level, written by the target itself:
    a user who cannot write ``__pycache__`` would otherwise compile the edited file
    at every start."""
    bytecode = info["bytecode"]
    _source_bytecode(python, "compile", bytecode["source"])


def _restore_bytecode(info: dict[str, Any], python: str | None) -> None:
    """After the file is restored (content and modification time): bytecode current
    again for the levels that had it, none for the levels that had none."""
    bytecode = info.get("bytecode")
    if not bytecode:
        if info.get("created"):
            _remove_pycache_for(Path(info["path"]))
        return
    existed = [int(level) for level in bytecode.get("existed", [])]
    source = bytecode["source"]
    if existed and os.path.exists(source):
        for exe in (python, bytecode.get("python")):
            if exe and os.path.exists(exe):
                with contextlib.suppress(DeployError, OSError, ValueError):
                    _source_bytecode(exe, "compile", source, existed)
                    break
    for level, path in bytecode.get("paths", {}).items():
        if int(level) not in existed or not os.path.exists(source):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    if bytecode.get("cache_dir_created") and bytecode.get("paths"):
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(bytecode["paths"]["0"]))


def _remove_sitecustomize_block(info: dict[str, Any], python: str | None = None) -> str | None:
    """Undo :func:`_add_sitecustomize_block` (the file, its modification time, its
    bytecode); returns a problem description or None."""
    path = Path(info["path"])
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        return None
    inserted = info["inserted"].encode("utf-8")
    if info.get("created"):
        if current == inserted:
            path.unlink()
            _restore_bytecode(info, python)
            _remove_pycache_for(path)
            return None
        rest = current.replace(inserted, b"", 1)
        _atomic_write(path, rest, like=os.stat(path))
        _restore_bytecode(info, python)
        return "%s was changed after sitewarden created it; kept it without the block" % path
    if inserted in current:
        idx = current.rfind(inserted)
        restored = current[:idx] + current[idx + len(inserted):]
        _atomic_write(path, restored, like=os.stat(path), mtime_ns=info.get("original_mtime_ns"))
        _restore_bytecode(info, python)
        return None
    return "%s no longer holds sitewarden's block as written; left it unchanged" % path


def _remove_pycache_for(source: Path) -> None:
    cache = source.parent / "__pycache__"
    stem = source.stem + "."
    try:
        names = os.listdir(cache)
    except OSError:
        return
    for name in names:
        if name.startswith(stem) and name.endswith(".pyc"):
            with contextlib.suppress(OSError):
                os.unlink(cache / name)
    with contextlib.suppress(OSError):
        os.rmdir(cache)  # only if now empty


# ---------------------------------------------------------------- uninstall


class Removal:
    """What ``uninstall`` removed, and what it could not."""

    def __init__(self, site_dir: Path, removed: list[str], problems: list[str],
                 created_dirs: list[str] | None = None) -> None:
        self.site_dir = site_dir
        self.removed = removed
        self.problems = problems
        self.created_dirs = created_dirs or []


def uninstall(site_dir: Path) -> Removal:
    """Remove the deployment in ``site_dir``: exactly its manifest's files, the
    bytecode interpreters wrote for them, and the sitecustomize block."""
    site_dir = Path(os.path.abspath(site_dir))
    if not site_dir.is_dir():
        raise DeployError("%s does not exist" % site_dir)
    if not os.access(site_dir, os.W_OK | os.X_OK):
        raise DeployError("%s is not writable by this user; run as its owner" % site_dir)
    try:
        with _locked(site_dir):
            removal = _uninstall_locked(site_dir)
    except OSError as exc:
        raise DeployError("cannot remove from %s: %s" % (site_dir, exc.strerror or exc)) from None
    # Directories the install created (e.g. a new user site), if now empty.
    _undo_created_dirs(removal.created_dirs)
    return removal


def _uninstall_locked(site_dir: Path) -> Removal:
    dep = read_deployment(site_dir)
    if dep is not None and dep.installer == DPKG:
        raise DeployError(
            "%s holds the Debian package sitewarden (dpkg owns its files): remove it with "
            "apt remove sitewarden" % site_dir)
    leftovers = _clean_stale_staging(site_dir)
    dep = read_deployment(site_dir)
    if dep is None:
        if leftovers:  # a killed first install: what it left was all there was
            return Removal(site_dir, leftovers, [])
        raise DeployError("no sitewarden deployment in %s" % site_dir)
    removed: list[str] = []
    problems: list[str] = []
    manifest = dep.manifest or {}
    # Hooks first, so no new process loads a half-removed runtime.
    for name in (PTH, START):
        path = site_dir / name
        if os.path.lexists(path):
            os.unlink(path)
            removed.append(name)
    if manifest.get("sitecustomize"):
        problem = _remove_sitecustomize_block(manifest["sitecustomize"], manifest.get("python"))
        if problem:
            problems.append(problem)
        removed.append(manifest["sitecustomize"]["path"])
    package = site_dir / PACKAGE
    if package.is_symlink():
        problems.append("%s is a symbolic link; left it alone" % package)
    elif package.is_dir():
        listed = set(manifest.get("files", []))
        foreign = [
            f for f in _files_under(package, PACKAGE + "/")
            if f not in listed and not (f.endswith(".pyc") and "/__pycache__/" in f)
        ]
        if foreign and dep.manifest is not None:
            problems.append(
                "kept files in %s that sitewarden did not write: %s" % (package, ", ".join(foreign))
            )
            for f in sorted(listed):
                if f.startswith(PACKAGE + "/"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(site_dir / f)
        else:
            # Move aside first: a kill mid-way leaves a hidden directory, not half a package.
            aside = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=site_dir))
            os.rename(package, aside / PACKAGE)
            shutil.rmtree(aside)
        removed.append(PACKAGE + "/")
    return Removal(site_dir, removed, problems, manifest.get("created_dirs", []))
