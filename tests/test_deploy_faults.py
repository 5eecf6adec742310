"""Deployment under faults: concurrency, kills at any point, symlinks.

A kill (SIGKILL) at any point leaves the old or the new deployment, never a
broken one; concurrent deployers serialise; the deployer never writes
through a link out of the target directory.  Iterations are bounded here;
``SITEWARDEN_STRESS=N`` multiplies them (see README, Reliability).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import tree_state
from harness import pyenv_interpreters

STRESS = max(1, int(os.environ.get("SITEWARDEN_STRESS", "1") or 1))
PYTHON = pyenv_interpreters()[-1].executable

CHECK_ACTIVE = (
    "import json, sys; print(json.dumps([getattr(f, '__name__', 0) for f in sys.meta_path]))"
)


def _env(base: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONUSERBASE=str(base))
    env.pop("SITEWARDEN_DISABLE", None)
    return env


def _cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "sitewarden", *args]


def _user_site(base: Path) -> Path:
    out = subprocess.run([PYTHON, "-c", "import site; print(site.getusersitepackages())"],
                         capture_output=True, text=True, env=_env(base), check=True)
    return Path(out.stdout.strip())


def assert_consistent(base: Path) -> bool:
    """The interpreter starts cleanly; a present hook means a working guard.

    Returns whether the guard is deployed and active.
    """
    proc = subprocess.run([PYTHON, "-c", CHECK_ACTIVE], capture_output=True, text=True,
                          env=_env(base), cwd="/")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    active = "sitewarden" in json.loads(proc.stdout)
    site = _user_site(base)
    if (site / "sitewarden.pth").exists():
        assert active, "a .pth without a working runtime"
        manifest = json.loads((site / "sitewarden" / "_deployment.json").read_text())
        for rel in manifest["files"]:
            assert (site / rel).exists(), rel
    return active


@pytest.fixture
def site(tmp_path):
    base = tmp_path / "base"
    s = _user_site(base)
    s.mkdir(parents=True)
    (s / "unrelated.pth").write_text("# another package's\n")
    return base, s


def test_concurrent_installs_and_uninstalls(site):
    base, s = site
    before = tree_state(base)
    for _round in range(STRESS):
        procs = [
            subprocess.Popen(_cli_argv("install" if i % 2 == 0 else "uninstall", "--python",
                                       PYTHON, "--user"), env=_env(base),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(16)
        ]
        results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
        for code, err in results:
            # An uninstall that finds nothing to remove says so (exit 2); nothing else fails.
            assert code == 0 or "no sitewarden deployment" in err, err
        assert_consistent(base)
        assert sorted(p.name for p in s.iterdir() if p.name.endswith(".pth")) in (
            ["unrelated.pth"], ["sitewarden.pth", "unrelated.pth"])
    subprocess.run(_cli_argv("install", "--python", PYTHON, "--user"), env=_env(base), check=True,
                   capture_output=True)
    subprocess.run(_cli_argv("uninstall", "--python", PYTHON, "--user"), env=_env(base),
                   check=True, capture_output=True)
    assert tree_state(base) == before


def test_killed_deployer_leaves_old_or_new(site):
    base, s = site
    before = tree_state(base)
    rng = random.Random(668)
    kills = 0
    for i in range(12 * STRESS):
        command = "install" if i % 3 else "uninstall"
        proc = subprocess.Popen(_cli_argv(command, "--python", PYTHON, "--user"), env=_env(base),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.6))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        assert_consistent(base)
    assert kills > 0, "no run was actually killed; widen the delays"
    # The next run cleans what killed runs left, and uninstall restores the directory.
    subprocess.run(_cli_argv("install", "--python", PYTHON, "--user"), env=_env(base), check=True,
                   capture_output=True)
    assert assert_consistent(base)
    subprocess.run(_cli_argv("uninstall", "--python", PYTHON, "--user"), env=_env(base),
                   check=True, capture_output=True)
    assert tree_state(base) == before


@pytest.mark.parametrize("name", ["sitewarden", "sitewarden.pth", "sitewarden.start"])
def test_never_writes_through_a_symlink(site, tmp_path, name):
    base, s = site
    outside = tmp_path / "outside"
    outside.mkdir()
    (s / name).symlink_to(outside if name == "sitewarden" else outside / "x")
    before = tree_state(outside)
    proc = subprocess.run(_cli_argv("install", "--python", PYTHON, "--user"), env=_env(base),
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "symbolic link" in proc.stderr
    assert tree_state(outside) == before
    assert not any(p.name.startswith(".sitewarden-") for p in s.iterdir())
