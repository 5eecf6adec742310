"""Guarded interpreters of every kind, behind one interface: :class:`GuardedPython`.

Three back ends, one test body for all of them:

* :class:`HermeticGuarded`: a hermetic Debian-shaped copy of a pyenv CPython
  3.8-3.13 (``harness.hermetic``), built in a directory ``nobody`` can traverse
  (or in a directory the test gives, such as its ``tmp_path``);
* :class:`DebianGuarded`: Debian's real ``/usr/bin/python3`` inside a private
  mount namespace (``harness.debian_ns.DebianNamespace``);
* :class:`RootGuarded`: an interpreter of a debootstrapped root (Debian 13's
  ``python3``, sid's ``python3`` and ``python3.15``, ``harness.roots.ChrootNamespace``).

In each, the guard is deployed with the real CLI into the default-scheme
directory (``local_dir``), or not at all (``deploy=False``); a hermetic python
can instead get a copy of a deployment the CLI made once per interpreter and
session (``deploy="copy"``, a few milliseconds instead of a CLI run), what the
many shadowing and ``sys.path`` tests use.  The marker is at ``marker``.
Everything the tests do to the interpreter's files goes through
:meth:`GuardedPython.root` (a helper Python running as root where the files
are visible: the host, or inside the namespace); :meth:`GuardedPython.python`
runs the interpreter under test, :meth:`GuardedPython.cli` the CLI of this
checkout where the interpreter is.
"""

from __future__ import annotations

import ast
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pytest

from . import roots
from .cli import CLI
from .debian_ns import _DIGEST, DebianNamespace, MountNamespace, available
from .dists import make_dist
from .hermetic import DEFAULT_MARKER, build_hermetic
from .interpreters import Interpreter, debian_system_python, pyenv_interpreters
from .nobody import as_nobody, public_tmpdir
from .roots import TARGETS, RootTarget, root_params

DEBIAN = "debian"


def guarded_params(roots: bool = True) -> List[Any]:
    """Every pyenv CPython 3.8+, Debian's system python and (``roots``) the
    interpreters of the debootstrapped roots, as pytest params of :func:`make_guarded`."""
    params = [pytest.param(i, id=i.id) for i in pyenv_interpreters()]
    deb = debian_system_python()
    params.append(pytest.param(DEBIAN, id=deb.id if deb else DEBIAN, marks=pytest.mark.debian))
    return params + (root_params() if roots else [])


def share_of(param: Any, items: Sequence[Any]) -> List[Any]:
    """The share of a slow loop's ``items`` of the python of a :func:`guarded_params` value
    (:meth:`GuardedPython.share`): all of them, but on the roots' interpreters, which split
    them (each every third)."""
    if isinstance(param, RootTarget):
        index = TARGETS.index(param)
        return list(items)[index::len(TARGETS)]
    return list(items)


