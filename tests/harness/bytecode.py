"""Bytecode as importlib judges it, asked of the target interpreter itself.

Used by the tests that keep bytecode current (the deployed runtime, an edited
``sitecustomize``): a ``.pyc`` is current when its header holds this interpreter's
magic number, the timestamp flag and the source's modification time and size.  The
oracle (``tests/test_startup_oracle.py``) builds bytecode that importlib will run
instead of a harmless source the same way, by the target itself (:func:`build_pycs`).
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Tuple

#: Optimisation levels and the flags that select them: none, ``-O``, ``-OO``.
FLAGS = {0: [], 1: ["-O"], 2: ["-OO"]}

#: ``{source: [{level: state}, mtime_ns]}`` for each argument: a ``.py`` file, or a
#: directory (every ``.py`` below it, keyed by relative path).  Run with ``-I -S``.
PYC_STATES = r"""
import importlib.util, json, os, sys

def states(src):
    st = os.stat(src)
    out = {}
    for level in (0, 1, 2):
        pyc = importlib.util.cache_from_source(src, optimization=level or '')
        try:
            with open(pyc, 'rb') as f:
                head = f.read(16)
        except FileNotFoundError:
            out[level] = 'absent'
            continue
        problems = []
        if head[:4] != importlib.util.MAGIC_NUMBER:
            problems.append('magic')
        if int.from_bytes(head[4:8], 'little') != 0:
            problems.append('not timestamp-based')
        if int.from_bytes(head[8:12], 'little') != int(st.st_mtime) & 0xFFFFFFFF:
            problems.append('mtime')
        if int.from_bytes(head[12:16], 'little') != st.st_size & 0xFFFFFFFF:
            problems.append('size')
        out[level] = 'current' if not problems else 'stale: ' + ', '.join(problems)
    return [out, st.st_mtime_ns]

result = {}
for top in sys.argv[1:]:
    if not os.path.isdir(top):
        result[top] = states(top)
        continue
    for dirpath, dirs, files in os.walk(top):
        for name in files:
            if name.endswith('.py'):
                src = os.path.join(dirpath, name)
                result[os.path.relpath(src, top)] = states(src)
print(json.dumps(result))
"""


def pyc_states(target, path: str) -> Dict[str, Tuple[Dict[int, str], int]]:
    """:data:`PYC_STATES` of ``path`` (a file or a directory) on ``target``."""
    proc = target.run([target.executable, "-I", "-S", "-c", PYC_STATES, str(path)])
    assert proc.returncode == 0, proc.stderr
    return {src: ({int(k): v for k, v in levels.items()}, mtime_ns)
            for src, (levels, mtime_ns) in json.loads(proc.stdout).items()}


def verbose_lines(target, level: int, code: str, where: str) -> List[str]:
    """Run ``code`` on ``target`` as ``nobody`` at optimisation ``level`` under ``-v``:
    the lines of importlib's report that mention ``where``."""
    proc = target.run(target.nobody([target.executable, *FLAGS[level], "-v", "-c", code]))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in proc.stderr.splitlines() if where in line]


def compiled(lines: List[str]) -> List[str]:
    """The :func:`verbose_lines` where importlib compiled a ``.py`` instead of loading
    its bytecode, or found that bytecode stale."""
    return [line for line in lines if "code object from" in line
            and line.rstrip("'").endswith(".py")] or [line for line in lines if "stale" in line]


#: Builds bytecode on the target itself (``-I -S``), from a JSON list in argv[1]: each
#: ``{kind, path, code, filename, source, optimize}`` (see ``harness.payloads.Pyc``):
#: ``code`` compiled with ``filename`` and ``optimize`` by the target, written to
#: ``path`` with a PEP 552 header valid for ``source`` (``timestamp``: its mtime and
#: size; ``checked``/``unchecked``: its hash, the check flag set or not), a header of
#: zeros (``sourceless``, which nothing checks) or none (``marshal``).
BUILD_PYCS = r"""
import importlib.util, json, marshal, os, sys
with open(sys.argv[1]) as f:
    requests = json.load(f)
for r in requests:
    code = compile(r["code"], r["filename"], "exec", dont_inherit=True,
                   optimize=r.get("optimize", 0))
    data = marshal.dumps(code)
    kind = r["kind"]
    if kind == "timestamp":
        st = os.stat(r["source"])
        head = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little") + (
            (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") +
            (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    elif kind in ("checked", "unchecked"):
        with open(r["source"], "rb") as f:
            digest = importlib.util.source_hash(f.read())
        head = importlib.util.MAGIC_NUMBER + (3 if kind == "checked" else 1).to_bytes(
            4, "little") + digest
    elif kind == "sourceless":
        head = importlib.util.MAGIC_NUMBER + bytes(12)
    elif kind == "marshal":
        head = b""
    else:
        raise SystemExit("unknown kind %r" % kind)
    os.makedirs(os.path.dirname(r["path"]), exist_ok=True)
    with open(r["path"], "wb") as f:
        f.write(head + data)
"""


def build_pycs(target, requests: List[dict], scratch) -> None:
    """Build ``requests`` (:data:`BUILD_PYCS`) with ``target``'s own interpreter, as
    root where its files are; ``scratch``: a host directory the target sees (its
    ``tmp``), for the request list."""
    if not requests:
        return
    listing = os.path.join(str(scratch), "oracle-pycs-%d.json" % len(os.listdir(str(scratch))))
    with open(listing, "w") as f:
        json.dump(requests, f)
    proc = target.run([target.executable, "-I", "-S", "-c", BUILD_PYCS, listing])
    assert proc.returncode == 0, proc.stderr[-3000:]
