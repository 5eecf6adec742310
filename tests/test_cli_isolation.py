"""Nothing runs in the sitewarden command either, whichever way the README installs it.

APM launchers set ``PYTHONPATH`` to a directory holding a ``sitecustomize.py``; a console
script's python runs it (and ``PYTHONSTARTUP``'s file under ``-i``, the user site's
``usercustomize`` and ``.pth`` files) before the first line of sitewarden, in a process
that is often root's, and what it prints breaks ``check --json``.  The command is a
launcher (``bin/sitewarden``) that starts the environment's python isolated and without
``site`` (``-I -S``).  For each install method the README documents that runs here (a venv
with ``pip install``, on the oldest and the newest CPython; pipx from the wheel; this
checkout's ``.venv``, an editable install, as ``make check`` runs it), with a planted
``PYTHONPATH`` ``sitecustomize.py``, ``PYTHONSTARTUP``, a user site ``usercustomize.py`` and
``.pth`` (each writes a canary file and prints garbage), stdin closed: the canary is never
written and stdout is JSON only.  The same plant makes a plain start of each venv's python
write the canary (it would catch a console script).  The Debian package's
``/usr/bin/sitewarden``: ``tests/test_deb.py``.

The wheel is built once (a copy of the checkout, offline, as ``make wheel``); pipx comes
from PyPI once into the test cache (``harness.wheels.cache_dir``'s parent).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from harness.guarded import running_under_ci
from harness.interpreters import pyenv_interpreters
from harness.wheels import cache_dir

CHECKOUT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.xdist_group("cli-isolation")  # one worker: one wheel, one pipx

#: How the launcher starts (bin/sitewarden): sh's line, then a string to Python.
LAUNCHER_HEAD = b"#!/bin/sh\n''':'\n"
#: What each planted file runs: writes the canary, prints garbage.
PLANT = "open(%r, 'a').write(%r + '\\n')\nprint('GARBAGE from %s')\n"


def _source_files():
    out = subprocess.run(["git", "-C", str(CHECKOUT), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, check=True).stdout
    return [rel for rel in out.decode().split("\0") if rel and (CHECKOUT / rel).is_file()]


def _clean_env(**extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PIP_", "PIPX_", "SITEWARDEN_", "VIRTUAL_ENV"))}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """``python -m build --wheel --no-isolation`` of a copy of the checkout, once."""
    pytest.importorskip("build")
    src = tmp_path_factory.mktemp("isolation-src")
    for rel in _source_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / rel, src / rel)
    out = tmp_path_factory.mktemp("isolation-wheel")
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                           "--outdir", str(out), str(src)], capture_output=True, text=True,
                          env=_clean_env(), cwd=str(src), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (found,) = out.glob("sitewarden-*.whl")
    return found


@pytest.fixture(scope="session")
def pipx() -> Path:
    """pipx, installed from PyPI once into the test cache (skipped without it, but in CI)."""
    top = cache_dir().parent / "pipx"
    top.mkdir(parents=True, exist_ok=True)
    venv = top / "venv"
    with open(top / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "bin" / "pipx").exists():
            shutil.rmtree(venv, ignore_errors=True)
            proc = subprocess.run([sys.executable, "-m", "venv", str(venv)],
                                  capture_output=True, text=True, timeout=300)
            if proc.returncode == 0:
                proc = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "pipx"],
                                      capture_output=True, text=True, timeout=600,
                                      env=_clean_env())
            if proc.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                if running_under_ci():
                    pytest.fail("pipx could not be installed: %s" % proc.stderr[-2000:])
                pytest.skip("pipx could not be installed (no package index?)")
        # pipx's shared pip, from the index (then each install is offline: --no-index)
        shared = top / "shared"
        if not list(shared.glob("lib/python3*/site-packages/pip")):
            shutil.rmtree(shared, ignore_errors=True)
            proc = subprocess.run([str(venv / "bin" / "pipx"), "upgrade-shared"],
                                  capture_output=True, text=True, timeout=600,
                                  env=_clean_env(PIPX_SHARED_LIBS=str(shared)))
            if proc.returncode != 0:
                shutil.rmtree(shared, ignore_errors=True)
                if running_under_ci():
                    pytest.fail("pipx's shared pip: %s" % proc.stderr[-2000:])
                pytest.skip("pipx's shared pip could not be installed (no package index?)")
    return venv / "bin" / "pipx"


@pytest.fixture
def planted(tmp_path):
    """``(env, canary)``: an environment whose every startup hook writes ``canary``."""
    canary = tmp_path / "canary"
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "sitecustomize.py").write_text(PLANT % (str(canary), "sitecustomize",
                                                     "sitecustomize"))
    (evil / "startup.py").write_text(PLANT % (str(canary), "PYTHONSTARTUP", "PYTHONSTARTUP"))
    home = tmp_path / "home"
    for minor in range(8, 16):
        user_site = home / ".local" / "lib" / ("python3.%d" % minor) / "site-packages"
        user_site.mkdir(parents=True)
        (user_site / "usercustomize.py").write_text(
            PLANT % (str(canary), "usercustomize", "usercustomize"))
        (user_site / "zz-canary.pth").write_text(
            "import sys; open(%r, 'a').write('pth\\n'); print('GARBAGE from a .pth')\n"
            % str(canary))
    env = _clean_env(PYTHONPATH=str(evil), PYTHONSTARTUP=str(evil / "startup.py"),
                     HOME=str(home))
    return env, canary


def _closed_stdin():
    os.close(0)


def assert_isolated(command: Path, env: Dict[str, str], canary: Path, target: str) -> None:
    """``command check --json --python target`` with the plant and stdin closed: nothing
    planted ran, and stdout is one JSON document about ``target``."""
    proc = subprocess.run([str(command), "check", "--json", "--python", target],
                          capture_output=True, text=True, env=env, cwd="/", timeout=300,
                          preexec_fn=_closed_stdin)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert not canary.exists(), (command, canary.read_text())
    printed = [x for x in (proc.stdout + proc.stderr).splitlines() if x.startswith("GARBAGE")]
    assert not printed, printed
    report = json.loads(proc.stdout)  # one document, nothing around it
    assert report["interpreter"]["executable"] == target, report["interpreter"]


def assert_plant_works(python: Path, env: Dict[str, str], canary: Path) -> None:
    """A plain start of the environment's python runs the plant: a console script would."""
    proc = subprocess.run([str(python), "-c", "pass"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert "GARBAGE from sitecustomize" in proc.stdout and canary.exists(), proc.stdout
    canary.unlink()


def assert_launcher(command: Path) -> None:
    """The command is the launcher, byte for byte (not a console script)."""
    assert command.resolve().read_bytes() == (CHECKOUT / "bin" / "sitewarden").read_bytes()


@pytest.fixture
def target(make_hermetic):
    """A throwaway hermetic CPython (the newest), no guard deployed."""
    return make_hermetic(pyenv_interpreters()[-1])


@pytest.mark.parametrize("base", [pyenv_interpreters()[0], pyenv_interpreters()[-1]],
                         ids=lambda i: i.id)
def test_a_venv_with_pip_install(base, wheel, planted, target, tmp_path):
    """``python3 -m venv ~/sw && ~/sw/bin/pip install .`` (the wheel it builds), by the pip
    that CPython's ``ensurepip`` bundles, run from its wheel by the venv's python (the
    same pip, without the time ``ensurepip`` takes to install it)."""
    env, canary = planted
    venv = tmp_path / "sw"
    subprocess.run([base.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300, capture_output=True, env=_clean_env())
    bundled = max(Path(base.stdlib, "ensurepip", "_bundled").glob("pip-*.whl"),
                  key=lambda p: tuple(int(x) for x in p.name.split("-")[1].split(".")))
    proc = subprocess.run([str(venv / "bin" / "python"), str(bundled / "pip"), "install", "-q",
                           "--no-index", "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, timeout=300, env=_clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_launcher(venv / "bin" / "sitewarden")
    assert_plant_works(venv / "bin" / "python", env, canary)
    assert_isolated(venv / "bin" / "sitewarden", env, canary, target.executable)
    if base is not pyenv_interpreters()[0]:
        return
    # Without --python: the venv's own python, named as such (sys.prefix as site sets it).
    proc = subprocess.run([str(venv / "bin" / "sitewarden"), "check", "--json"],
                          capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert "the virtual environment sitewarden runs in (%s)" % venv in proc.stderr, proc.stderr
    assert not canary.exists()


def test_pipx_install_of_the_wheel(pipx, wheel, planted, target, tmp_path):
    """``pipx install ./dist/sitewarden-*.whl``: the command pipx puts on PATH (a link to
    the launcher in pipx's venv)."""
    env, canary = planted
    home = tmp_path / "pipx"
    pipx_env = _clean_env(PIPX_HOME=str(home / "home"), PIPX_BIN_DIR=str(home / "bin"),
                          PIPX_MAN_DIR=str(home / "man"),
                          PIPX_SHARED_LIBS=str(pipx.parent.parent.parent / "shared"),
                          PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE="1")
    proc = subprocess.run([str(pipx), "install", "--pip-args=--no-index", str(wheel)],
                          capture_output=True, text=True, env=pipx_env, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    command = home / "bin" / "sitewarden"
    assert command.is_symlink(), list((home / "bin").iterdir())
    assert_launcher(command)
    assert_plant_works(command.resolve().parent / "python", env, canary)
    assert_isolated(command, env, canary, target.executable)


def test_this_checkouts_venv_as_make_check_runs_it(planted, target):
    """``make check`` runs ``.venv/bin/sitewarden``: an editable install (``make setup``)."""
    env, canary = planted
    command = Path(sys.executable).parent / "sitewarden"
    # the launcher as `make setup` installed it (bin/sitewarden of then: make test renews it)
    assert command.read_bytes().startswith(LAUNCHER_HEAD), command.read_text()[:200]
    assert_isolated(command, env, canary, target.executable)
