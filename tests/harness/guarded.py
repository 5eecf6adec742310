"""The interpreter under test, of every kind, behind one interface: :class:`GuardedPython`.

Every interpreter fixture yields one (``guarded_target``, ``bare_target``,
``debian_any``, ``debian_ns``, ``root_ns``, ``guarded``, ``make_hermetic``).  Where it
runs is a strategy, one subclass each, the place itself kept as ``place``; one test body
for all of them:

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
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pytest

from . import roots
from .cli import CLI
from .debian_ns import _DIGEST, DebianNamespace, MountNamespace, available
from .dists import make_dist
from .hermetic import DEFAULT_MARKER, build_hermetic
from .interpreters import Interpreter
from .nobody import as_nobody, public_tmpdir
from .roots import RootTarget
from .spread import DEBIAN, SHARED, portion, scaled

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
#: How far a warning's continuation lines are indented (``detect.emit.INDENT``): deeper
#: than the source line ``warnings`` prints under it.
WARNING_INDENT = "    "


def joined_warnings(text: str) -> str:
    """``text`` (a stderr) with each sitewarden warning on one line again: the runtime
    wraps a long one (``detect.emit.wrapped``), its continuation lines indented by
    :data:`WARNING_INDENT`; other lines as they were."""
    out: List[str] = []
    inside = False
    for line in text.split("\n"):
        if inside and line.startswith(WARNING_INDENT) and line[len(WARNING_INDENT):][:1] != " ":
            out[-1] += " " + line[len(WARNING_INDENT):]
            continue
        inside = bool(WARNING_LINE.match(line))
        out.append(line)
    return "\n".join(out)


def one_line(message: str) -> str:
    """A warning's message (``str(warning.message)``) on one line, as it was worded."""
    return message.replace("\n" + WARNING_INDENT, " ")


#: What the CLI adds to each finding of the probe's report.
CLI_FINDING_KEYS = ("id", "fix", "fix_reason", "acknowledged_at")


class Result:
    """What one run of :data:`IMPORTER` saw."""

    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.proc = proc
        assert proc.returncode == 0, proc.stderr
        events = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
        # Warnings issued at the very first import (by the started hooks, before
        # IMPORTER could replace showwarning) went to stderr.
        early = []
        for line in joined_warnings(proc.stderr).splitlines():
            m = WARNING_LINE.match(line)
            if m:
                early.append(["warning", m.group(3), m.group(4), m.group(1), int(m.group(2))])
        self.events = early + events

    def warnings(self, category: str = "ShadowWarning") -> List[str]:
        return [one_line(e[2]) for e in self.events if e[0] == "warning" and e[1] == category]

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
skip = shutil.ignore_patterns("__pycache__") if sys.argv[3:] == ["skip"] else None
for name in os.listdir(src):
    s, d = os.path.join(src, name), os.path.join(dst, name)
    if os.path.isdir(s) and not os.path.islink(s):
        if not (skip and name == "__pycache__"):
            shutil.copytree(s, d, symlinks=True, dirs_exist_ok=True, ignore=skip)
    else:
        shutil.copy2(s, d, follow_symlinks=False)
