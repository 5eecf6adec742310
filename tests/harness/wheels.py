"""Wheels from PyPI, downloaded once, and the pip versions to test on each Python.

sitewarden must stop every pip since 9 in-process, so tests run real pips
from their wheels (``PYTHONPATH=<pip_dir(v)> python -m pip``, the wheel
extracted; the ``.whl`` itself works too, only slower) inside hermetic
interpreters.  Wheels are cached in ``$SITEWARDEN_TEST_CACHE`` (default
``~/.cache/sitewarden-tests/wheels``) under an ``fcntl`` lock, so parallel
runs (pytest-xdist, two checkouts) neither clash nor download twice.

The pip matrix is ``MATRIX``; the ``25.*``/``26.*`` entries stand for the
newest final release of that line (pre-, dev- and post-releases excluded)
that the Python accepts, i.e. what ``pip install -U "pip<N+1"`` gives there.
A version is kept for a Python when its wheel's ``Requires-Python`` (as
published on PyPI) admits it and it actually starts there.  Measured on
CPython 3.8.18-3.13.0 (hermetic interpreters: empty site-packages, no
setuptools), with ``python -m pip --version`` (+ starts, - fails)::

    pip      3.8  3.9  3.10 3.11 3.12 3.13   why it fails
    9.0.3     +    +    -    -    -    -     collections.Mapping (gone in 3.10)
    10.0.1    +    +    -    -    -    -     collections.Mapping
    18.1      +    +    -    -    -    -     collections.Mapping
    19.3.1    +    +    +    +    -    -     imports distutils (gone in 3.12)
    20.3.4    +    +    +    +    -    -     distutils
    21.3.1    +    +    +    +    -    -     distutils
    22.3.1    +    +    +    +    +    +
    23.0      +    +    +    +    +    +     (PEP 668 without the override)
    23.0.1    +    +    +    +    +    +
    24.0      +    +    +    +    +    +
    25.x    25.0.1 25.3 25.3 25.3 25.3 25.3  25.1+ requires Python >= 3.9
    26.x      -  26.0.1 26.3 26.3 26.3 26.3  26.0+ requires 3.9, 26.1+ 3.10

(25.x/26.x as of December 2026.)  ``test_harness.py::test_pip_matrix``
re-measures it on every interpreter, so a change shows up as a failure.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple, Union

from packaging.specifiers import SpecifierSet
from packaging.version import Version

ENV_CACHE = "SITEWARDEN_TEST_CACHE"
PYPI_JSON = "https://pypi.org/pypi/%s/json"
INDEX_TTL = 24 * 3600

MATRIX: Tuple[str, ...] = ("9.0.3", "10.0.1", "18.1", "19.3.1", "20.3.4", "21.3.1", "22.3.1",
                           "23.0", "23.0.1", "24.0", "25.*", "26.*")

#: (oldest Python, oldest pip that starts there): measured, see the table above.
START_RULES: Tuple[Tuple[Tuple[int, int], str], ...] = (
    ((3, 10), "19.3"),  # older vendored libraries import ABCs from collections
    ((3, 12), "22.3"),  # older pips import distutils (hermetic pythons have no setuptools)
)


def cache_dir() -> Path:
    """The wheel cache (created on demand)."""
    default = Path.home() / ".cache" / "sitewarden-tests" / "wheels"
    path = Path(os.environ.get(ENV_CACHE) or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    with open(directory / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _escape(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _cached(directory: Path, name: str, version: str) -> Union[Path, None]:
    prefix = "%s-%s-" % (_escape(name), version)
    for path in sorted(directory.glob("*.whl")):
        if path.name.lower().startswith(prefix):
            return path
    return None


def wheel(name: str, version: str) -> Path:
    """The cached wheel of ``name==version``, downloaded from PyPI on first use.

    Downloaded by the running interpreter's pip (``--no-deps --only-binary=:all:``,
    Requires-Python ignored), so platform wheels match the running interpreter.
    """
    directory = cache_dir()
    found = _cached(directory, name, version)
    if found:
        return found
    with _locked(directory):
        found = _cached(directory, name, version)
        if found:
            return found
        with tempfile.TemporaryDirectory(dir=directory, prefix=".download-") as tmp:
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                 "--ignore-requires-python", "--disable-pip-version-check", "--no-input",
                 "%s==%s" % (name, version), "-d", tmp],
                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
            )
            got = [p for p in Path(tmp).iterdir() if p.name.lower().startswith(
                "%s-%s-" % (_escape(name), version)) and p.suffix == ".whl"]
            if proc.returncode != 0 or len(got) != 1:
                raise RuntimeError("downloading %s==%s failed:\n%s%s" % (
                    name, version, proc.stdout, proc.stderr))
            target = directory / got[0].name
            os.replace(got[0], target)
            return target


def pip_wheel(version: str) -> Path:
    """The cached ``pip==version`` wheel (put it on PYTHONPATH and run ``-m pip``)."""
    return wheel("pip", version)


def unpacked(whl: Path) -> Path:
    """``whl`` extracted next to the cache (once), for PYTHONPATH.

    Much faster than the ``.whl`` itself: zipimport cannot store bytecode, so
    pip from a wheel compiles all its modules at every start (~2 s), while
    an extracted tree keeps the ``__pycache__`` of every Python version.
    """
    directory = cache_dir() / "unpacked"
    target = directory / whl.name[: -len(".whl")]
    if target.is_dir():
        return target
    directory.mkdir(exist_ok=True)
    with _locked(cache_dir()):
        if not target.is_dir():
            tmp = Path(tempfile.mkdtemp(dir=directory, prefix=".unpack-"))
            tmp.chmod(0o755)
            with zipfile.ZipFile(whl) as archive:
                archive.extractall(tmp)
            os.replace(tmp, target)
    return target


def pip_dir(version: str) -> Path:
    """The ``pip==version`` wheel, extracted: ``PYTHONPATH=<it> python -m pip`` runs that pip."""
    return unpacked(pip_wheel(version))


def _pip_releases() -> dict:
    """PyPI's release list for pip (cached for a day; a stale copy if PyPI is unreachable)."""
    directory = cache_dir()
    path = directory / "pypi-pip.json"
    with _locked(directory):
        fresh = path.exists() and time.time() - path.stat().st_mtime < INDEX_TTL
        if not fresh:
            try:
                with urllib.request.urlopen(PYPI_JSON % "pip", timeout=60) as response:
                    releases = json.load(response)["releases"]
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(releases))
                os.replace(tmp, path)
            except OSError:
                if not path.exists():
                    raise
        return json.loads(path.read_text())


