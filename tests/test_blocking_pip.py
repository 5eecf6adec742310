"""PEP 668 for every pip from 9.0 on, inside hermetic system interpreters.

Each case builds a Debian-shaped interpreter with a marker, deploys the guard
with the real CLI, and runs a real pip from its wheel (``PYTHONPATH=<pip>
python -m pip``).  Installs never reach the network: the packages they need
come from wheels cached from PyPI (``--no-index --find-links``).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from harness import (
    make_dist,
    pip_dir,
    pip_versions_for,
    pip_wheel,
    pyenv_interpreters,
)
from harness.cli import run_cli
from harness.guarded import make_guarded
from harness.spread import ONE_PER, ROTATED, spread


def _pips(interp):
    """The pips of the matrix that start on ``interp`` (``harness.wheels``)."""
    return pip_versions_for(interp.version)


def _installs(interp, version) -> bool:
    """pips before 23.2 start on 3.12+ but cannot install there."""
    pip = tuple(int(x) for x in version.split(".")[:2])
    return interp.version[:2] < (3, 12) or pip >= (23, 2)


def _pip_id(version) -> str:
    return "pip" + version


#: Each hermetic CPython with half of the pips that start on it, in rotation: each pip on
#: half of the CPythons it starts on (and on the newest it installs with, below).
MATRIX = spread(ROTATED, _pips, targets="hermetic", ways=2, input_id=_pip_id)
#: Each pip once, on the newest Python it can install with.
ONE_PYTHON_PER_PIP = spread(ONE_PER, _pips, targets="hermetic", accepts=_installs,
                            input_id=_pip_id)


class PipOn:
    """One pip, run from its wheel on a guarded hermetic python (``py``)."""

    def __init__(self, py, pip_version, wheelhouse):
        self.py = py
        self.pip_path = pip_dir(pip_version)
        self.pip_version = pip_version
        self.wheelhouse = wheelhouse

    @property
    def can_install(self):
        """pips before 23.2 start on 3.12+ but cannot install there (their
        pkg_resources needs pkgutil.ImpImporter, removed in 3.12)."""
        pip = tuple(int(x) for x in self.pip_version.split(".")[:2])
        return self.py.version[:2] < (3, 12) or pip >= (23, 2)

    def pip(self, *args, env=None):
        extra = {"PYTHONPATH": str(self.pip_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                 "PIP_NO_WARN_SCRIPT_LOCATION": "1", **(env or {})}
        return self.py.python("-m", "pip", *args, env=extra, timeout=300)

    def offline(self, *args):
        return ("--no-index", "--find-links", str(self.wheelhouse), "--no-deps", *args)


@pytest.fixture
def guarded_pip(tmp_path, wheelhouse):
    """``guarded_pip(interp, pip_version)``: a fresh hermetic python, guard deployed (a
    copy of what the CLI deployed for it once per test process), and that pip to run on it."""
    count = [0]

    def make(interp, pip_version):
        count[0] += 1
        py = make_guarded(interp, deploy="copy", dest=tmp_path / ("hermetic-%d" % count[0]))
        return PipOn(py, pip_version, wheelhouse)

    return make


def assert_refused(proc):
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert out.count("externally-managed-environment") == 1, out  # one report, not two
    assert "hermetic fixture" in out, out  # the marker's own text
    assert "--break-system-packages" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("interp, version", MATRIX)
def test_blocked_then_overridden_by_flag(guarded_pip, interp, version):
    g = guarded_pip(interp, version)
    assert_refused(g.pip("install", *g.offline("six")))
    assert not list(g.py.local_dir.glob("six*"))
    if not g.can_install:
        return  # this pip only starts here: install is refused before it would crash
    assert_refused(g.pip("uninstall", "-y", "six"))
    proc = g.pip("install", "--break-system-packages", *g.offline("six"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (g.py.local_dir / "six.py").is_file()
    proc = g.pip("uninstall", "-y", "--break-system-packages", "six")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (g.py.local_dir / "six.py").exists()


@pytest.mark.parametrize("interp, version", ONE_PYTHON_PER_PIP)
def test_environment_and_config_overrides(guarded_pip, interp, version, tmp_path):
    g = guarded_pip(interp, version)
    for value in ("1", "true", "YES"):
        proc = g.pip("install", *g.offline("six"), env={"PIP_BREAK_SYSTEM_PACKAGES": value})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        proc = g.pip("uninstall", "-y", "six", env={"PIP_BREAK_SYSTEM_PACKAGES": value})
        assert proc.returncode == 0, proc.stdout + proc.stderr
    for section, command in (("global", "install"), ("install", "install"),
                             ("global", "uninstall"), ("uninstall", "uninstall")):
        conf = tmp_path / ("%s-%s.conf" % (section, command))
        conf.write_text("[%s]\nbreak-system-packages = true\n" % section)
        env = {"PIP_CONFIG_FILE": str(conf)}
        if command == "uninstall":
            proc = g.pip("install", "--break-system-packages", *g.offline("six"))
            assert proc.returncode == 0, proc.stdout + proc.stderr
            proc = g.pip("uninstall", "-y", "six", env=env)
        else:
            proc = g.pip("install", *g.offline("six"), env=env)
        assert proc.returncode == 0, (section, command, proc.stdout + proc.stderr)
        if command == "install":
            g.pip("uninstall", "-y", "--break-system-packages", "six")
    # A section for another command does not count.
    conf = tmp_path / "other.conf"
    conf.write_text("[uninstall]\nbreak-system-packages = true\n")
    assert_refused(g.pip("install", *g.offline("six"), env={"PIP_CONFIG_FILE": str(conf)}))


# Old pips (the guard decides) and new ones (pip decides, the guard stays quiet).
SEMANTICS = [v for v in ("20.3.4", "22.3.1", "24.0") if v in pip_versions_for((3, 11))]
PY311 = [i for i in pyenv_interpreters() if i.version[:2] == (3, 11)]


@pytest.mark.parametrize("interp, version", ONE_PYTHON_PER_PIP)
def test_blocked_and_exempt_commands_match_pip23(guarded_pip, interp, version, tmp_path):
    g = guarded_pip(interp, version)
    new_enough = tuple(int(x) for x in version.split(".")[:2]) >= (22, 2)  # --dry-run, --report
    req = tmp_path / "req.txt"
    req.write_text("six\n")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "setup.py").write_text("from setuptools import setup\nsetup(name='proj')\n")
    blocked = [
        ("install", *g.offline("six")),
        ("install", "--user", *g.offline("six")),
        ("install", "--upgrade", *g.offline("six")),
        ("install", "--force-reinstall", *g.offline("six")),
        ("install", "-r", str(req), *g.offline()),
        ("install", "-e", str(project), "--no-index", "--no-deps"),
        ("uninstall", "-y", "six"),
    ]
    if new_enough:
        blocked.append(("install", "--dry-run", *g.offline("six")))
    for args in blocked:
        assert_refused(g.pip(*args))
    exempt = [
        ("install", "--target", str(tmp_path / "t"), *g.offline("six")),
        ("install", "--prefix", str(tmp_path / "p"), *g.offline("six")),
        ("install", "--root", str(tmp_path / "r"), *g.offline("six")),
        ("download", "-d", str(tmp_path / "d"), *g.offline("six")),
        ("list",), ("freeze",), ("check",), ("show", "pip"),
    ]
    if new_enough:
        exempt.append(("install", "--dry-run", "--report", str(tmp_path / "r.json"),
                       *g.offline("six")))
    for args in exempt:
        proc = g.pip(*args)
        assert proc.returncode == 0, (args, proc.stdout + proc.stderr)
        assert "externally-managed" not in proc.stdout + proc.stderr
    # `pip wheel` is never checked; old pips need the `wheel` package for it, so only
    # the absence of a refusal is asserted.
    proc = g.pip("wheel", "-w", str(tmp_path / "w"), *g.offline("six"))
    assert "externally-managed" not in proc.stdout + proc.stderr
    assert not (g.py.local_dir / "six.py").exists()


@pytest.mark.skipif(not PY311, reason="needs a CPython 3.11")
@pytest.mark.parametrize("version", SEMANTICS)
def test_entry_points(guarded_pip, version, tmp_path):
    """The console script, pip's main() from code, and a subprocess of a guarded process."""
    g = guarded_pip(PY311[0], version)
    # A real console script: pip installs itself (exempt, --prefix) with its `pip` script.
    prefix = tmp_path / "pipprefix"
    proc = g.pip("install", "--prefix", str(prefix), "--ignore-installed", "--no-deps",
                 str(pip_wheel(version)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = next(prefix.rglob("site-packages"))
    script = prefix / "bin" / "pip"
    proc = subprocess.run([str(script), "install", *g.offline("six")], capture_output=True,
                          text=True, env=g.py.env({"PYTHONPATH": str(site)}))
    assert_refused(proc)

    code = ("import sys\n"
            "try:\n    from pip._internal.cli.main import main\n"
            "except ImportError:\n    from pip._internal import main\n"
            "status = main(['install'] + sys.argv[1:])\n"
            "print('status', status)\n")
    proc = g.py.python("-c", code, *g.offline("six"), env={"PYTHONPATH": str(g.pip_path)})
    assert "status 1" in proc.stdout, proc.stdout + proc.stderr
    assert "externally-managed-environment" in proc.stderr and "Traceback" not in proc.stderr

    code = ("import subprocess, sys\n"
            "r = subprocess.run([sys.executable, '-m', 'pip', 'install'] + sys.argv[1:])\n"
            "print('status', r.returncode)\n")
    proc = g.py.python("-c", code, *g.offline("six"), env={"PYTHONPATH": str(g.pip_path)})
    assert "status 1" in proc.stdout and "externally-managed-environment" in proc.stderr


@pytest.mark.parametrize("interp, version", ONE_PYTHON_PER_PIP)
def test_distro_copy_survives_upgrade_and_uninstall_is_refused(guarded_pip, interp, version):
    """PEP 668's second rule, even with the override: the distro's six.py stays."""
    g = guarded_pip(interp, version)
    make_dist(g.py.distro_dir, "six", "1.16.0", modules={"six.py": "__version__ = '1.16.0'\n"},
              kind="egg-info", installer="debian")
    before = {p: p.read_bytes() for p in g.py.distro_dir.rglob("*") if p.is_file()}
    proc = g.pip("install", "--upgrade", "--break-system-packages", *g.offline("six==1.17.0"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = {p: p.read_bytes() for p in g.py.distro_dir.rglob("*") if p.is_file()}
    assert after == before
    imported = g.py.python("-c", "import six; print(six.__file__, six.__version__)")
    assert imported.stdout.split() == [str(g.py.local_dir / "six.py"), "1.17.0"]
    # Removing the local copy is fine; the distro's copy is not pip's to remove.
    proc = g.pip("uninstall", "-y", "--break-system-packages", "six")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = g.pip("uninstall", "-y", "--break-system-packages", "six")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert str(g.py.distro_dir) in proc.stderr and "cannot uninstall six" in proc.stderr
    # The way out is a virtual environment, never a local copy that shadows the distro's.
    assert "virtual environment (python3 -m venv DIR, then DIR/bin/pip install six)" in \
        proc.stderr and "--upgrade" not in proc.stderr, proc.stderr
    assert {p: p.read_bytes() for p in g.py.distro_dir.rglob("*") if p.is_file()} == before


def test_nothing_in_a_virtual_environment(tmp_path, wheelhouse):
    interp = pyenv_interpreters()[-1]
    base = tmp_path / "ub"
    env = dict(os.environ, PYTHONUSERBASE=str(base))
    run_cli("install", "--python", interp.executable, "--user", env=env, inherit=False,
            check=True)
    venv = tmp_path / "venv"
    subprocess.run([interp.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   env=env, check=True)
    py = str(venv / "bin" / "python")
    proc = subprocess.run([py, "-c", "import sys; print(sys.meta_path[0].__name__)"],
                          env=env, capture_output=True, text=True)
    assert proc.stdout.strip() == "sitewarden"  # the guard is loaded, and quiet
    proc = subprocess.run([py, "-m", "pip", "install", "--no-index", "--find-links",
                           str(wheelhouse), "six"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "externally" not in proc.stdout + proc.stderr and "sitewarden" not in proc.stderr
