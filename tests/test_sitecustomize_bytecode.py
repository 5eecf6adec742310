"""``install --hook sitecustomize`` keeps the edited file's bytecode current.

The deployer edits an existing ``sitecustomize`` (on Debian the conffile
``/etc/python3.X/sitecustomize.py``, behind the stdlib's symbolic link) whose
bytecode sits in the standard library's ``__pycache__``, which ordinary users
cannot write: stale bytecode there means every start by such a user compiles
the file again.  So install compiles it, with the target interpreter, for
every optimisation level (none, ``-O``, ``-OO``); uninstall restores the file
and its modification time and leaves bytecode current for the levels that had
it, and none for the others.  Checked by the ``.pyc`` headers (source mtime and
size, as importlib validates them) and by starting the interpreter as
``nobody`` under ``-v``: importlib says the bytecode "matches", never "code
object from" the source.  On every CPython 3.8+ (a hermetic copy, given a
Debian-shaped linked sitecustomize) and Debian's python.
"""

from __future__ import annotations

import json

#: ``{level: state}`` of ``sitecustomize``'s bytecode, computed by the target itself
#: (``-I -S``: no site, no guard): absent, current, or what is wrong.
PYC_STATE = r"""
import importlib.util, json, os, sys
source = sys.argv[1]
st = os.stat(source)
out = {}
for level in (0, 1, 2):
    pyc = importlib.util.cache_from_source(source, optimization=level or '')
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
print(json.dumps({"states": out, "mtime_ns": st.st_mtime_ns}))
"""

#: A distro-style sitecustomize: a file elsewhere, linked from the stdlib, compiled
#: (level 0 only, as Debian ships it) by root with the target interpreter.
PLANT = r"""
import os, py_compile, sys
conffile, link = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(conffile), exist_ok=True)
with open(conffile, 'w') as f:
    f.write('# the distro hook\ntry:\n    import sitewarden_no_such_hook\nexcept ImportError:\n'
            '    pass\n')
os.utime(conffile, (1714000000, 1714000000))
os.symlink(conffile, link)
"""

FLAGS = {0: [], 1: ["-O"], 2: ["-OO"]}


def _state(target, source):
    proc = target.run([target.executable, "-I", "-S", "-c", PYC_STATE, source])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    return {int(k): v for k, v in data["states"].items()}, data["mtime_ns"]


def _compiled_from_source(target, level, source):
    """Start the target as ``nobody`` at optimisation ``level``; True if importlib
    compiled ``sitecustomize`` from source instead of loading its bytecode."""
    proc = target.run(target.nobody([target.executable, *FLAGS[level], "-v", "-c", "pass"]))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if "sitecustomize" in line]
    assert any("sitecustomize" in line and "import" in line for line in lines), proc.stderr[-3000:]
    return [line for line in lines if "code object from" in line and line.rstrip("'").endswith(
        "sitecustomize.py")] or [line for line in lines if "stale" in line]


def test_sitecustomize_bytecode_current_after_install_and_uninstall(bare_target):
    target = bare_target
    source = str(target.stdlib / "sitecustomize.py")
    if not target.interp.is_debian_system:
        compile_as_root = (
            "import py_compile, sys\n"
            "py_compile.compile(sys.argv[1], doraise=True, "
            "invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)\n")
        target.root(PLANT, str(target.tmp / "etc" / "sitecustomize.py"), source)
        proc = target.run([target.executable, "-I", "-S", "-c", compile_as_root, source])
        assert proc.returncode == 0, proc.stderr
    before, mtime_before = _state(target, source)
    assert before[0] == "current", before  # as the distro ships it
    original = target.root("import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb')"
                           ".read())", source).stdout

    target.install("--hook", "sitecustomize")
    after, _ = _state(target, source)
    assert after == {0: "current", 1: "current", 2: "current"}, after
    for level in FLAGS:
        assert not _compiled_from_source(target, level, source), level
    proc = target.run([target.executable, "-c", "import sys; print("
                       "[getattr(f, '__name__', 0) for f in sys.meta_path])"])
    assert "'sitewarden'" in proc.stdout, proc.stdout + proc.stderr

    target.uninstall()
    restored, mtime_after = _state(target, source)
    assert mtime_after == mtime_before
    assert target.root("import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb')"
                       ".read())", source).stdout == original
    assert restored == {level: ("current" if before[level] == "current" else "absent")
                        for level in FLAGS}, (before, restored)
    for level in FLAGS:
        if before[level] == "current":
            assert not _compiled_from_source(target, level, source), level
