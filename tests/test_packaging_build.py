"""What a commit builds: the vendored packaging, the sdist and wheel, the .deb.

- The runtime's ``packaging`` is the committed ``src/sitewarden/_vendor/packaging``: the
  pinned upstream wheel (``_vendor/vendor.txt``) with ``_vendor/patches/*.patch`` applied,
  byte for byte (``packaging/vendor`` makes it), never the CLI environment's packaging.
- The sdist and wheel build offline (``python -m build --no-isolation``, once per session)
  without a warning or deprecation, and pass ``twine check --strict``.
- ``packaging/build-deb`` (``make deb``) gives the same .deb from two fresh clones, with
  no network, with two different Pythons and no .venv.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from harness import wheels

CHECKOUT = Path(__file__).resolve().parent.parent
VENDOR = CHECKOUT / "src" / "sitewarden" / "_vendor"


def _vendor_script():
    """packaging/vendor (a script without .py) as a module."""
    loader = importlib.machinery.SourceFileLoader(
        "sitewarden_vendor_script", str(CHECKOUT / "packaging" / "vendor"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _offline() -> list[str]:
    """``unshare -n`` (no network) when this process may use it, else nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def _source_files() -> list[str]:
    """The checkout's files as a fresh clone of it would have them (tracked, plus new
    files not ignored: uncommitted work is tested too)."""
    out = subprocess.run(["git", "-C", str(CHECKOUT), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, check=True).stdout
    return [rel for rel in out.decode().split("\0") if rel and (CHECKOUT / rel).is_file()]


def _fresh_clone(dest: Path) -> Path:
    """A ``git clone`` of this checkout with its uncommitted files laid over it."""
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(CHECKOUT), str(dest)],
                   check=True, capture_output=True)
    for rel in _source_files():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / rel, dest / rel)
    return dest


# ---------------------------------------------------------------- the vendored packaging


def test_vendored_packaging_is_the_pinned_wheel_with_the_patches():
    """The committed tree is exactly what packaging/vendor makes from the pinned wheel."""
    vendor = _vendor_script()
    name, version = vendor.pinned()
    assert (name, version) == ("packaging", version)
    pristine = vendor.upstream(wheels.wheel(name, version), version)
    made = vendor.vendored(wheels.wheel(name, version))
    assert made == vendor.committed()
    assert {"packaging/LICENSE", "packaging/LICENSE.APACHE", "packaging/LICENSE.BSD"} <= set(made)
    patched = sorted(rel for rel in made if made[rel] != pristine[rel])
    assert patched == ["packaging/utils.py"]  # the one patch, and it applies
    assert b"from .tags import" not in made["packaging/utils.py"].split(b"\ndef ")[0]


def test_runtime_takes_packaging_from_the_checkout_not_the_environment(tmp_path):
    """A packaging 99 on the CLI's sys.path (that no Python can compile) changes nothing
    in the deployed tree: it is the committed copy, byte for byte."""
    fake = tmp_path / "packaging"
    fake.mkdir()
    (fake / "__init__.py").write_text('__version__ = "99"\n')
    (fake / "version.py").write_text("match x:\n    case [*_, 1 := y]: pass\n")
    script = (
        "import hashlib, sys\n"
        "from sitewarden.cli import payload\n"
        "files = payload.runtime_files()\n"
        "assert 'packaging' not in sys.modules, sys.modules['packaging']\n"
        "print(hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest())\n"
        "print('\\n'.join(sorted(r for r in files if '_vendor' in r)))\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "PYTHONPATH": os.pathsep.join([str(CHECKOUT / "src"), str(tmp_path)])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    digest, *vendored = proc.stdout.split()
    from sitewarden.cli import payload

    files = payload.runtime_files()
    assert digest == hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()
    committed = {"sitewarden/_vendor/" + rel: data
                 for rel, data in _vendor_script().committed().items()}
    committed["sitewarden/_vendor/__init__.py"] = (VENDOR / "__init__.py").read_bytes()
    assert {r: files[r] for r in vendored} == committed


# ---------------------------------------------------------------- sdist and wheel


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """``python -m build --no-isolation`` of a copy of the checkout, offline, once:
    ``(output, sdist, wheel)``."""
    pytest.importorskip("build")
    src = tmp_path_factory.mktemp("build-src")
    for rel in _source_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / rel, src / rel)
    out = tmp_path_factory.mktemp("build-out")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTHON") and not k.startswith("PIP_")}
    proc = subprocess.run(
        [*_offline(), sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
         str(src)], capture_output=True, text=True, env=env, cwd=str(src), timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    (sdist,) = out.glob("sitewarden-*.tar.gz")
    (wheel,) = out.glob("sitewarden-*.whl")
    return output, sdist, wheel


def test_sdist_and_wheel_build_offline_without_warnings(built):
    output, _sdist, _wheel = built
    noisy = [line for line in output.splitlines()
             if re.search(r"(?i)\bwarning\b|deprecat|!!|no longer be supported", line)
             or re.search(r"Warning\b", line)]
    assert not noisy, "\n".join(noisy)


def test_twine_check_passes_on_sdist_and_wheel(built):
    pytest.importorskip("twine")
    _output, sdist, wheel = built
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist),
                           str(wheel)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_wheel_carries_the_vendored_packaging_and_the_licences(built):
    _output, _sdist, wheel = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = archive.read(metadata).decode().split("\n\n", 1)[0]  # the headers
        inside = {n[len("sitewarden/_vendor/"):]: archive.read(n) for n in names
                  if n.startswith("sitewarden/_vendor/packaging/")}
    assert inside == _vendor_script().committed()
    assert "License-Expression: MIT AND (Apache-2.0 OR BSD-2-Clause)" in meta
    assert "\nLicense:" not in meta
    assert not [line for line in meta.splitlines()  # no dependency: packaging is vendored
                if line.startswith("Requires-Dist") and "extra ==" not in line]
    assert sorted(line for line in meta.splitlines() if line.startswith("License-File")) == [
        "License-File: LICENSE", "License-File: src/sitewarden/_vendor/packaging/LICENSE",
        "License-File: src/sitewarden/_vendor/packaging/LICENSE.APACHE",
        "License-File: src/sitewarden/_vendor/packaging/LICENSE.BSD"]


# ---------------------------------------------------------------- the .deb


def test_deb_is_the_same_from_two_fresh_clones_offline(tmp_path):
    """`make deb`'s build from two fresh clones (no .venv), without network, one with the
    system python3 and one with this environment's Python: the same bytes."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    offline = _offline()
    if not offline:
        pytest.skip("unshare -n is not permitted here (not root)")
    system = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    digests = []
    for n, python in enumerate((system, sys.executable)):
        clone = _fresh_clone(tmp_path / ("clone%d" % n))
        assert not (clone / ".venv").exists()
        proc = subprocess.run([*offline, python, "-I", "packaging/build-deb", "--out",
                               str(tmp_path / ("out%d" % n))], capture_output=True, text=True,
                              cwd=str(clone), env={"PATH": os.environ.get("PATH", "")},
                              timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        deb = Path(proc.stdout.strip().splitlines()[-1])
        digests.append(hashlib.sha256(deb.read_bytes()).hexdigest())
    assert digests[0] == digests[1]