"""


#: The findings the CLI adds to the probe's report (``commands.guard_findings``).
CLI_FINDINGS = ("incomplete-deployment", "orphaned-hook", "guard-disabled-here",
                "guard-not-active", "guard-active")


class GuardedPython:
    """An interpreter under test, guard deployed or not (see the module docstring): what
    every interpreter fixture yields.  ``place`` is where it runs (a ``HermeticPython``
    or a ``MountNamespace``: ``DebianNamespace``, ``ChrootNamespace``), for what only
    that place has (``place.root``, ``place.overlays``...)."""

    place: Any

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

    #: The value this target was made from (``harness.spread``: an ``Interpreter``,
    #: ``"debian"``, a ``RootTarget``).
    param: Any = None

    def share(self, items: Sequence[Any]) -> List[Any]:
        """This target's share of a slow loop's inputs (``spread.portion(SHARED, ...)``):
        all of them here; the three root interpreters split them (each every third), so
        each property still runs on each interpreter and every input on one of them."""
        return portion(SHARED, self, items)

    def scaled(self, n: int) -> int:
        """A repetition count for this target: ``n`` here, a third on the roots."""
        return scaled(self, n)

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

    def write_bytes(self, path: Path, data: bytes) -> None:
        """Write ``path`` (its directory must exist), as root where the files are."""
        self.root("import sys; open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())",
                  str(path), data=data)

    def exists(self, path: Path) -> bool:
        """Whether ``path`` exists (even as a dangling symlink) where the files are."""
        proc = self.root("import os, sys; sys.exit(not os.path.lexists(sys.argv[1]))",
                         str(path), check=False)
        return proc.returncode == 0

    def tree_digest(self, path: Path, skip_pycache: bool = False) -> Dict[str, Any]:
        """:meth:`digest` as ``relpath -> (st_mode, content)`` tuples; ``{}`` if missing."""
        return {rel: tuple(v) for rel, v in self.digest(path, skip_pycache).items()}

    def copy_in(self, build: Callable[[Path], None], dest: Path) -> None:
        """``build(stage)`` fills a fresh host directory; its content is copied into
        ``dest`` (merged, modes kept)."""
        n = len(list(self.tmp.glob("stage-*")))
        stage = self.tmp / ("stage-%d" % n)
        stage.mkdir()
        build(stage)
        self.merge_into(stage, dest)

    def merge_into(self, source: Path, dest: Path, pycache: bool = False) -> None:
        """Copy the content of host directory ``source`` into ``dest`` (merged, modes and
        symbolic links kept), its ``__pycache__`` directories left out unless
        ``pycache``: an unpacked wheel's hold what every interpreter of the suite wrote
        there (another patch release's bytecode is not this one's: ``check`` says so),
        and an install holds none."""
        self.root(_COPY, str(source), str(dest), *([] if pycache else ["skip"]))

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
        for line in joined_warnings(proc.stderr).splitlines():
            m = WARNING_LINE.match(line)
            if m:
                out.append((m.group(1), int(m.group(2)), m.group(3), m.group(4)))
        return out

    def check(self, env: Optional[Mapping[str, str]] = None, cwd: str = "/") -> Dict[str, Any]:
        """The report ``sitewarden check`` collects, through the same probe the CLI runs
        (``-I -S -c STATIC_BOOTSTRAP payload static``), in ``env``/``cwd``; checked against
        the live probe's (after a normal start, guard disabled): the same but for what only
        running code tells (``harness.static_compare``)."""
        static = self.probe_static(env, cwd)["check"]
        self.assert_static_matches_live(static, env, cwd)
        return static

    def probe_static(self, env: Optional[Mapping[str, str]] = None,
                     cwd: str = "/") -> Dict[str, Any]:
        """``check``'s probe: ``{"facts", "check", "startup"}``."""
        # Imported here: the package's layout is what the unit tests under refactoring move.
        from sitewarden.probe import runner

        root = self.probe_payload()
        proc = self.python("-I", "-S", "-c", runner.STATIC_BOOTSTRAP, str(root), "static",
                           env=env, cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def probe_payload(self) -> str:
        """The runtime copy a probe of this target runs (the CLI's: ``payload_dir``), in a
        cache the target can write its bytecode into (a namespace mounts ``~/.cache``
        read-only: a private one under the host's temporary directory)."""
        from sitewarden.cli import payload

        if isinstance(self, NamespaceGuarded):
            cache = Path(tempfile.gettempdir()) / "sitewarden-harness-cache"
            cache.mkdir(mode=0o700, exist_ok=True)
            return payload.payload_dir({"XDG_CACHE_HOME": str(cache)})
        return payload.payload_dir()

    def live_check(self, env: Optional[Mapping[str, str]] = None,
                   cwd: str = "/") -> Dict[str, Any]:
        """The report of the probe run after a normal start (guard disabled): what the
        collectors find once the startup code ran, the reference ``check`` is held to."""
        from sitewarden.probe import runner

        root = self.probe_payload()
        proc = self.python("-c", runner.BOOTSTRAP, str(root), "check",
                           env=dict(env or {}, SITEWARDEN_DISABLE="1"), cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def assert_static_matches_live(self, static: Dict[str, Any],
                                   env: Optional[Mapping[str, str]] = None,
                                   cwd: str = "/") -> None:
        """``static`` (a check report) is the live probe's, but for what only running
        code tells (``harness.static_compare``)."""
        from .static_compare import differences

        live = self.live_check(env, cwd)
        # What the CLI adds: the guard's state, the environment, the host, the time, the
        # verdict; each finding's id (and the fixes that name it: the probe writes a mark
        # in their place), its fix, when it was acknowledged.
        static = {k: v for k, v in static.items() if k not in (
            "guard", "environment", "silence_files", "aliases", "host", "time", "verdict")}
        static["findings"] = [_without_id(f) for f in static["findings"]
                              if f["kind"] not in CLI_FINDINGS]
        if static.get("path"):
            static["path"] = dict(static["path"], findings=[
                _without_id(f) for f in static["path"]["findings"]])
        diff = differences(live, static)
        assert not diff, "static and live reports differ:\n" + "\n".join(diff)

    def cli_check(self, env: Optional[Mapping[str, str]] = None,
                  cwd: str = "/", verbose: bool = False) -> Tuple[int, Dict[str, Any], str]:
        """``sitewarden check --python <this> --json`` with the real CLI, plus its
        human output (``verbose``: ``--verbose``'s), its wrapped lines joined again
        (``facts.text.unwrap_lines``): ``(exit status, report, text)``."""
        from sitewarden.facts.text import unwrap_lines

        proc = self.cli("check", "--python", self.executable, "--json", env=env, cwd=cwd)
        assert proc.returncode in (0, 1), proc.stderr
        self.assert_static_matches_live(json.loads(proc.stdout), env, cwd)
        text = self.cli("check", "--python", self.executable, *(["--verbose"] if verbose
                                                                 else []), env=env, cwd=cwd)
        assert text.returncode == proc.returncode, text.stderr
        return proc.returncode, json.loads(proc.stdout), unwrap_lines(text.stdout)


def _without_id(finding: Dict[str, Any]) -> Dict[str, Any]:
    """A finding of the CLI's report as the probe made it: no ``id``, the mark where a
    fix names it (``records.identify``), none of what the CLI adds (its ``fix``...)."""
    from sitewarden.facts.records import ID_MARK, SHOWN

    short = finding.get("id", "")[:SHOWN]
    out = {k: v for k, v in finding.items() if k not in CLI_FINDING_KEYS}
    for key in ("message", "command"):
        if short and isinstance(out.get(key), str):
            out[key] = out[key].replace(short, ID_MARK)
    return out


class HermeticGuarded(GuardedPython):
    """A hermetic Debian-shaped python (``harness.hermetic``), files on the host.

    Built in ``dest`` (a directory the test owns, e.g. below its ``tmp_path``), or
    else in a fresh directory ``nobody`` can traverse, removed by :meth:`close`.
    """

    def __init__(self, interp: Union[Interpreter, str], dest: Optional[Path] = None,
                 marker: Optional[str] = DEFAULT_MARKER) -> None:
        self.tmp = public_tmpdir("sitewarden-target-") if dest is None else Path(dest)
        self.tmp.mkdir(parents=True, exist_ok=True)
        try:
            self.hp = build_hermetic(interp, self.tmp / "h", marker=marker)
        except BaseException:
            if dest is None:
                shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.interp = self.hp.base  # described when given as an executable's path
        self.place = self.hp
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

    def copy_deployment(self, snapshot: Snapshot) -> None:
        """Deploy by copying what the CLI deployed for this interpreter (``snapshot``),
        the manifest's paths made this python's."""
        source = snapshot.tree
        shutil.copytree(source / "sitewarden", self.local_dir / "sitewarden", symlinks=True)
        for name in ("sitewarden.pth", "sitewarden.start"):
            if (source / name).exists():
                shutil.copy2(source / name, self.local_dir / name)
        manifest = self.local_dir / "sitewarden" / "_deployment.json"
        text = manifest.read_text()
        for old, new in ((str(snapshot.site_dir), str(self.local_dir)),
                         (snapshot.executable, self.executable)):
            text = text.replace(json.dumps(old), json.dumps(new))
        manifest.write_text(text)


class NamespaceGuarded(GuardedPython):
    """An interpreter inside a mount namespace (``MountNamespace``: Debian's or a root's)."""

    ns: MountNamespace

    def _adopt(self, ns: MountNamespace) -> None:
        self.ns = self.place = ns
        self.interp = ns.python
        self.home = ns.home
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

    def read_bytes(self, path):
        return self.ns.read_bytes(str(path))  # FileNotFoundError when missing

    def write_bytes(self, path, data):
        self.ns.write_bytes(str(path), data)

    def exists(self, path):
        return self.ns.exists(str(path))

    def tree_digest(self, path, skip_pycache=False):
        return self.ns.tree_digest(str(path), skip_pycache)

    def root_popen(self, code, *args, **kwargs):
        return self.ns.popen([self.ns.helper, "-I", "-S", "-c", code, *args], **kwargs)

    def close(self) -> None:
        self.ns.close()
        super().close()

    def copy_deployment(self, snapshot: Snapshot) -> None:
        """Deploy by copying what the CLI deployed for this interpreter in another
        namespace (``snapshot``: the same paths, the directories it created remade), and
        the cache the CLI left in the namespace's home (its payload tree)."""
        self.root(_RESTORE, str(snapshot.tree), str(self.local_dir),
                  json.dumps(snapshot.created), str(snapshot.tree.parent / "cache"),
                  str(self.home / ".cache"))


class DebianGuarded(NamespaceGuarded):
    """Debian's ``/usr/bin/python3`` in a ``DebianNamespace`` (``extra_overlays``: more
    directories made writable there, e.g. ``/var/lib/dpkg``)."""

    def __init__(self, extra_overlays: Sequence[str] = ()) -> None:
        ok, reason = available()
        if not ok:
            if running_under_ci():
                pytest.fail("the Debian namespace is required under CI: %s" % reason)
            pytest.skip("Debian namespace unavailable: %s" % reason)
        self.tmp = public_tmpdir("sitewarden-target-")
        self._adopt(DebianNamespace(extra_overlays=list(extra_overlays)))


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


def make_guarded(param: Any, deploy: Deploy = True, dest: Optional[Path] = None,
                 marker: Optional[str] = DEFAULT_MARKER) -> GuardedPython:
    """A guarded python for a ``harness.spread`` target value (an ``Interpreter``, or an
    executable's path, makes a hermetic one, in ``dest`` if given, with the marker's
    text ``marker``, None for none), with the guard deployed by the CLI
    (``deploy=True``), copied from a deployment the CLI made (``"copy"``, hermetic
    only, see :func:`deployed_tree`) or not at all (``False``)."""
    if marker != DEFAULT_MARKER and (isinstance(param, RootTarget) or param == DEBIAN):
        raise ValueError("marker: only a hermetic python's marker is the harness's")
    if isinstance(param, RootTarget):
        guarded: GuardedPython = RootGuarded(param)
    elif param == DEBIAN:
        guarded = DebianGuarded()
    else:
        guarded = HermeticGuarded(param, dest, marker=marker)
    guarded.param = param
    try:
        if deploy == "copy":
            guarded.copy_deployment(deployed_tree(param))  # type: ignore[attr-defined]
        elif deploy:
            guarded.install()
    except BaseException:
        guarded.close()
        raise
    return guarded


class Snapshot:
    """What the CLI deployed for one interpreter, to copy (:func:`deployed_tree`): the
    site directory's content in ``tree`` (a host directory), where it was (``site_dir``,
    ``executable``) and the directories the CLI created for it, with their modes."""

    def __init__(self, tree: Path, site_dir: Path, executable: str,
                 created: List[Tuple[str, int]]) -> None:
        self.tree, self.site_dir, self.executable, self.created = (tree, site_dir, executable,
                                                                   created)


#: Copies what the CLI deployed in a namespace (argv[1]) to a host directory (argv[2]),
#: and the CLI's cache in the namespace's home (argv[3]) to argv[4]; prints the
#: directories it created (from the manifest) with their modes.
_SNAPSHOT = r"""
import json, os, shutil, sys
site, dest, cache, cache_dest = sys.argv[1:5]
shutil.copytree(site, dest, symlinks=True, dirs_exist_ok=True)
if os.path.isdir(cache):
    shutil.copytree(cache, cache_dest, symlinks=True, dirs_exist_ok=True)
with open(os.path.join(site, "sitewarden", "_deployment.json")) as f:
    created = json.load(f).get("created_dirs", [])
print(json.dumps([[d, os.stat(d).st_mode & 0o7777] for d in created]))
"""

#: Remakes the created directories (argv[3]), copies host directory argv[1] into argv[2]
#: and the CLI's cache argv[4] (if any) into argv[5].
_RESTORE = r"""
import json, os, shutil, sys
for d, mode in json.loads(sys.argv[3]):
    if not os.path.isdir(d):
        os.mkdir(d)
    os.chmod(d, mode)
shutil.copytree(sys.argv[1], sys.argv[2], symlinks=True, dirs_exist_ok=True)
if os.path.isdir(sys.argv[4]):
    shutil.copytree(sys.argv[4], sys.argv[5], symlinks=True, dirs_exist_ok=True)
"""

_DEPLOYED: Dict[str, Snapshot] = {}


def deployed_tree(param: Any) -> Snapshot:
    """What the real CLI deployed for target ``param`` (an ``Interpreter``, ``"debian"``,
    a ``RootTarget``): deployed once per test process, in a throwaway python (hermetic:
    kept until exit; a namespace: its site directory copied out to the host first)."""
    key = str(getattr(param, "id", param))
    if key not in _DEPLOYED:
        source = make_guarded(param)
        if isinstance(source, HermeticGuarded):
            atexit.register(source.close)
            _DEPLOYED[key] = Snapshot(source.local_dir, source.local_dir, source.executable, [])
        else:
            try:
                tree = public_tmpdir("sitewarden-deployed-")
                atexit.register(shutil.rmtree, str(tree), True)
                proc = source.root(_SNAPSHOT, str(source.local_dir), str(tree / "site"),
                                   str(source.home / ".cache"), str(tree / "cache"))
                created = [(d, mode) for d, mode in json.loads(proc.stdout)]
                _DEPLOYED[key] = Snapshot(tree / "site", source.local_dir, source.executable,
                                          created)
            finally:
                source.close()
    return _DEPLOYED[key]
