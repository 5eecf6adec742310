"""Installed distributions, written the way a distro package or pip leaves them.

Shadowing checks and installer guards read installed metadata, so tests need
"installed" packages without running an installer: ``make_dist`` writes the
modules and a ``*.dist-info`` (what pip and recent Debian packages leave) or a
``*.egg-info`` directory (what most Debian ``python3-*`` packages still ship)
straight into a site directory.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from typing import Iterable, List, Mapping, Optional, Union

Content = Union[str, bytes]


def _escape(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name)


def _record_line(site: Path, path: Path) -> str:
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path.relative_to(site).as_posix(), digest, len(data))


def _write(path: Path, content: Content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def make_dist(
    site_dir: Union[str, os.PathLike],
    name: str,
    version: str,
    modules: Optional[Mapping[str, Content]] = None,
    requires: Iterable[str] = (),
    kind: str = "dist-info",
    installer: Optional[str] = "debian",
    record: bool = True,
) -> Path:
    """Install distribution ``name`` ``version`` into ``site_dir``; return its metadata dir.

    ``modules`` maps paths relative to ``site_dir`` (``"pkg/__init__.py"``,
    ``"six.py"``) to their content; by default one module named after the
    distribution.  ``requires`` are PEP 508 strings (``Requires-Dist`` or
    ``requires.txt``).  For ``kind="dist-info"``, ``installer`` is written to
    ``INSTALLER`` (None: no file) and ``record`` writes a ``RECORD`` with
    hashes; ``kind="egg-info"`` writes ``PKG-INFO``, ``top_level.txt`` and
    ``requires.txt`` like Debian's packages (no installer, no record).
    """
    site = Path(site_dir)
    if modules is None:
        modules = {_escape(name).lower() + ".py": "__version__ = %r\n" % version}
    requires = list(requires)
    files: List[Path] = [_write(site / rel, content) for rel, content in modules.items()]
    headers = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
    if kind == "egg-info":
        meta = site / ("%s-%s.egg-info" % (name.replace("-", "_"), version))
        _write(meta / "PKG-INFO", headers)
        top = sorted({rel.split("/")[0].rsplit(".py", 1)[0] for rel in modules})
        _write(meta / "top_level.txt", "".join(t + "\n" for t in top))
        if requires:
            _write(meta / "requires.txt", "".join(r + "\n" for r in requires))
        return meta
    if kind != "dist-info":
        raise ValueError("kind must be 'dist-info' or 'egg-info', not %r" % kind)
    meta = site / ("%s-%s.dist-info" % (_escape(name), version))
    files.append(_write(meta / "METADATA",
                        headers + "".join("Requires-Dist: %s\n" % r for r in requires)))
    if installer is not None:
        files.append(_write(meta / "INSTALLER", installer + "\n"))
    if record:
        lines = [_record_line(site, f) for f in files]
        lines.append("%s,," % (meta / "RECORD").relative_to(site).as_posix())
        _write(meta / "RECORD", "\n".join(lines) + "\n")
    return meta
