"""The file operations of ``install`` and ``uninstall``, each safe against a kill.

Kept apart from what is deployed (``deploy``) so that the crash-safety rules are
read in one place: a file is replaced through a temporary file and a rename
(never through a symbolic link), a package directory is swapped in with one
atomic rename (``RENAME_EXCHANGE`` where the kernel has it), hidden staging
leftovers of a killed run are removed by the next one, and concurrent runs on
one directory are serialised with ``flock`` on the directory itself, so no lock
file is left behind.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

from .deployed import STAGING_PREFIX, DeployError, _staging_leftovers

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Iterator


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Serialise deployers on ``directory`` without leaving a lock file in it."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int = 0o644, like: os.stat_result | None = None,
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


def exchange(a: Path, b: Path) -> bool:
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


def remove_tree(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    shutil.rmtree(path)


def clean_stale_staging(site_dir: Path) -> list[str]:
    """Remove leftovers of killed runs (hidden ``.sitewarden-*`` entries); their names."""
    names = _staging_leftovers(site_dir)
    for name in names:
        with contextlib.suppress(OSError):
            remove_tree(site_dir / name)
    return names


def refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise DeployError(
            "%s is a symbolic link; sitewarden never writes through links. Remove it first." % path
        )


def make_dirs(path: Path) -> list[str]:
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


def undo_created_dirs(created: list[str]) -> None:
    """Remove the directories :func:`make_dirs` created, innermost first, if empty."""
    for d in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(d)


def files_under(root: Path, prefix: str) -> list[str]:
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            out.append(prefix + rel.replace(os.sep, "/"))
    return sorted(out)


def chmod_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)
