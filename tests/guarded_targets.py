"""Guarded interpreters of every kind the reliability tests run on, behind one interface.

A :class:`Target` is either a hermetic Debian-shaped copy of a pyenv CPython
(3.8-3.13), built in a directory ``nobody`` can traverse, Debian's real
``/usr/bin/python3`` inside a private mount namespace (``DebianNamespace``),
or an interpreter of a debootstrapped root (Debian 13's ``python3``, sid's
``python3`` and ``python3.15``, ``harness.roots.ChrootNamespace``);
in both, the guard is deployed with the real CLI into the default-scheme
directory (``local_dir``) and the marker is at ``marker``.  Everything the
tests do to the target's files goes through :meth:`Target.root` (a helper
Python running as root where the target's files are visible: the host, or
inside the namespace), so one test body covers every interpreter.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import pytest

from harness import (
    DebianNamespace,
    Interpreter,
    available,
    build_hermetic,
    debian_system_python,
    make_dist,
    pyenv_interpreters,
)
from harness.debian_ns import _DIGEST, MountNamespace
from harness.nobody import as_nobody, public_tmpdir
from harness.roots import TARGETS, RootTarget, root_params

CLI = [sys.executable, "-m", "sitewarden"]
DEBIAN = "debian"


def target_params(roots: bool = True) -> List[Any]:
    """Every pyenv CPython 3.8+, Debian's system python and (``roots``) the
    interpreters of the debootstrapped roots, as pytest params."""
    params = [pytest.param(i, id=i.id) for i in pyenv_interpreters()]
    deb = debian_system_python()
    params.append(pytest.param(DEBIAN, id=deb.id if deb else DEBIAN, marks=pytest.mark.debian))
    return params + (root_params() if roots else [])


#: Writes stdin to argv[1] after removing whatever is there (file, link, directory).
_PUT = r"""
import os, shutil, sys
path, kind = sys.argv[1], sys.argv[2]
data = sys.stdin.buffer.read()
if os.path.isdir(path) and not os.path.islink(path):
    shutil.rmtree(path)
elif os.path.lexists(path):
    os.unlink(path)
if kind == "file":
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, int(sys.argv[3], 8) if len(sys.argv) > 3 else 0o644)
elif kind == "dir":
    os.mkdir(path)
elif kind == "symlink":
    os.symlink(data.decode(), path)
elif kind == "fifo":
    os.mkfifo(path)
elif kind != "absent":
    raise SystemExit("unknown kind " + kind)
"""

_READ = r"""
import sys
with open(sys.argv[1], "rb") as f:
    sys.stdout.buffer.write(f.read())
