"""Bytecode written by the target interpreter itself, never by the CLI's.

The CLI may run on another Python than the target (a venv, pipx): only the
target knows its magic number, its ``__pycache__`` names and its optimisation
levels, so each of these runs in it (``-I -S``) as a small script.  What is
compiled: the staged runtime at ``install`` (:func:`compile_runtime`, reusing the
payload cache's bytecode), and a source sitewarden edits (the sitecustomize a
block goes into: :func:`source_bytecode`).
"""

from __future__ import annotations

import json
import subprocess

from ..pathfacts import package_dir
from . import payload
from .deployed import DeployError

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from pathlib import Path

    from .targets import Target


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


def source_bytecode(python: str, mode: str, source: str,
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


def compile_runtime(target: Target, staging: Path, final: Path) -> None:
    """Compile bytecode with the target interpreter itself (:data:`COMPILE_SCRIPT`),
    reusing what an earlier install into the same kind of interpreter compiled.

    ``-I``: neither ``PYTHON*`` variables, the user site nor the current directory
    (the CLI may run as root in a directory others can write: a ``py_compile.py``
    there must not run); ``-S``: no ``.pth`` files."""
    proc = subprocess.run(
        [target.executable, "-I", "-S", "-c", COMPILE_SCRIPT, str(staging), str(final),
         package_dir(payload.payload_dir())],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
    )
    if proc.returncode != 0:
        raise DeployError(
            "%s could not compile the runtime: %s"
            % (target.executable, (proc.stderr.strip().splitlines() or ["?"])[-1])
        )
