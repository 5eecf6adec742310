"""The runtime tree deployed into interpreters: sitewarden plus a private packaging.

Built from the running CLI's own files.  ``packaging`` is copied from the
CLI's environment into ``sitewarden/_vendor/packaging`` (relative imports
only, checked), so the deployed guard never imports, shadows or depends on a
``packaging`` the target interpreter may or may not have.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

import sitewarden

#: packaging modules the runtime needs (``licenses`` and ``metadata`` are not).
VENDORED_PACKAGING_SKIP = {"licenses", "metadata.py", "py.typed", "__pycache__"}


def package_dir() -> Path:
    return Path(sitewarden.__file__).resolve().parent


def hooks_dir() -> Path:
    """Where ``sitewarden.pth``, ``sitewarden.start`` and the sitecustomize block are."""
    try:
        import sitewarden._hooks as hooks  # present only in a built wheel

        for entry in hooks.__path__:
            if (Path(entry) / "sitewarden.pth").is_file():
                return Path(entry)
    except ImportError:
        pass
    checkout = package_dir().parent.parent / "hooks"  # src/sitewarden -> hooks
    if (checkout / "sitewarden.pth").is_file():
        return checkout
    raise FileNotFoundError("sitewarden's hooks directory is missing from this installation")


def hook_text(name: str) -> str:
    return (hooks_dir() / name).read_text(encoding="utf-8")


def _runtime_sources() -> list[tuple[str, Path | None]]:
    """``(relative path inside the deployed tree, source file)`` pairs."""
    out = _code_sources()
    vendored = [p for rel, p in out if rel == "sitewarden/_vendor/packaging/__init__.py"]
    out.extend(_packaging_licenses(vendored[0].parent))
    return out


def _code_sources() -> list[tuple[str, Path | None]]:
    """The Python files of the runtime tree (no licence texts: finding those imports
    ``importlib.metadata``); ``None`` for the generated ``_vendor/__init__.py``."""
    out: list[tuple[str, Path | None]] = []
    pkg = package_dir()
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        if "__pycache__" in rel.parts or rel.parts[0] in ("_vendor", "_hooks"):
            continue
        out.append(("sitewarden/" + rel.as_posix(), path))
    vendor = pkg / "_vendor"
    if (vendor / "packaging" / "__init__.py").is_file():  # running from a deployed copy
        src = vendor / "packaging"
    else:
        import packaging  # the CLI's own, only when not running from a deployed copy

        src = Path(packaging.__file__).resolve().parent
    out.append(("sitewarden/_vendor/__init__.py", None))
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] in VENDORED_PACKAGING_SKIP or "__pycache__" in rel.parts:
            continue
        if path.is_file() and path.suffix == ".py":
            out.append(("sitewarden/_vendor/packaging/" + rel.as_posix(), path))
    return out


def _packaging_licenses(src: Path) -> list[tuple[str, Path]]:
    """packaging's licence texts travel with the vendored copy."""
    found = [p for p in src.glob("LICENSE*") if p.is_file()]  # a deployed copy keeps them here
    if not found:
        try:
            from importlib.metadata import distribution  # only when a tree is built

            dist = distribution("packaging")
            found = [
                Path(dist.locate_file(f)).resolve()
                for f in (dist.files or [])
                if Path(str(f)).name.startswith("LICENSE")
            ]
        except Exception:
            found = []
    return [("sitewarden/_vendor/packaging/" + p.name, p) for p in found if p.is_file()]


VENDOR_INIT = (
    '"""Private copies of third-party code, importable only as sitewarden._vendor.*."""\n'
)


def runtime_files() -> dict[str, bytes]:
    """The deployed tree's files (relative path -> bytes), validated."""
    files = {}
    for rel, path in _runtime_sources():
        data = VENDOR_INIT.encode() if path is None else path.read_bytes()
        vendored = rel.startswith("sitewarden/_vendor/packaging/") and rel.endswith(".py")
        if vendored and _absolute_packaging_imports(data):
            raise RuntimeError("vendored packaging imports itself absolutely in " + rel)
        if rel == "sitewarden/_vendor/packaging/utils.py":
            data = lazy_tags_import(data)
        files[rel] = data
    return files


