"""Fail open, never silently: every swallowed failure goes through one helper, which
tells whoever asks (``SITEWARDEN_DEBUG=1``, ``python -v``) and raises in the suite's
strict mode (``SITEWARDEN_DEBUG=raise``, set for every interpreter under test).

Also every way of running code gets the same warnings: a warning attributed to a
``__main__`` run with ``-m`` used to fail inside ``warnings`` (its loader refuses
the name ``__main__``), be swallowed, and leave the module counted as reported.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from harness.environ import FAIL_OPEN

SRC = Path(__file__).resolve().parent.parent / "src" / "sitewarden"

#: Exception types whose handler catches whatever goes wrong.
BROAD = {"Exception", "BaseException"}
#: The helper's names: ``sitewarden._swallowed`` and ``failopen.swallowed``.
HELPERS = {"_swallowed", "swallowed"}


def _broad(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(isinstance(n, ast.Name) and n.id in BROAD for n in names)


def _accounts_for_it(handler: ast.ExceptHandler) -> bool:
    """The handler re-raises, reports through the helper, or puts the exception into
    what it returns (a finding, a marker's problem): nothing is lost."""
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name in HELPERS:
                return True
        if handler.name and isinstance(node, ast.Name) and node.id == handler.name:
            return True
    return False


def broad_handlers_bypassing_the_helper(root: Path = SRC) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        if "_vendor" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler) and _broad(node) and not _accounts_for_it(node):
                out.append("%s:%d" % (path.relative_to(root.parent), node.lineno))
    return out


def test_no_broad_handler_bypasses_the_helper():
    found = broad_handlers_bypassing_the_helper()
    assert not found, ("broad handlers that swallow without failopen (call sitewarden."
                       "_swallowed('what is skipped') or narrow the exception):\n"
                       + "\n".join(found))


def test_the_source_check_sees_a_bypass(tmp_path):
    pkg = tmp_path / "sitewarden"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "def f():\n    try:\n        g()\n    except Exception:\n        pass\n"
        "def h():\n    try:\n        g()\n    except (OSError, BaseException):\n        return 1\n"
        "def ok():\n    try:\n        g()\n    except Exception:\n        _swallowed('x')\n"
        "def ok2():\n    try:\n        g()\n    except Exception as exc:\n        return str(exc)\n"
        "def ok3():\n    try:\n        g()\n    except OSError:\n        pass\n")
    assert broad_handlers_bypassing_the_helper(pkg) == ["sitewarden/m.py:4", "sitewarden/m.py:9"]


# ---------------------------------------------------------------- the helper itself

HELPER_PROGRAM = r"""
import sys
sys.path.insert(0, sys.argv[1])
from sitewarden import failopen

def reader(n):
    try:
        {}["missing"]
    except Exception:
        failopen.swallowed("the warning about %s" % n)
    return "went on"

for n in ("six", "yaml"):  # one place: one line
    print(reader(n))
"""


def _helper(env: dict) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SITEWARDEN_", "PYTHON"))}
    full.update(env)
    return subprocess.run([sys.executable, "-c", HELPER_PROGRAM, str(SRC.parent)], env=full,
                          capture_output=True, text=True)


@pytest.mark.parametrize("value", ["", "0", "no", "false", "off"])
def test_silent_unless_asked(value):
    proc = _helper({"SITEWARDEN_DEBUG": value})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "went on\nwent on\n", "")


@pytest.mark.parametrize("value", ["1", "yes", "true", "print"])
def test_debug_says_where_what_and_what_was_skipped_once_per_place(value):
    proc = _helper({"SITEWARDEN_DEBUG": value})
    assert proc.returncode == 0 and proc.stdout == "went on\nwent on\n"
    assert proc.stderr.splitlines() == [
        "sitewarden: debug: __main__.reader failed (KeyError: 'missing'); skipped: the "
        "warning about six"]


