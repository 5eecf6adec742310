"""``make check``, the README's first command: it shows ``status`` and ``check`` of the
target and exits 0 whatever they conclude (guarded or not, marker or none); only a
command that could not run fails it.  CI also runs it from the fresh clone (``.ci/run``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.fixtures import running_under_ci
from harness.interpreters import pyenv_interpreters

CHECKOUT = Path(__file__).resolve().parent.parent
#: This suite's environment, as `make` made it (its .installed stamp taken as current).
VENV = Path(sys.executable).parent.parent


def make_check(target: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-s", "-o", "%s/.installed" % VENV, "check", "VENV=%s" % VENV,
         "TARGET_PYTHON=%s" % target], cwd=str(CHECKOUT), capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=300)


def test_make_check_on_the_system_python():
    """Debian's python, not guarded: status exits 1, and ``make check`` still shows both."""
    if not os.path.exists("/usr/lib/python3.11/EXTERNALLY-MANAGED"):
        if running_under_ci():
            pytest.fail("CI runs on Debian 12, whose python3 has its marker")
        pytest.skip("not Debian 12")
    proc = make_check("/usr/bin/python3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sitewarden status for /usr/bin/python3" in proc.stdout
    assert "sitewarden check: /usr/bin/python3" in proc.stdout


@pytest.mark.parametrize("marker", [True, False], ids=["guarded", "no-marker"])
def test_make_check_on_a_guarded_python_and_one_without_marker(make_hermetic, marker):
    t = make_hermetic(pyenv_interpreters()[-1], **({} if marker else {"marker": None}))
    if marker:
        t.install()
    proc = make_check(t.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sitewarden check: %s" % t.executable in proc.stdout


def test_make_check_fails_when_a_command_cannot_run(tmp_path):
    proc = make_check(str(tmp_path / "no-python"))
    assert proc.returncode != 0
    assert "sitewarden: error:" in proc.stderr
