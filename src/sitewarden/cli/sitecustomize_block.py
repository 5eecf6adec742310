"""The ``sitecustomize`` hook: sitewarden's marked block in the interpreter's
``sitecustomize.py``, added, removed and found orphaned.

A file sitewarden does not own is edited, so undoing it is exact: the block
added is recorded in the manifest (:func:`add_block`'s result), and removing it
restores the file byte for byte, its modification time and the bytecode the
target had for it (or none where it had none), or creates and deletes the file
when there was none.  The block's text is ``hooks/sitecustomize-block.py``.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..facts.records import Record, _fields
from .bytecode import source_bytecode
from .deployed import BLOCK_BEGIN, BLOCK_END, DeployError
from .fileops import atomic_write, refuse_symlink

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

    from .targets import Target

#: The first line of a sitecustomize.py that sitewarden created.
CREATED_HEADER = "# Created by `sitewarden install --hook sitecustomize`.\n"


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
    if rest in ("", CREATED_HEADER):
        p.unlink()
        _remove_pycache_for(p)
    else:
        atomic_write(p, rest.encode("utf-8"), like=os.stat(p))
    return True


def add_block(target: Target, site_dir: Path,
              previous: dict[str, Any] | None, text: str) -> dict[str, Any]:
    """Append the guard's block (``text``) to the interpreter's sitecustomize, or create
    one."""
    block = text if text.endswith("\n") else text + "\n"
    existing = target.sitecustomize
    if previous is not None:
        remove_block(previous, target.executable)
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
        atomic_write(real, original + inserted.encode("utf-8"), like=st)
        block = Block.make(path=str(real), link=existing if str(real) != existing else None,
                           created=False, inserted=inserted, original_mtime_ns=st.st_mtime_ns,
                           bytecode=bytecode)
        _compile_sitecustomize(target.executable, block)
        return block.as_json()
    path = site_dir / "sitecustomize.py"
    refuse_symlink(path)
    bytecode = _bytecode_before(target.executable, str(path))
    atomic_write(path, (CREATED_HEADER + block).encode("utf-8"))
    edit = Block.make(path=str(path), link=None, created=True, inserted=CREATED_HEADER + block,
                      original_mtime_ns=None, bytecode=bytecode)
    _compile_sitecustomize(target.executable, edit)
    return edit.as_json()


class BlockBytecode(Record):
    """The bytecode of the edited sitecustomize before the edit: its ``source`` (as ``import
    sitecustomize`` names it), the ``python`` that compiles it, its file per optimisation
    level (``paths``), the levels that ``existed``, and whether its ``__pycache__`` was
    created (``cache_dir_created``)."""

    __slots__ = ("source", "python", "paths", "existed", "cache_dir_created")
    FIELDS = _fields(*__slots__)


class Block(Record):
    """What :func:`add_block` did, as the manifest keeps it: the file (``path``, and the
    ``link`` it was reached through), whether sitewarden ``created`` it, the text
    ``inserted``, its modification time before (``original_mtime_ns``), its ``bytecode``."""

    __slots__ = ("path", "link", "created", "inserted", "original_mtime_ns", "bytecode")
    FIELDS = _fields(*__slots__[:-1]) + (("bytecode", "bytecode", BlockBytecode),)


def _bytecode_before(python: str, source: str) -> BlockBytecode:
    """Where the target keeps the bytecode of ``source`` (as ``import sitecustomize``
    names it: through the stdlib's symbolic link on Debian), and which of it exists."""
    paths = source_bytecode(python, "paths", source)
    cache = os.path.dirname(paths[0])
    return BlockBytecode.make(
        source=source, python=python, paths={str(level): p for level, p in paths.items()},
        existed=[level for level, p in paths.items() if os.path.exists(p)],
        cache_dir_created=not os.path.isdir(cache))


def _compile_sitecustomize(python: str, block: Block) -> None:
    """Bytecode current for every optimisation level, written by the target itself:
    a user who cannot write ``__pycache__`` would otherwise compile the edited file
    at every start."""
    source_bytecode(python, "compile", block.bytecode.source)


def _restore_bytecode(block: Block, python: str | None) -> None:
    """After the file is restored (content and modification time): bytecode current
    again for the levels that had it, none for the levels that had none."""
    bytecode = block.bytecode
    if not bytecode:
        if block.created:
            _remove_pycache_for(Path(block.path))
        return
    existed = [int(level) for level in bytecode.existed or ()]
    source, paths = bytecode.source, bytecode.paths or {}
    if existed and os.path.exists(source):
        for exe in (python, bytecode.python):
            if exe and os.path.exists(exe):
                with contextlib.suppress(DeployError, OSError, ValueError):
                    source_bytecode(exe, "compile", source, existed)
                    break
    for level, path in paths.items():
        if int(level) not in existed or not os.path.exists(source):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    if bytecode.cache_dir_created and paths:
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(paths[min(paths, key=int)]))


def remove_block(info: dict[str, Any], python: str | None = None) -> str | None:
    """Undo :func:`add_block` (the file, its modification time, its bytecode), from the
    manifest's record of it (:class:`Block`'s JSON); returns a problem description or None."""
    block = Block.from_json(info)
    path = Path(block.path)
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        return None
    inserted = block.inserted.encode("utf-8")
    if block.created:
        if current == inserted:
            path.unlink()
            _restore_bytecode(block, python)
            _remove_pycache_for(path)
            return None
        rest = current.replace(inserted, b"", 1)
        atomic_write(path, rest, like=os.stat(path))
        _restore_bytecode(block, python)
        return "%s was changed after sitewarden created it; kept it without the block" % path
    if inserted in current:
        idx = current.rfind(inserted)
        restored = current[:idx] + current[idx + len(inserted):]
        atomic_write(path, restored, like=os.stat(path), mtime_ns=block.original_mtime_ns)
        _restore_bytecode(block, python)
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
