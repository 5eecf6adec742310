"""Run a command as the unprivileged user ``nobody`` (uid/gid 65534), as root.

Root reads every file, so "unreadable" inputs (a marker, a metadata
directory) and read-only site directories only mean something for another
user.  pyenv's interpreters and the wheel cache live under ``/root``
(mode 0700), which ``nobody`` cannot traverse; rather than change that
directory's mode, :func:`as_nobody` wraps the command in a private mount
namespace (``unshare -m``) where each such directory is replaced by a 0755
tmpfs holding bind mounts of exactly the paths to keep (the original is
reached through a bind mount in a 0700 staging directory), then drops
privileges with ``setpriv``.  The host never sees any of it.

Temporary directories the command needs must be traversable by ``nobody``
(``public_tmpdir``); pytest's ``tmp_path`` is not (0700).
"""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

NOBODY = 65534

_stage: List[str] = []


def default_keep() -> List[str]:
    """What unprivileged runs need under private directories: the interpreters
    (pyenv's root) and the wheel cache (pips, setuptools...)."""
    from .interpreters import pyenv_root
    from .wheels import cache_dir

    keep = [str(cache_dir())]
    root = pyenv_root()
    if root is not None:
        keep.append(os.path.realpath(root))
    return keep


def _blocked_ancestor(path: str) -> Optional[str]:
    """The topmost proper ancestor of ``path`` that others cannot traverse, or None."""
    parts = Path(path).parts
    for n in range(1, len(parts)):
        ancestor = str(Path(*parts[:n]))
        if not os.stat(ancestor).st_mode & stat.S_IXOTH:
            return ancestor
    return None


def _stage_dir() -> str:
    if not _stage:
        d = tempfile.mkdtemp(prefix="sitewarden-nobody-stage-")  # 0700: only root sees inside
        _stage.append(d)
        atexit.register(shutil.rmtree, d, True)
    return _stage[0]


def as_nobody(argv: Sequence[str], keep: Optional[Iterable[str]] = None) -> List[str]:
    """``argv`` wrapped to run as ``nobody`` with ``keep`` (default :func:`default_keep`)
    reachable; run it as root (directly, or inside another mount namespace)."""
    groups: Dict[str, List[str]] = {}
    for path in (default_keep() if keep is None else keep):
        path = os.path.realpath(path)
        ancestor = _blocked_ancestor(path)
        if ancestor is not None:
            rel = os.path.relpath(path, ancestor)
            below = Path(ancestor)
            for part in Path(rel).parts[:-1]:
                below = below / part
                if not os.stat(below).st_mode & stat.S_IXOTH:
                    raise RuntimeError("%s: more than one private ancestor" % path)
            groups.setdefault(ancestor, []).append(rel)
    q = shlex.quote
    lines = ["set -e"]
    for n, (ancestor, rels) in enumerate(sorted(groups.items())):
        stage = os.path.join(_stage_dir(), str(n))
        os.makedirs(stage, exist_ok=True)
        # --rbind: what is mounted below the ancestor comes along (a root's wheel cache).
        lines.append("mount --rbind %s %s" % (q(ancestor), q(stage)))
        lines.append("mount -t tmpfs -o mode=0755 sitewarden-nobody %s" % q(ancestor))
        for rel in sorted(rels):
            inside = os.path.join(ancestor, rel)
            lines.append("mkdir -p %s" % q(inside))
            lines.append("mount --bind %s %s" % (q(os.path.join(stage, rel)), q(inside)))
    lines.append('exec setpriv --reuid=%d --regid=%d --clear-groups -- "$@"' % (NOBODY, NOBODY))
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", "\n".join(lines),
            "sitewarden-nobody", *map(str, argv)]


def public_tmpdir(prefix: str = "sitewarden-public-") -> Path:
    """A new temporary directory (mode 0755) that ``nobody`` can traverse; the caller
    removes it."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    d.chmod(0o755)
    return d


def available() -> bool:
    """Root, with ``unshare``, ``mount`` and ``setpriv``."""
    return os.geteuid() == 0 and all(shutil.which(t) for t in ("unshare", "mount", "setpriv"))