def _requires_python(files: Sequence[dict]) -> Union[SpecifierSet, None]:
    """The Requires-Python of the release's (only, py3-none-any) wheel, or None: no wheel."""
    wheels = [f for f in files if f["filename"].endswith(".whl") and not f.get("yanked")]
    if not wheels:
        return None
    return SpecifierSet(wheels[0].get("requires_python") or "")


def _starts(pip: str, python: Version) -> bool:
    return all(python.release[:2] < minimum_python or Version(pip) >= Version(oldest)
               for minimum_python, oldest in START_RULES)


def pip_versions_for(python_version: Union[str, Sequence[int]],
                     start_rules: bool = True) -> List[str]:
    """The pip versions of ``MATRIX`` that install on and start with that Python.

    ``python_version``: ``"3.11"``, ``"3.11.7"`` or ``(3, 11, 7)``.  ``start_rules``
    False: every version whose Requires-Python admits it (whether it starts depends on
    more than the version, e.g. a distutils shim from setuptools: measure it there).
    """
    if not isinstance(python_version, str):
        python_version = ".".join(map(str, python_version))
    python = Version(python_version)
    releases = _pip_releases()
    result = []
    for entry in MATRIX:
        if entry.endswith(".*"):
            line = entry[:-2]
            candidates = sorted(
                (v for v in releases
                 if v.split(".")[0] == line and not Version(v).is_prerelease
                 and not Version(v).is_postrelease),
                key=Version, reverse=True)
        else:
            candidates = [entry]
        for candidate in candidates:
            spec = _requires_python(releases.get(candidate, []))
            if spec is not None and spec.contains(python, prereleases=True) \
                    and (not start_rules or _starts(candidate, python)):
                result.append(candidate)
                break
    return result
