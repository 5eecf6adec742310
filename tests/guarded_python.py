"""Hermetic Debian-shaped pythons with the sitewarden guard deployed.

Helper of the shadowing and ``sys.path`` tests.  The guard is deployed once
per interpreter with the real CLI (``sitewarden install --python``) into a
throwaway hermetic python; each test then gets a fresh hermetic python (its
own local, distro and user directories) with a copy of that deployment, which
costs a few milliseconds instead of a CLI run.  Everything runs as real
subprocesses of real interpreters.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pytest

from harness import HermeticPython, build_hermetic, pyenv_interpreters

ROOT = Path(__file__).resolve().parent.parent

#: Imports the modules named in argv, one by one; prints every warning shown
#: (category, message, filename, lineno) and where each module came from.
IMPORTER = r"""
import sys, warnings
out = []
def _show(message, category, filename, lineno, file=None, line=None):
    out.append(["warning", category.__name__, str(message), filename, lineno])
warnings.showwarning = _show
for name in sys.argv[1:]:
    try:
        __import__(name)
        status = "ok"
    except Exception as exc:
        status = "%s: %s" % (type(exc).__name__, exc)
    module = sys.modules.get(name)
    out.append(["import", name, getattr(module, "__file__", None), status])
print(repr(out))  # no json: a test may shadow what json imports
"""

WARNING_LINE = re.compile(r"^(.*?):(\d+): (ShadowWarning|PathWarning): (.*)$")


def newest():
    return pyenv_interpreters()[-1]


def interpreter(minor: int):
    for interp in pyenv_interpreters():
        if interp.version[:2] == (3, minor):
            return interp
    pytest.skip("no CPython 3.%d found" % minor)


def interpreter_params() -> List[Any]:
    return [pytest.param(i, id=i.id) for i in pyenv_interpreters()]


class Result:
    """What one run of :data:`IMPORTER` saw."""

    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.proc = proc
        assert proc.returncode == 0, proc.stderr
        events = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
        # Warnings issued at the very first import (by the started hooks, before
        # IMPORTER could replace showwarning) went to stderr.
        early = []
        for line in proc.stderr.splitlines():
            m = WARNING_LINE.match(line)
            if m:
                early.append(["warning", m.group(3), m.group(4), m.group(1), int(m.group(2))])
        self.events = early + events

    def warnings(self, category: str = "ShadowWarning") -> List[str]:
        return [e[2] for e in self.events if e[0] == "warning" and e[1] == category]

    def warned_about(self, category: str = "ShadowWarning") -> List[str]:
        """Module names the warnings are about (the quoted name they start with)."""
        return [m.split("'")[1] for m in self.warnings(category)]

    def imported(self, name: str) -> Tuple[Optional[str], str]:
        for e in self.events:
            if e[0] == "import" and e[1] == name:
                return e[2], e[3]
        raise KeyError(name)


class Guarded:
    """A hermetic python with the guard deployed in its local directory."""

    def __init__(self, hermetic: HermeticPython) -> None:
        self.h = hermetic
        self.executable = str(hermetic.executable)
        self.local = hermetic.local_dir
        self.distro = hermetic.distro_dir
        self.user = hermetic.user_site
        self.version = hermetic.version

    def run(self, args: Sequence[str], env: Optional[Mapping[str, str]] = None,
            cwd: str = "/") -> subprocess.CompletedProcess:
        return self.h.run(list(args), env=dict(env or {}), cwd=cwd)

    def imports(self, *names: str, env: Optional[Mapping[str, str]] = None, cwd: str = "/",
                flags: Sequence[str] = ()) -> Result:
        return Result(self.run([*flags, "-c", IMPORTER, *names], env=env, cwd=cwd))

    def stderr_warnings(self, proc: subprocess.CompletedProcess) -> List[Tuple[str, int, str, str]]:
        """``(filename, lineno, category, message)`` of the warnings printed on stderr."""
        out = []
        for line in proc.stderr.splitlines():
            m = WARNING_LINE.match(line)
            if m:
                out.append((m.group(1), int(m.group(2)), m.group(3), m.group(4)))
        return out

    def check(self, env: Optional[Mapping[str, str]] = None, cwd: str = "/") -> Dict[str, Any]:
        """The report ``sitewarden check`` collects, through the same probe the CLI
        runs (``-c BOOTSTRAP payload check``, guard disabled), in ``env``/``cwd``."""
        from sitewarden.cli import payload
        from sitewarden.detect import probe

        root = payload.probe_payload()
        proc = self.run(["-c", probe.BOOTSTRAP, str(root), "check"],
                        env=dict(env or {}, SITEWARDEN_DISABLE="1"), cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def cli_check(self, env: Optional[Mapping[str, str]] = None,
                  cwd: str = "/") -> Tuple[int, Dict[str, Any], str]:
        """``sitewarden check --python <this> --json`` with the real CLI, plus its
        human output: ``(exit status, report, text)``."""
        full = self.h.env(env)
        argv = [sys.executable, "-m", "sitewarden", "check", "--python", self.executable]
        proc = subprocess.run(argv + ["--json"], capture_output=True, text=True, env=full,
                              cwd=cwd, stdin=subprocess.DEVNULL, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        text = subprocess.run(argv, capture_output=True, text=True, env=full, cwd=cwd,
                              stdin=subprocess.DEVNULL, timeout=300)
        assert text.returncode == proc.returncode, text.stderr
        return proc.returncode, json.loads(proc.stdout), text.stdout


_DEPLOYED: Dict[str, Path] = {}


def guard_tree(interp, tmp_path_factory) -> Path:
    """A site directory where the real CLI deployed the guard for ``interp``
    (once per test session)."""
    if interp.executable not in _DEPLOYED:
        dest = tmp_path_factory.mktemp("deploy-%s" % interp.id)
        h = build_hermetic(interp, dest / "h")
        proc = subprocess.run(
            [sys.executable, "-m", "sitewarden", "install", "--python", str(h.executable)],
            capture_output=True, text=True, env=h.env(), cwd="/",
            stdin=subprocess.DEVNULL, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _DEPLOYED[interp.executable] = h.local_dir
    return _DEPLOYED[interp.executable]


def guarded_factory(tmp_path, tmp_path_factory):
    """For a ``guarded`` fixture: ``make(interp=None)`` gives a fresh hermetic
    python (default: the newest CPython) with the guard deployed."""
    count = [0]

    def make(interp=None) -> Guarded:
        interp = interp or newest()
        count[0] += 1
        h = build_hermetic(interp, tmp_path / ("py%d" % count[0]))
        src = guard_tree(interp, tmp_path_factory)
        shutil.copytree(src / "sitewarden", h.local_dir / "sitewarden", symlinks=True)
        for name in ("sitewarden.pth", "sitewarden.start"):
            if (src / name).exists():
                shutil.copy2(src / name, h.local_dir / name)
        return Guarded(h)

    return make
