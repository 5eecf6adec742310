"""The security posture the README states, tested (issue #6, property 6).

- The CLI runs no code from its working directory in target interpreters.
- The probe's private cache (``~/.cache/sitewarden/runtime``) is used only when the
  current user owns it and nobody else can write to it.
- ``--hook sitecustomize`` refuses to edit a sitecustomize that is not a ``.py`` file.
- Deployed files are not writable by other users, whatever the umask.
- No code is executed from the marker, metadata or environment: they are data.

Each runs on every CPython 3.8+ (hermetic) and Debian's python (namespace) where the
target matters; the cache is the CLI's own and is tested once.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from guarded_targets import CLI
from harness import build_hermetic, pyenv_interpreters
from harness.figures import record

NEWEST = pyenv_interpreters()[-1]


# ------------------------------------------------------------------ the working directory


def _booby_trapped(directory: Path, canary: Path, names) -> None:
    """Modules in ``directory`` that the CLI's subprocesses would import if the current
    directory were on their ``sys.path``: each leaves ``canary``."""
    for name in names:
        (directory / (name + ".py")).write_text(
            "open(%r, 'a').write(%r)\n" % (str(canary), name + "\n"))


def test_install_compiles_without_the_working_directory(bare_target):
    """``install`` compiles the runtime with the target itself: a ``py_compile.py`` in the
    directory the CLI runs in (as root, maybe /tmp) must not run."""
    t = bare_target
    cwd = t.tmp / "cwd"
    cwd.mkdir()
    canary = t.tmp / "CANARY-cwd"
    # Only a module the compile step imports and the probe does not (the probe's own
    # exposure is test_probe_runs_no_code_from_the_working_directory).
    _booby_trapped(cwd, canary, ["py_compile"])
    proc = t.cli("install", "--python", t.executable, cwd=str(cwd))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = canary.read_text().split() if canary.exists() else []
    record("security: no code run from the working directory (install)", t.label, 1, len(ran))
    assert ran == []


@pytest.mark.xfail(strict=True, reason=(
    "targets._run_payload runs the probe (-E -S -c BOOTSTRAP) in the CLI's working "
    "directory, so '' is on the target's sys.path while the probe imports site and "
    "sysconfig: a sysconfig.py there runs in the target, as root under sudo (targets.py "
    "and probe.py are on the performance branch; reported in issue #6)"))
def test_probe_runs_no_code_from_the_working_directory(tmp_path):
    hp = build_hermetic(NEWEST, tmp_path / "h")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    canary = tmp_path / "CANARY-probe"
    _booby_trapped(cwd, canary, ["sysconfig", "site", "json"])
    subprocess.run([*CLI, "status", "--python", str(hp.executable)], cwd=str(cwd),
                   env=hp.env(), capture_output=True, text=True, timeout=300)
    assert not canary.exists(), canary.read_text()
