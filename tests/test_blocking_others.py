"""PEP 668 for installers other than pip: ensurepip, setuptools/distutils, installer."""

from __future__ import annotations

import subprocess

import pytest

from harness import pyenv_interpreters, unpacked, wheel
from harness.guarded import make_guarded

PYTHONS = pyenv_interpreters()
EDGES = [PYTHONS[0], PYTHONS[-1]] if len(PYTHONS) > 1 else PYTHONS


def _ids(interps):
    return [pytest.param(i, id=i.id) for i in interps]


@pytest.fixture
def guarded_python(tmp_path):
    """``guarded_python(interp)``: a fresh hermetic python, guard deployed (a copy of what
    the CLI deployed for it once per test process, ``deploy="copy"``)."""
    count = [0]

    def make(interp):
        count[0] += 1
        return make_guarded(interp, deploy="copy", dest=tmp_path / ("hermetic-%d" % count[0]))

    return make


def assert_refused(proc):
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "externally-managed-environment" in out and "hermetic fixture" in out, out
    assert "Traceback" not in out, out


def _snapshot(d):
    return {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}


@pytest.mark.parametrize("interp", _ids(EDGES))
def test_ensurepip(guarded_python, interp, tmp_path):
    hp = guarded_python(interp)
    distro = _snapshot(hp.distro_dir)
    assert_refused(hp.python("-m", "ensurepip"))
    proc = hp.python("-c", "import ensurepip, sitewarden\n"
                           "try:\n    ensurepip.bootstrap()\n"
                           "except sitewarden.ExternallyManagedError as e:\n"
                           "    print('refused', e.exit_status)\n")
    assert proc.stdout.strip() == "refused 1", proc.stdout + proc.stderr
    assert not list(hp.local_dir.glob("pip*"))
    proc = hp.python("-m", "ensurepip", "--root", str(tmp_path / "root"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list((tmp_path / "root").rglob("pip/__init__.py"))
    proc = hp.python("-m", "ensurepip", env={"PIP_BREAK_SYSTEM_PACKAGES": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (hp.local_dir / "pip" / "__init__.py").is_file()
    assert _snapshot(hp.distro_dir) == distro


SETUP_PY = "from setuptools import setup\nsetup(name='demo', version='1.0', py_modules=['demo'])\n"
DISTUTILS_SETUP_PY = ("from distutils.core import setup\n"
                      "setup(name='demo', version='1.0', py_modules=['demo'])\n")


@pytest.mark.parametrize("interp", _ids(EDGES))
def test_setuptools_install_and_develop(guarded_python, interp, tmp_path):
    hp = guarded_python(interp)
    setuptools = unpacked(wheel("setuptools", "69.5.1"))
    project = tmp_path / "demo"
    project.mkdir()
    (project / "demo.py").write_text("X = 1\n")
    (project / "setup.py").write_text(SETUP_PY)
    env = {"PYTHONPATH": str(setuptools)}

    def setup(*args, extra=None):
        return subprocess.run([str(hp.executable), "setup.py", *args], cwd=project,
                              capture_output=True, text=True, env=hp.env({**env, **(extra or {})}))

    assert_refused(setup("install"))
    assert_refused(setup("develop"))
    assert not any(p.name.startswith("demo") for p in hp.local_dir.iterdir())
    proc = setup("install", "--root", str(tmp_path / "root"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list((tmp_path / "root").rglob("demo.py"))
    proc = setup("install", extra={"PIP_BREAK_SYSTEM_PACKAGES": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any(p.name.startswith("demo") for p in hp.local_dir.iterdir())  # an egg


DISTUTILS = [i for i in PYTHONS if i.version[:2] <= (3, 11)]


@pytest.mark.skipif(not DISTUTILS, reason="no Python with the stdlib distutils")
@pytest.mark.parametrize("interp", _ids(DISTUTILS[:1]))
def test_stdlib_distutils_install(guarded_python, interp, tmp_path):
    hp = guarded_python(interp)
    project = tmp_path / "demo"
    project.mkdir()
    (project / "demo.py").write_text("X = 1\n")
    (project / "setup.py").write_text(DISTUTILS_SETUP_PY)

    def setup(*args):
        return subprocess.run([str(hp.executable), "-W", "ignore", "setup.py", *args],
                              cwd=project, capture_output=True, text=True, env=hp.env())

    assert_refused(setup("install"))
    proc = setup("install", "--home", str(tmp_path / "home"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (hp.local_dir / "demo.py").exists()


@pytest.mark.parametrize("interp", _ids(EDGES))
def test_installer_package(guarded_python, interp, tmp_path):
    hp = guarded_python(interp)
    env = {"PYTHONPATH": str(unpacked(wheel("installer", "0.7.0")))}
    six = str(wheel("six", "1.17.0"))
    assert_refused(hp.python("-m", "installer", six, env=env))
    assert not (hp.local_dir / "six.py").exists()
    proc = hp.python("-m", "installer", "--destdir", str(tmp_path / "dest"), six, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = (
        "import sys, sysconfig, sitewarden\n"
        "from installer import install\n"
        "from installer.destinations import SchemeDictionaryDestination\n"
        "from installer.sources import WheelFile\n"
        "dest = SchemeDictionaryDestination(sysconfig.get_paths(), sys.executable, 'posix')\n"
        "with WheelFile.open(sys.argv[1]) as source:\n"
        "    try:\n"
        "        install(source, dest, {})\n"
        "    except sitewarden.ExternallyManagedError:\n"
        "        print('refused')\n"
    )
    proc = hp.python("-c", code, six, env=env)
    assert proc.stdout.strip() == "refused", proc.stdout + proc.stderr
    proc = hp.python("-m", "installer", six, env={**env, "PIP_BREAK_SYSTEM_PACKAGES": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (hp.local_dir / "six.py").is_file()
