"""Which real CPython interpreters the suite runs against.

sitewarden is deployed into interpreters of other versions than the one
running pytest, so tests are parametrized over every CPython found here:
pyenv's (``pyenv root``/versions/*/bin/python3.N) and Debian's
``/usr/bin/python3``.  ``SITEWARDEN_TEST_PYTHONS`` (executables separated by
``os.pathsep``) replaces discovery, e.g. on machines without pyenv.

Facts come from running each interpreter once (``-E -s -S``, so nothing
deployed into it can interfere), never from file names; results are cached
for the life of the process.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

ENV_PYTHONS = "SITEWARDEN_TEST_PYTHONS"
SYSTEM_PYTHON = "/usr/bin/python3"
MIN_VERSION = (3, 8)

# Runs on Python 2.7 too, so that old_interpreters() can report them.
_PROBE = r"""
import json, os, platform, sys
try:
    import sysconfig
    schemes, stdlib = list(sysconfig.get_scheme_names()), sysconfig.get_path("stdlib")
    purelib = sysconfig.get_path("purelib")
except Exception:
    schemes, stdlib, purelib = [], "", ""
try:
    import _imp
    frozen_site = bool(_imp.is_frozen("site"))
except Exception:
    frozen_site = False
sys.stdout.write(json.dumps({
    "implementation": platform.python_implementation(),
    "version": list(sys.version_info[:3]),
    "prefix": sys.prefix,
    "base_prefix": getattr(sys, "base_prefix", sys.prefix),
    "schemes": schemes, "stdlib": stdlib, "purelib": purelib,
    "frozen_site": frozen_site,
}))
"""


@dataclass(frozen=True)
class Interpreter:
    """A real interpreter, as it described itself.

    ``os.fspath(interpreter)`` is its executable, so an ``Interpreter`` can be
    put straight into a subprocess argv.
    """

    executable: str
    version: Tuple[int, int, int]
    is_debian_system: bool
    prefix: str
    stdlib: str
    purelib: str
    frozen_site: bool  # site.py is compiled into the binary (3.11+): editing site.py does nothing

    @property
    def id(self) -> str:
        """Test id: ``cpython3.11.7`` or ``debian3.11.2``."""
        kind = "debian" if self.is_debian_system else "cpython"
        return kind + ".".join(map(str, self.version))

    @property
    def short_version(self) -> str:
        """``3.11``, as in ``lib/python3.11``."""
        return "%d.%d" % self.version[:2]

    def __fspath__(self) -> str:
        return self.executable


class DiscoveryError(RuntimeError):
    """An interpreter named in SITEWARDEN_TEST_PYTHONS is missing or not usable."""


def pyenv_root() -> Optional[Path]:
    """``pyenv root`` when pyenv is installed, else ``$PYENV_ROOT`` or ``~/.pyenv`` if present."""
    exe = shutil.which("pyenv")
    if exe:
        proc = subprocess.run([exe, "root"], capture_output=True, text=True, timeout=60)
        if proc.returncode == 0 and proc.stdout.strip():
            return Path(proc.stdout.strip())
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    return root if root.is_dir() else None


def _candidates() -> List[str]:
    found: List[str] = []
    root = pyenv_root()
    if root is not None:
        name = re.compile(r"^python[23]\.\d+$")
        for bindir in sorted((root / "versions").glob("*/bin")):
            found += [str(p) for p in sorted(bindir.iterdir()) if name.match(p.name)]
    if os.path.exists(SYSTEM_PYTHON):
        found.append(SYSTEM_PYTHON)
    return found


def _describe(executable: str, proc: subprocess.CompletedProcess) -> Optional[Interpreter]:
    try:
        facts = json.loads(proc.stdout)
    except ValueError:
        return None
    if proc.returncode != 0 or facts["implementation"] != "CPython":
        return None
    if facts["prefix"] != facts["base_prefix"]:
        return None  # a virtual environment (pyenv-virtualenv), not an installation
    debian = (
        os.path.realpath(executable).startswith("/usr/bin/")
        and facts["base_prefix"] == "/usr"
        and ("deb_system" in facts["schemes"] or "dist-packages" in facts["purelib"])
    )
    return Interpreter(
        executable=executable,
        version=tuple(facts["version"]),  # type: ignore[arg-type]
        is_debian_system=debian,
        prefix=facts["prefix"],
        stdlib=facts["stdlib"],
        purelib=facts["purelib"],
        frozen_site=facts["frozen_site"],
    )


def _probe_all(executables: List[str], strict: bool) -> List[Interpreter]:
    """Probe all executables concurrently (one process each)."""
    procs = []
    for exe in executables:
        try:
            procs.append((exe, subprocess.Popen(
                [exe, "-E", "-s", "-S", "-c", _PROBE], stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
            )))
        except OSError as exc:
            if strict:
                raise DiscoveryError("%s: cannot run it: %s" % (exe, exc)) from None
    found: List[Interpreter] = []
    for exe, popen in procs:
        out, err = popen.communicate(timeout=120)
        interp = _describe(exe, subprocess.CompletedProcess(popen.args, popen.returncode, out, err))
        if interp is None:
            message = "%s: not a usable CPython installation: %s" % (exe, err.strip()[-300:])
            if strict:
                raise DiscoveryError(message)
            warnings.warn(message, stacklevel=3)
            continue
        found.append(interp)
    return found


@functools.lru_cache(maxsize=None)
def _discover(override: Optional[str]) -> Tuple[Interpreter, ...]:
    if override is not None:
        executables = []
        for entry in filter(None, override.split(os.pathsep)):
            path = shutil.which(entry) if os.sep not in entry else entry
            if not path or not os.path.exists(path):
                raise DiscoveryError("%s: no such interpreter %r" % (ENV_PYTHONS, entry))
            executables.append(os.path.abspath(path))
        found = _probe_all(executables, strict=True)
    else:
        found = _probe_all(_candidates(), strict=False)
    unique = {}
    for interp in found:
        unique.setdefault(os.path.realpath(interp.executable), interp)
    return tuple(sorted(unique.values(), key=lambda i: (i.version, i.is_debian_system)))


def all_interpreters() -> List[Interpreter]:
    """Every CPython found, of any version (including 2.7 and 3.6/3.7)."""
    return list(_discover(os.environ.get(ENV_PYTHONS)))


def interpreters() -> List[Interpreter]:
    """Every CPython >= 3.8 found: pyenv's and Debian's, oldest first."""
    return [i for i in all_interpreters() if i.version[:2] >= MIN_VERSION]


def pyenv_interpreters() -> List[Interpreter]:
    """CPython >= 3.8 installations that are not the Debian system python."""
    return [i for i in interpreters() if not i.is_debian_system]


@functools.lru_cache(maxsize=None)
def describe(executable: str) -> Interpreter:
    """Probe one interpreter by path (cached), discovered or not; DiscoveryError if unusable."""
    if not os.path.exists(executable):
        raise DiscoveryError("%s: no such file" % executable)
    return _probe_all([os.path.abspath(executable)], strict=True)[0]


def _system_python() -> Optional[Interpreter]:
    try:
        found = describe(SYSTEM_PYTHON)
    except DiscoveryError:
        return None
    return found if found.is_debian_system else None


def debian_system_python() -> Optional[Interpreter]:
    """Debian's system python, or None.

    The one discovered (or listed in SITEWARDEN_TEST_PYTHONS), else
    ``/usr/bin/python3`` if it is Debian's: the override chooses what tests are
    parametrized over, not whether the Debian namespace tests can run.
    """
    return next((i for i in interpreters() if i.is_debian_system), None) or _system_python()


def old_interpreters() -> List[Interpreter]:
    """Interpreters older than 3.8, which sitewarden must refuse."""
    return [i for i in all_interpreters() if i.version[:2] < MIN_VERSION]