def test_python_verbose_reports_too():
    proc = _helper({"PYTHONVERBOSE": "1"})
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("sitewarden: debug:")]
    assert proc.returncode == 0 and len(lines) == 1 and "KeyError" in lines[0], proc.stderr


def test_strict_mode_raises_what_was_swallowed():
    proc = _helper({"SITEWARDEN_DEBUG": "raise"})
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.rstrip().endswith("KeyError: 'missing'"), proc.stderr


# ---------------------------------------------------------------- in guarded interpreters

def _debug_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if ln.startswith("sitewarden: debug:")]


def _runtime_file(t, rel: str) -> Optional[Path]:
    names = t.digest(t.local_dir / "sitewarden", skip_pycache=True)
    found = [n for n in names if n == rel or n.endswith("/" + rel)]
    return t.local_dir / "sitewarden" / found[0] if found else None


def test_debug_explains_a_missing_warning(guarded_target):
    """A damaged runtime costs the warning, silently for users; SITEWARDEN_DEBUG=1 names
    what failed and what was skipped, in one line."""
    t = guarded_target
    t.add_shadowed(["swfailopen"])
    assert t.imports("swfailopen").warned_about() == ["swfailopen"]
    path = _runtime_file(t, "detect/cases.py")
    assert path is not None
    t.put(path, "absent")
    t.root("import glob, os, sys\nfor p in glob.glob(sys.argv[1]): os.unlink(p)",
           str(path.parent / "__pycache__" / "cases.*"))
    program = "import swfailopen; print('ran')"
    quiet = t.python("-c", program, env=FAIL_OPEN)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "ran\n", "")
    told = t.python("-c", program, env={"SITEWARDEN_DEBUG": "1"})
    assert told.returncode == 0 and told.stdout == "ran\n", told.stderr
    lines = _debug_lines(told)
    assert len(lines) == 1, told.stderr
    assert "cases" in lines[0] and "Error" in lines[0] and "'swfailopen'" in lines[0], lines
    assert told.stderr.strip() == lines[0], told.stderr
    strict = t.python("-c", program, env={"SITEWARDEN_DEBUG": "raise"})
    assert strict.returncode != 0 and "cases" in strict.stderr, strict.stderr


# ---------------------------------------------------------------- every way of running code

MAIN = "import swrunway\nprint('ran')\n"


def _ways(d: Path) -> dict[str, tuple[list[str], Optional[str]]]:
    (d / "mytool.py").write_text(MAIN)
    (d / "mypkg").mkdir()
    (d / "mypkg" / "__init__.py").write_text("")
    (d / "mypkg" / "__main__.py").write_text(MAIN)
    (d / "script.py").write_text(MAIN)
    run_module = "import runpy; runpy.run_module('mytool', run_name='__main__')"
    run_path = "import runpy; runpy.run_path(%r, run_name='__main__')" % str(d / "script.py")
    exec_ = "exec(compile(open(%r).read(), %r, 'exec'))" % (str(d / "script.py"), "tool")
    return {
        "script": ([str(d / "script.py")], None),
        "-c": (["-c", MAIN], None),
        "stdin": (["-"], MAIN),
        "-m module": (["-m", "mytool"], None),
        "-m package": (["-m", "mypkg"], None),
        "runpy.run_module": (["-c", run_module], None),
        "runpy.run_path": (["-c", run_path], None),
        "exec": (["-c", exec_], None),
    }


def test_every_way_of_running_code_gets_the_warning(guarded_target):
    t = guarded_target
    t.add_shadowed(["swrunway"])
    d = t.tmp / "ways"
    d.mkdir()
    d.chmod(0o755)
    failures = []
    for way, (args, stdin) in _ways(d).items():
        proc = t.python(*args, cwd=str(d), input=stdin)
        warned = [w for w in t.stderr_warnings(proc) if w[2] == "ShadowWarning"]
        if proc.returncode != 0 or proc.stdout != "ran\n" or len(warned) != 1 \
                or "swrunway" not in warned[0][3]:
            failures.append((way, proc.returncode, proc.stdout, proc.stderr))
    assert not failures, failures
