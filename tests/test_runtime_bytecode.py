"""The deployed runtime's bytecode is current, timestamp-based, for every level.

Every start of a guarded interpreter imports ``sitewarden``; a user who cannot write
the site directory's ``__pycache__`` would compile it at every start if its bytecode
were missing or stale, and a checked-hash ``.pyc`` (what ``py_compile`` writes when
``SOURCE_DATE_EPOCH`` is set, as image and package builders do) makes every start
read and hash the source.  So ``install`` compiles with the target interpreter, for
none, ``-O`` and ``-OO``, timestamp-based whatever the environment says, and keeps
that bytecode in the payload cache, where the next install into the same kind of
interpreter finds it instead of compiling again.  Checked by the ``.pyc`` headers
(magic number, flags, source mtime and size, as importlib validates them) and by
starting the interpreter as ``nobody`` under ``-v``: no sitewarden module is
compiled from source.  On every CPython 3.8+ (hermetic) and Debian's python.
"""

from __future__ import annotations

import os

import pytest

from harness.bytecode import FLAGS, compiled, pyc_states, verbose_lines
from harness.guarded import make_guarded
from harness.spread import spread


def _states(target) -> dict:
    return {rel: levels for rel, (levels, _mtime) in
            pyc_states(target, str(target.local_dir / "sitewarden")).items()}


def _not_current(states: dict) -> dict:
    return {rel: levels for rel, levels in states.items()
            if set(levels.values()) != {"current"}}


@pytest.fixture(params=spread(targets="local"))
def two_bare(request, tmp_path):
    """Two unguarded copies of one interpreter (Debian's: the same one, twice) and
    an empty payload cache for the CLI (``XDG_CACHE_HOME``)."""
    first = make_guarded(request.param, deploy=False)
    try:
        second = make_guarded(request.param, deploy=False)
    except BaseException:
        first.close()
        raise
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    try:
        yield first, second, {"XDG_CACHE_HOME": str(cache), "SOURCE_DATE_EPOCH": "1700000000"}
    finally:
        first.close()
        second.close()


def test_install_leaves_current_bytecode_and_reuses_it(two_bare):
    """Install under ``SOURCE_DATE_EPOCH``: every runtime module has current,
    timestamp-based bytecode for every level; the payload cache then holds it, and
    a second install into a fresh copy of the interpreter copies it (byte for byte)
    instead of compiling; neither deployment compiles anything at a start as nobody."""
    first, second, env = two_bare
    proc = first.cli("install", "--python", first.executable, env=env)
    assert proc.returncode == 0, proc.stderr
    states = _states(first)
    assert "__init__.py" in states and "guard/hooked.py" in states, sorted(states)
    assert not _not_current(states)
    cached = {}
    runtime = [d for d in (os.path.join(env["XDG_CACHE_HOME"], "sitewarden", "runtime", n)
                           for n in os.listdir(os.path.join(env["XDG_CACHE_HOME"],
                                                            "sitewarden", "runtime")))
               if not os.path.basename(d).startswith(".")]
    assert len(runtime) == 1, runtime
    for dirpath, _dirs, files in os.walk(os.path.join(runtime[0], "sitewarden")):
        for name in files:
            if name.endswith(".pyc"):
                with open(os.path.join(dirpath, name), "rb") as f:
                    cached[os.path.relpath(os.path.join(dirpath, name), runtime[0])] = f.read()
    assert any(".opt-2.pyc" in rel for rel in cached), sorted(cached)[:5]

    proc = second.cli("install", "--python", second.executable, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not _not_current(_states(second))
    reused = {rel: second.read_bytes(second.local_dir / rel) == data
              for rel, data in cached.items() if ".opt-" in rel}
    assert reused and all(reused.values()), [rel for rel, same in reused.items() if not same]

    for target in (first, second):
        for level in FLAGS:
            lines = verbose_lines(target, level, "import sitewarden.guard.hooked", "/sitewarden/")
            assert lines and not compiled(lines), (level, compiled(lines))
