"""Never break an interpreter, never lose a file: bad input, faults and load.

Bounded iterations here; ``SITEWARDEN_STRESS=N`` multiplies them (README,
Reliability).  Counts of what was tried are printed with ``-s``.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import pip_dir, pyenv_interpreters, wheel

CLI = [sys.executable, "-m", "sitewarden"]
STRESS = max(1, int(os.environ.get("SITEWARDEN_STRESS", "1") or 1))
NEWEST = pyenv_interpreters()[-1]
PY311 = [i for i in pyenv_interpreters() if i.version[:2] == (3, 11)]


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """One hermetic system interpreter with the guard, shared by read-only tests."""
    from harness import build_hermetic

    hp = build_hermetic(NEWEST, tmp_path_factory.mktemp("reliability") / "hp")
    proc = subprocess.run([*CLI, "install", "--python", str(hp.executable)], env=hp.env(),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return hp


env_value = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40)


@settings(max_examples=40 * STRESS, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(disable=env_value, silence=env_value, bsp=env_value)
def test_garbage_environment_never_breaks_startup(guarded, disable, silence, bsp):
    env = {"SITEWARDEN_DISABLE": disable, "SITEWARDEN_SILENCE": silence,
           "PIP_BREAK_SYSTEM_PACKAGES": bsp}
    proc = guarded.run(["-c", "import json"], env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


BAD_MARKERS = {
    "empty": b"",
    "garbage": bytes(range(256)) * 4,
    "invalid utf-8": b"[externally-managed]\nError=\xff\xfe\n",
    "duplicate keys": b"[externally-managed]\nError=a\nError=b\n",
    "duplicate sections": b"[externally-managed]\nError=a\n[externally-managed]\nError=b\n",
    "no section": b"Error=no section\n",
    "huge": b"[externally-managed]\nError=" + b"x" * (10 << 20) + b"\n",
}


@pytest.mark.skipif(not PY311, reason="needs a CPython 3.11")
@pytest.mark.parametrize("kind", [*BAD_MARKERS, "directory", "dangling symlink", "symlink loop"])
def test_blocks_fail_closed_under_marker_corruption(make_hermetic, kind):
    hp = make_hermetic(PY311[0])
    marker = hp.marker
    marker.unlink()
    if kind == "directory":
        marker.mkdir()
    elif kind == "dangling symlink":
        marker.symlink_to(marker.parent / "nowhere")
    elif kind == "symlink loop":
        marker.symlink_to(marker)
    else:
        marker.write_bytes(BAD_MARKERS[kind])
    proc = subprocess.run([*CLI, "install", "--python", str(hp.executable)], env=hp.env(),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert hp.run(["-c", "pass"]).stderr == ""
    for pip in ("22.3.1",):
        proc = hp.run(["-m", "pip", "install", "--no-index", "six"],
                      env={"PYTHONPATH": str(pip_dir(pip))})
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1 and "externally-managed-environment" in out, out
        assert "Traceback" not in out and "virtual environment" in out, out


def test_old_hook_with_new_runtime_and_the_reverse(guarded):
    site = guarded.local_dir
    pth = site / "sitewarden.pth"
    original = pth.read_text()
    try:
        # An older .pth line (a released form that imported a submodule) with this runtime.
        pth.write_text("import os; os.environ.get('SITEWARDEN_DISABLE', '0') in ('', '0') and "
                       "os.path.isdir(sitedir + '/sitewarden') and "
                       "__import__('sitewarden.marker').activate()\n")
        proc = guarded.run(["-c", "pass"])
        assert proc.returncode == 0
        # A runtime without the entry point (a future or broken one): still starts.
        init = site / "sitewarden" / "__init__.py"
        saved = init.read_bytes()
        init.write_text("")
        try:
            for pyc in (site / "sitewarden" / "__pycache__").glob("__init__*"):
                pyc.unlink()
            proc = guarded.run(["-c", "pass"])
            assert proc.returncode == 0
        finally:
            init.write_bytes(saved)
    finally:
        pth.write_text(original)
    assert guarded.run(["-c", "pass"]).stderr == ""


def test_two_hundred_concurrent_starts(guarded):
    def start(_):
        return guarded.run(["-c", "import json"])

    with ThreadPoolExecutor(max_workers=32) as pool:
        results = list(pool.map(start, range(200 * STRESS)))
    failures = [r for r in results if r.returncode != 0 or r.stderr]
    assert not failures, failures[0].stderr
    print("concurrent starts: %d, failures: 0" % len(results))


@pytest.mark.skipif(not PY311, reason="needs a CPython 3.11")
def test_killed_upgrade_never_loses_a_distro_file(make_hermetic, tmp_path):
    """SIGKILL pip at random points while it upgrades a distro-installed package
    with the override: the distro directory is byte-identical every time."""
    from harness import make_dist

    hp = make_hermetic(PY311[0])
    proc = subprocess.run([*CLI, "install", "--python", str(hp.executable)], env=hp.env(),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    make_dist(hp.distro_dir, "six", "1.16.0", modules={"six.py": "V = '1.16.0'\n"},
              kind="egg-info")
    before = {p: p.read_bytes() for p in hp.distro_dir.rglob("*") if p.is_file()}
    house = tmp_path / "house"
    house.mkdir()
    shutil.copy(wheel("six", "1.17.0"), house)
    env = hp.env({"PYTHONPATH": str(pip_dir("24.0")), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    rng = random.Random(668)
    runs = kills = 0
    for _ in range(6 * STRESS):
        p = subprocess.Popen([str(hp.executable), "-m", "pip", "install", "--upgrade",
                              "--force-reinstall", "--break-system-packages", "--no-index",
                              "--find-links", str(house), "six==1.17.0"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.9))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        p.wait()
        runs += 1
        after = {p: p.read_bytes() for p in hp.distro_dir.rglob("*") if p.is_file()}
        assert after == before
    print("killed upgrades: %d runs, %d killed, distro files lost: 0" % (runs, kills))


def test_garbage_sys_path_never_breaks_imports(guarded, tmp_path):
    """Non-string entries, bytes, missing and vanishing directories, a symlink loop and a
    directory with 100,000 entries, all present at the first import (when the guard scans)."""
    big = tmp_path / "big"
    big.mkdir()
    for i in range(100_000):
        (big / ("m%d.py" % i)).touch()
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    vanishing = tmp_path / "vanishing"
    vanishing.mkdir()
    (vanishing / "gone_soon.py").write_text("X = 1\n")
    code = (
        "import sys, shutil\n"
        "sys.path[:0] = [42, None, b'/tmp', %r, %r, %r, '/no/such/dir', %r]\n"
        "import json\n"          # the first import after startup: the guard scans sys.path
        "import gone_soon\n"
        "shutil.rmtree(%r)\n"
        "import random, enum\n"
        "print('ok')\n" % (str(big), str(loop), str(vanishing), str(big / "m1.py"),
                             str(vanishing))
    )
    proc = guarded.run(["-c", code])
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    assert "Traceback" not in proc.stderr