"""

_COPY = r"""
import os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
for name in os.listdir(src):
    s, d = os.path.join(src, name), os.path.join(dst, name)
    if os.path.isdir(s) and not os.path.islink(s):
        shutil.copytree(s, d, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(s, d, follow_symlinks=False)
"""


class Target:
    """A guarded interpreter (see the module docstring)."""

    interp: Interpreter
    executable: str
    local_dir: Path
    distro_dir: Path
    stdlib: Path
    marker: Path
    #: A phrase of the marker's own message.
    marker_phrase: str
    #: A host directory (mode 0755) for staging files; visible to the target.
    tmp: Path
    #: argv prefix of the CLI of this checkout, as run where the target is.
    cli_argv: List[str] = CLI

    @property
    def label(self) -> str:
        v = ".".join(map(str, self.interp.version))
        return ("debian " + v) if self.interp.is_debian_system else v

    @property
    def release(self) -> Optional[str]:
        """The Debian release of a root target (``trixie``, ``sid``), else None."""
        return None

    def share(self, items: Sequence[Any]) -> List[Any]:
        """This target's share of a slow loop's inputs: all of them here; the three root
        interpreters split them (each every third), so each property still runs on each
        interpreter and every input on one of them, at a third of the time."""
        return list(items)

    def scaled(self, n: int) -> int:
        """A repetition count for this target: ``n`` here, a third on the roots."""
        return n

    @property
    def id(self) -> str:
        return self.interp.id

    # -- to implement
    def env(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        raise NotImplementedError

    def run(self, argv: Sequence[str], env: Optional[Mapping[str, str]] = None,
            timeout: float = 300, input: Optional[str] = None,
            cwd: str = "/") -> subprocess.CompletedProcess:
        """Run ``argv`` (text, output captured) in a clean environment plus ``env``."""
        raise NotImplementedError

    def popen(self, argv: Sequence[str], env: Optional[Mapping[str, str]] = None,
              **kwargs: Any) -> subprocess.Popen:
        raise NotImplementedError

    def root(self, code: str, *args: str, data: Optional[bytes] = None,
             check: bool = True) -> subprocess.CompletedProcess:
        """Run Python ``code`` as root where the target's files are (bytes output)."""
        raise NotImplementedError

    def root_popen(self, code: str, *args: str, **kwargs: Any) -> subprocess.Popen:
        """Start Python ``code`` as root where the target's files are, without waiting."""
        raise NotImplementedError

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- built on those
    def python(self, *args: str, env: Optional[Mapping[str, str]] = None,
               timeout: float = 300) -> subprocess.CompletedProcess:
        return self.run([self.executable, *args], env=env, timeout=timeout)

    def cli(self, *args: str, env: Optional[Mapping[str, str]] = None, cwd: str = "/"
            ) -> subprocess.CompletedProcess:
        """The CLI of this checkout, run where the target's files are."""
        return self.run([*self.cli_argv, *args], env=env, cwd=cwd)

    def nobody(self, argv: Sequence[str]) -> List[str]:
        """``argv`` as the user ``nobody`` (see ``harness.nobody``)."""
        return as_nobody(argv)

    def _checked(self, proc: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
        if proc.returncode != 0:
            raise RuntimeError("%s failed: %s" % (what, proc.stderr.decode(errors="replace")))
        return proc

    def put(self, path: Path, kind: str = "file", data: bytes = b"", mode: int = 0o644) -> None:
        """Replace ``path`` with a file holding ``data``, a directory, a symlink to
        ``data``, a FIFO or nothing (``kind``: file, dir, symlink, fifo, absent)."""
        self.root(_PUT, str(path), kind, "%o" % mode, data=data)

    def read_bytes(self, path: Path) -> bytes:
        return self.root(_READ, str(path)).stdout

    def copy_in(self, build: Callable[[Path], None], dest: Path) -> None:
        """``build(stage)`` fills a fresh host directory; its content is copied into
        ``dest`` (merged, modes kept)."""
        n = len(list(self.tmp.glob("stage-*")))
        stage = self.tmp / ("stage-%d" % n)
        stage.mkdir()
        build(stage)
        self.merge_into(stage, dest)

    def merge_into(self, source: Path, dest: Path) -> None:
        """Copy the content of host directory ``source`` into ``dest`` (merged, modes and
        symbolic links kept)."""
        self.root(_COPY, str(source), str(dest))

    def chmod(self, path: Path, mode: int) -> None:
        self.root("import os, sys; os.chmod(sys.argv[1], int(sys.argv[2], 8))", str(path),
                  "%o" % mode)

    def digest(self, path: Path, skip_pycache: bool = False) -> Dict[str, Any]:
        """relpath -> [st_mode, sha256 or link target] of everything below ``path``."""
        proc = self.root(_DIGEST, str(path), "1" if skip_pycache else "0")
        return json.loads(proc.stdout)

    def add_shadowed(self, names: Sequence[str], body: str = "",
                     plain: Sequence[str] = ()) -> None:
        """Modules ``names`` installed by the "distro" (1.0) and, shadowing them, by pip
        in the local directory (2.0); modules ``plain`` only in the local directory."""
        def distro(stage: Path) -> None:
            for name in names:
                make_dist(stage, name, "1.0", {name + ".py": body})

        def local(stage: Path) -> None:
            for name in [*names, *plain]:
                make_dist(stage, name, "2.0", {name + ".py": body}, installer="pip")

        self.copy_in(distro, self.distro_dir)
        self.copy_in(local, self.local_dir)

    def install(self, *args: str) -> subprocess.CompletedProcess:
        proc = self.cli("install", "--python", self.executable, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    def uninstall(self, *args: str) -> subprocess.CompletedProcess:
        proc = self.cli("uninstall", "--python", self.executable, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc


class HermeticTarget(Target):
    def __init__(self, interp: Interpreter) -> None:
        self.tmp = public_tmpdir("sitewarden-target-")
        try:
            self.hp = build_hermetic(interp, self.tmp / "h")
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.interp = interp
        self.executable = str(self.hp.executable)
        self.local_dir = self.hp.local_dir
        self.distro_dir = self.hp.distro_dir
        self.stdlib = self.hp.stdlib
        assert self.hp.marker is not None
        self.marker = self.hp.marker
        self.marker_phrase = "hermetic fixture of the sitewarden test suite"

    def env(self, extra=None):
        return self.hp.env(extra)

    def run(self, argv, env=None, timeout=300, input=None, cwd="/"):
        return subprocess.run([str(a) for a in argv], env=self.env(env), cwd=cwd, text=True,
                              capture_output=True, timeout=timeout, input=input,
                              stdin=subprocess.DEVNULL if input is None else None)

    def popen(self, argv, env=None, **kwargs):
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.Popen([str(a) for a in argv], env=self.env(env), cwd="/", **kwargs)

    def root(self, code, *args, data=None, check=True):
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, *args], input=data,
                              capture_output=True, timeout=300,
                              stdin=subprocess.DEVNULL if data is None else None)
        return self._checked(proc, "helper") if check else proc

    def root_popen(self, code, *args, **kwargs):
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.Popen([sys.executable, "-I", "-S", "-c", code, *args], **kwargs)


class NamespaceTarget(Target):
    """A target inside a mount namespace (``MountNamespace``: Debian's or a root's)."""

    ns: MountNamespace

    def _adopt(self, ns: MountNamespace) -> None:
        self.ns = ns
        self.interp = ns.python
        self.executable = ns.executable
        self.local_dir = ns.local_dir
        self.distro_dir = ns.distro_dir
        self.stdlib = ns.stdlib
        self.marker = ns.marker
        self.marker_phrase = "To install Python packages system-wide, try apt install"
        self.cli_argv = list(ns.cli)

    def env(self, extra=None):
        return self.ns.env(extra)

    def run(self, argv, env=None, timeout=300, input=None, cwd="/"):
        return self.ns.run([str(a) for a in argv], env=env, timeout=timeout, input=input, cwd=cwd)

    def popen(self, argv, env=None, **kwargs):
        return self.ns.popen([str(a) for a in argv], env=env, **kwargs)

    def root(self, code, *args, data=None, check=True):
        proc = self.ns.run_helper(code, *args, data=data)
        return self._checked(proc, "helper") if check else proc

    def root_popen(self, code, *args, **kwargs):
        return self.ns.popen([self.ns.helper, "-I", "-S", "-c", code, *args], **kwargs)

    def close(self) -> None:
        self.ns.close()
        super().close()


class DebianTarget(NamespaceTarget):
    def __init__(self) -> None:
        from harness.fixtures import running_under_ci

        ok, reason = available()
        if not ok:
            if running_under_ci():
                pytest.fail("the Debian namespace is required under CI: %s" % reason)
            pytest.skip("Debian namespace unavailable: %s" % reason)
        self.tmp = public_tmpdir("sitewarden-target-")
        self._adopt(DebianNamespace())


class RootChrootTarget(NamespaceTarget):
    """An interpreter of a debootstrapped root (see ``harness.roots``)."""

    def __init__(self, target: RootTarget) -> None:
        from harness.fixtures import open_root

        self.tmp = public_tmpdir("sitewarden-target-")
        try:
            self._adopt(open_root(target))
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.root_target = target

    @property
    def label(self) -> str:
        return "%s %s" % (self.root_target.release, ".".join(map(str, self.interp.version)))

    @property
    def id(self) -> str:
        return self.root_target.id

    @property
    def release(self) -> Optional[str]:
        return self.root_target.release

    def share(self, items):
        index = TARGETS.index(self.root_target)
        return list(items)[index::len(TARGETS)]

    def scaled(self, n):
        return max(1, -(-n // len(TARGETS)))


def make_target(param: Any, deploy: bool = True) -> Target:
    """A target for a ``target_params()`` value, with the guard deployed (``deploy``)."""
    if isinstance(param, RootTarget):
        target: Target = RootChrootTarget(param)
    elif param == DEBIAN:
        target = DebianTarget()
    else:
        target = HermeticTarget(param)
    try:
        if deploy:
            target.install()
    except BaseException:
        target.close()
        raise
    return target