#: ``packaging.utils`` imports ``tags`` (logging, subprocess, platform, sysconfig...) for
#: the one function that parses wheel file names; every user of ``specifiers`` and
#: ``markers`` pays for it.  The vendored copy imports it where it is used instead.
_TAGS_IMPORT = b"from .tags import Tag, parse_tag\n"
_TAGS_USE = b"    tags = parse_tag(parts[-1])\n"


def lazy_tags_import(source: bytes) -> bytes:
    """The vendored ``packaging/utils.py`` with ``tags`` imported on use (unchanged if
    this packaging is laid out differently: correct, only slower)."""
    if source.count(_TAGS_IMPORT) != 1 or source.count(_TAGS_USE) != 1:
        return source
    if b"from __future__ import annotations" not in source:
        return source  # ``Tag`` in annotations must stay unevaluated
    source = source.replace(
        _TAGS_IMPORT,
        b"# sitewarden: tags is imported where it is used (see payload.lazy_tags_import).\n")
    return source.replace(_TAGS_USE, b"    from .tags import parse_tag\n\n" + _TAGS_USE)


def _absolute_packaging_imports(source: bytes) -> list[int]:
    """Line numbers of ``import packaging...`` statements, which would escape the vendored copy."""
    import ast  # only when a tree is built, never at a cached check

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(n == "packaging" or n.startswith("packaging.") for n in names):
            lines.append(node.lineno)
    return lines


def _stamp(sources: list[tuple[str, Path | None]]) -> str:
    """A cache key from the runtime sources' names, sizes and modification times (no
    file read: ``check`` pays for this at every run).  Not a security measure: the
    cache is private to the user (see _private_cache_root)."""
    lines = []
    for rel, path in sources:
        st = path.stat() if path is not None else None
        lines.append("%s %s %s" % (rel, st and st.st_size, st and st.st_mtime_ns))
    text = "\n".join(lines).encode()
    return "%08x%08x" % (zlib.crc32(text), zlib.adler32(text))


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` under ``root`` with modes 0644/0755, whatever the umask."""
    for rel, data in files.items():
        dest = root / rel
        parent = dest.parent
        if not parent.is_dir():
            parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        os.chmod(dest, 0o644)
    for dirpath, _dirs, _files in os.walk(root):
        os.chmod(dirpath, 0o755)


def _private_cache_root() -> Path | None:
    """A cache directory only this user can write to, or None.

    The probe runs the cached copy inside target interpreters, possibly as
    root: a directory another user could write to would let them run code.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = Path(base) / "sitewarden" / "runtime"
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        for d in (root, root.parent):
            st = os.lstat(d)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return None
    except OSError:
        return None
    return root


def cache_key() -> str:
    """The name of this runtime's directory in the private cache."""
    return "%s-%s" % (sitewarden.__version__, _stamp(_code_sources()))


def probe_payload() -> Path:
    """A directory holding the runtime tree, for running the probe in a target.

    Cached in the user's private cache under a key made from the sources'
    names, sizes and times, so that a run of ``check`` reads no source file;
    each target writes its bytecode there once (``probe._load_runtime``).  A
    private temporary directory, removed when the CLI exits, when no safe cache exists.
    """
    root = _private_cache_root()
    if root is None:
        import atexit  # this and the next two: not on the cached path of every check
        import shutil
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="sitewarden-runtime-"))
        atexit.register(shutil.rmtree, str(tmp), True)  # not left behind at every run
        write_tree(tmp, runtime_files())
        return tmp
    final = root / cache_key()
    if (final / "sitewarden" / "__init__.py").is_file():
        return final
    import tempfile  # only when the cache is filled

    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    write_tree(staging, runtime_files())
    try:
        os.rename(staging, final)
    except OSError:  # another process won the race
        import shutil  # only when another process won the race

        shutil.rmtree(staging, ignore_errors=True)
    return final