def scaled_of(param: Any, n: int) -> int:
    """The repetition count ``n`` for the python of a :func:`guarded_params` value
    (:meth:`GuardedPython.scaled`): ``n``, but a third on the roots' interpreters."""
    if isinstance(param, RootTarget):
        return max(1, -(-n // len(TARGETS)))
    return n


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


class GuardedPython:
    """An interpreter under test with its guard (see the module docstring)."""

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
    #: The user base of every run (``PYTHONUSERBASE``, in the clean environment).
    user_base: Path
    version: Tuple[int, int, int]

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
    @property
    def user_site(self) -> Path:
        """Where ``--user`` installs land: ``<user_base>/lib/python3.N/site-packages``."""
        return self.user_base / "lib" / ("python%d.%d" % self.version[:2]) / "site-packages"

    def python(self, *args: str, env: Optional[Mapping[str, str]] = None,
               timeout: float = 300, cwd: str = "/", input: Optional[str] = None
               ) -> subprocess.CompletedProcess:
        """Run the interpreter under test with ``args`` (see :meth:`run`)."""
        return self.run([self.executable, *args], env=env, timeout=timeout, cwd=cwd, input=input)

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

    # -- what the shadowing and sys.path tests observe
    def imports(self, *names: str, env: Optional[Mapping[str, str]] = None, cwd: str = "/",
                flags: Sequence[str] = ()) -> Result:
        """Import ``names`` one by one (:data:`IMPORTER`): the warnings and where each came from."""
        return Result(self.python(*flags, "-c", IMPORTER, *names, env=env, cwd=cwd))

    @staticmethod
    def stderr_warnings(proc: subprocess.CompletedProcess) -> List[Tuple[str, int, str, str]]:
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
        # Imported here: the package's layout is what the unit tests under refactoring move.
        from sitewarden.cli import payload
        from sitewarden.detect import probe

        root = payload.payload_dir()
        proc = self.python("-c", probe.BOOTSTRAP, str(root), "check",
                           env=dict(env or {}, SITEWARDEN_DISABLE="1"), cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def cli_check(self, env: Optional[Mapping[str, str]] = None,
                  cwd: str = "/") -> Tuple[int, Dict[str, Any], str]:
        """``sitewarden check --python <this> --json`` with the real CLI, plus its
        human output: ``(exit status, report, text)``."""
        proc = self.cli("check", "--python", self.executable, "--json", env=env, cwd=cwd)
        assert proc.returncode in (0, 1), proc.stderr
        text = self.cli("check", "--python", self.executable, env=env, cwd=cwd)
        assert text.returncode == proc.returncode, text.stderr
        return proc.returncode, json.loads(proc.stdout), text.stdout


class HermeticGuarded(GuardedPython):
    """A hermetic Debian-shaped python (``harness.hermetic``), files on the host.

    Built in ``dest`` (a directory the test owns, e.g. below its ``tmp_path``), or
    else in a fresh directory ``nobody`` can traverse, removed by :meth:`close`.
    """

    def __init__(self, interp: Interpreter, dest: Optional[Path] = None,
                 marker: Optional[str] = DEFAULT_MARKER) -> None:
        self.tmp = public_tmpdir("sitewarden-target-") if dest is None else Path(dest)
        self.tmp.mkdir(parents=True, exist_ok=True)
        try:
            self.hp = build_hermetic(interp, self.tmp / "h", marker=marker)
        except BaseException:
            if dest is None:
                shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.interp = interp
        self.version = self.hp.version
        self.executable = str(self.hp.executable)
        self.local_dir = self.hp.local_dir
        self.distro_dir = self.hp.distro_dir
        self.stdlib = self.hp.stdlib
        self.user_base = self.hp.user_base
        self.marker = self.hp.marker  # type: ignore[assignment]  # None when built without
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

    def copy_deployment(self, source: Path) -> None:
        """Deploy by copying what the CLI deployed in the site directory ``source``."""
        shutil.copytree(source / "sitewarden", self.local_dir / "sitewarden", symlinks=True)
        for name in ("sitewarden.pth", "sitewarden.start"):
            if (source / name).exists():
                shutil.copy2(source / name, self.local_dir / name)


class NamespaceGuarded(GuardedPython):
    """An interpreter inside a mount namespace (``MountNamespace``: Debian's or a root's)."""

    ns: MountNamespace

    def _adopt(self, ns: MountNamespace) -> None:
        self.ns = ns
        self.interp = ns.python
        self.version = ns.python.version
        self.executable = ns.executable
        self.local_dir = ns.local_dir
        self.distro_dir = ns.distro_dir
        self.stdlib = ns.stdlib
        self.user_base = ns.user_base
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


class DebianGuarded(NamespaceGuarded):
    """Debian's ``/usr/bin/python3`` in a ``DebianNamespace``."""

    def __init__(self) -> None:
        ok, reason = available()
        if not ok:
            if running_under_ci():
                pytest.fail("the Debian namespace is required under CI: %s" % reason)
            pytest.skip("Debian namespace unavailable: %s" % reason)
        self.tmp = public_tmpdir("sitewarden-target-")
        self._adopt(DebianNamespace())


class RootGuarded(NamespaceGuarded):
    """An interpreter of a debootstrapped root (see ``harness.roots``)."""

    def __init__(self, target: RootTarget) -> None:
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
        return share_of(self.root_target, items)

    def scaled(self, n):
        return scaled_of(self.root_target, n)


def running_under_ci() -> bool:
    """CI=true (or any value but empty/0/false/no): missing prerequisites are failures."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def open_root(target: roots.RootTarget) -> roots.ChrootNamespace:
    """A namespace over ``target``'s cached root, building the root first if missing.

    Skipped where that cannot work; a failure under CI (a missing root that
    cannot be built is a failure there, never a skip).
    """
    ok, reason = roots.available()
    if ok:
        try:
            roots.ensure_root(target.release)
        except roots.RootError as exc:
            ok, reason = False, str(exc)
    if not ok:
        if running_under_ci():
            pytest.fail("the %s root is required under CI: %s" % (target.release, reason))
        pytest.skip("%s root unavailable: %s" % (target.release, reason))
    return roots.open_target(target)


Deploy = Union[bool, str]


def make_guarded(param: Any, deploy: Deploy = True, dest: Optional[Path] = None) -> GuardedPython:
    """A guarded python for a :func:`guarded_params` value (an ``Interpreter`` makes a
    hermetic one, in ``dest`` if given), with the guard deployed by the CLI
    (``deploy=True``), copied from a deployment the CLI made (``"copy"``, hermetic
    only, see :func:`deployed_tree`) or not at all (``False``)."""
    if isinstance(param, RootTarget):
        guarded: GuardedPython = RootGuarded(param)
    elif param == DEBIAN:
        guarded = DebianGuarded()
    else:
        guarded = HermeticGuarded(param, dest)
    try:
        if deploy == "copy":
            assert isinstance(guarded, HermeticGuarded), "copied deployments are hermetic only"
            guarded.copy_deployment(deployed_tree(param))
        elif deploy:
            guarded.install()
    except BaseException:
        guarded.close()
        raise
    return guarded


_DEPLOYED: Dict[str, Path] = {}


def deployed_tree(interp: Interpreter) -> Path:
    """A site directory where the real CLI deployed the guard for ``interp`` (once per
    test process, in a throwaway hermetic python, removed at exit)."""
    if interp.executable not in _DEPLOYED:
        source = make_guarded(interp)
        atexit.register(source.close)
        _DEPLOYED[interp.executable] = source.local_dir
    return _DEPLOYED[interp.executable]
