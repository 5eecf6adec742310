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

from harness.bytecode import FLAGS, compiled, pyc_states, verbose_lines

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


def _state(target, source):
    (states, mtime_ns), = pyc_states(target, source).values()
    return states, mtime_ns


def _compiled_from_source(target, level, source):
    """Start the target as ``nobody`` at optimisation ``level``; the lines where
    importlib compiled ``sitecustomize`` from source instead of loading its bytecode."""
    lines = verbose_lines(target, level, "pass", "sitecustomize")
    assert any("import" in line for line in lines), lines
    return compiled(lines)


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
