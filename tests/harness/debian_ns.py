"""The real Debian ``/usr/bin/python3``, writable in a private mount namespace.

Some behaviour only exists in the real distro interpreter (its frozen, patched
``site``, ``posix_local`` scheme, ``/etc/python3.X/sitecustomize.py`` behind the
stdlib link, the real marker), so tests deploy into it for real, inside a
mount namespace that the host never sees:

* a holder process ``unshare -m --propagation private sh -c ...`` mounts a
  tmpfs on a fresh host temp dir (inside the namespace only), puts an
  overlayfs over each directory an install can touch (lower: the real
  directory, upper/work: in that tmpfs; ``redirect_dir=on``, so a directory
  from the host can be renamed as pip's uninstall does), then execs
  ``sleep infinity``;
* commands enter it with ``nsenter -t <pid> -m``;
* the rest of ``/`` is remounted read-only inside the namespace (temp dirs
  stay writable), so a write the overlays do not cover fails with EROFS
  instead of reaching the host;
* ``close()`` kills the holder: the overlays and the tmpfs vanish with it.

Everything is read back from inside the namespace with a helper interpreter
started as ``-I -S`` (never the Debian python under test), so the guard being
tested cannot influence what the test observes.
"""

from __future__ import annotations

import functools
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .cli import CLI
from .environ import clean_env
from .interpreters import Interpreter, debian_system_python, pyenv_interpreters

#: Never overlaid as a whole: too broad (a missing directory falls back to its parent).
_TOO_BROAD = {"/", "/usr", "/usr/lib", "/usr/local", "/etc", "/var"}

_DIGEST = r"""
import hashlib, json, os, stat, sys
root, skip_pycache, out = sys.argv[1], sys.argv[2] == "1", {}
for dirpath, dirs, files in os.walk(root):
    if skip_pycache:
        dirs[:] = [d for d in dirs if d != "__pycache__"]
    for name in dirs + files:
        path = os.path.join(dirpath, name)
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            value = os.readlink(path)
        elif stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                value = hashlib.sha256(f.read()).hexdigest()
        else:
            value = None
        out[os.path.relpath(path, root)] = [st.st_mode, value]
print(json.dumps(out))
"""

_READ = r"""
import sys
try:
    with open(sys.argv[1], "rb") as f:
        data = f.read()
except FileNotFoundError:
    sys.exit(3)
sys.stdout.buffer.write(data)
"""

_WRITE = "import sys; open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())"

Digest = Dict[str, Tuple[int, Optional[str]]]


class NamespaceError(RuntimeError):
    """The namespace could not be set up, or a helper inside it failed."""


def overlay_dirs(python: Interpreter, extra: Sequence[str] = (), root: str = "") -> List[str]:
    """The directories put under overlays for ``python`` (Debian's), plus ``extra``:
    those an install can touch.

    A missing directory is replaced by its nearest existing parent, unless
    that parent is too broad (``/usr``, ``/etc``...), then it is skipped;
    directories inside another overlaid one are dropped.  ``root``: the
    directory the paths are relative to (a debootstrapped root), for the checks.
    """
    v = python.short_version
    wanted = ["/usr/local/lib/python%s/dist-packages" % v, "/usr/lib/python3/dist-packages",
              python.stdlib, "/usr/local/bin", "/etc/python%s" % v, *extra]
    chosen = set()
    for path in map(os.path.abspath, wanted):
        while not os.path.isdir(root + path) and path not in _TOO_BROAD:
            path = os.path.dirname(path)
        if path not in _TOO_BROAD:
            chosen.add(path)
    return sorted(p for p in chosen if not any(p.startswith(q + "/") for q in chosen))


def _helper_python() -> str:
    """A non-system interpreter for the helper scripts: the running version if pyenv has it."""
    ours = sys.version_info[:2]
    candidates = sorted(pyenv_interpreters(), key=lambda i: (i.version[:2] != ours, i.version))
    return candidates[0].executable if candidates else sys.executable


class MountNamespace:
    """A holder process in a private mount namespace; commands enter it.

    The base of :class:`DebianNamespace` (the host's Debian python, overlays
    over its directories) and of ``harness.roots.ChrootNamespace`` (a
    debootstrapped root, an overlay over all of it, commands ``chroot``ed).
    A subclass sets the facts (``python``, ``executable``, ``stdlib``,
    ``marker``, ``local_dir``, ``distro_dir``, ``helper``, ``cli``), builds
    the holder's shell script and says how a command enters (:meth:`_enter`).
    The holder mounts a tmpfs on ``self.tmp`` (a fresh host temp dir, private
    to the namespace) holding ``home`` and ``userbase``.
    """

    python: Interpreter
    #: The interpreter under test, as a path inside the namespace.
    executable: str
    stdlib: Path
    marker: Path
    local_dir: Path
    distro_dir: Path
    #: The interpreter of ``run_helper`` (never the one under test), run ``-I -S``.
    helper: str
    #: argv prefix of the CLI of this checkout, runnable inside the namespace.
    cli: List[str]

    def __init__(self, prefix: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix=prefix))
        self.user_base = self.tmp / "userbase"
        self.home = self.tmp / "home"
        self._proc: Optional[subprocess.Popen] = None

    @staticmethod
    def host_binds(writable: Sequence[str] = ()) -> List[str]:
        """Host temp dirs (and ``writable``) that stay shared and writable in the namespace."""
        return sorted({os.path.realpath(p) for p in ("/tmp", "/var/tmp", tempfile.gettempdir(),
                                                     *writable) if os.path.isdir(p)})

    def _tmpfs_lines(self) -> List[str]:
        q = shlex.quote
        return ["mount -t tmpfs -o mode=0700 sitewarden-ns %s" % q(str(self.tmp)),
                "mkdir -p %s %s" % (q(str(self.home)), q(str(self.user_base)))]

    def _start(self, script: str) -> None:
        """Start the holder running ``script`` (which prints READY, then execs a sleep)."""
        self._proc = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, cwd="/",
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], 60)
        line = self._proc.stdout.readline() if ready else b""
        if line.strip() != b"READY":
            self._kill()
            err = self._proc.stderr.read().decode(errors="replace").strip()
            raise NamespaceError("mount namespace setup failed: %s" % (err or "timed out"))

    @property
    def pid(self) -> int:
        """The holder process, whose mount namespace commands enter."""
        if self._proc is None or self._proc.poll() is not None:
            raise NamespaceError("the namespace is closed")
        return self._proc.pid

    def env(self, extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
        """Clean environment; PYTHONUSERBASE and HOME are in the namespace's tmpfs."""
        return clean_env(self.user_base, {"HOME": str(self.home), **(extra or {})})

    def _enter(self, argv: Sequence[str], cwd: str) -> List[str]:
        """The host argv that runs ``argv`` in the namespace, in directory ``cwd``."""
        raise NotImplementedError

    def run(self, argv: Sequence[str], env: Optional[Mapping[str, str]] = None,
            input: Optional[str] = None, check: bool = False, cwd: str = "/",
            timeout: float = 300) -> subprocess.CompletedProcess:
        """Run ``argv`` inside the namespace: text mode, output captured.

        ``env`` adds to (and overrides) ``self.env()``.
        """
        return subprocess.run(
            self._enter(argv, cwd), env=self.env(env), input=input, check=check,
            capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL if input is None else None,
        )

    def popen(self, argv: Sequence[str], env: Optional[Mapping[str, str]] = None,
              cwd: str = "/", **kwargs) -> subprocess.Popen:
        """Start ``argv`` inside the namespace without waiting (``subprocess.Popen``
        keywords pass through); ``env`` adds to ``self.env()``."""
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.Popen(self._enter(argv, cwd), env=self.env(env), **kwargs)

    def run_helper(self, script: str, *args: str,
                   data: Optional[bytes] = None) -> subprocess.CompletedProcess:
        """Run a Python ``script`` as root inside the namespace with the helper
        interpreter (``-I -S``, never the Debian python under test); bytes output."""
        return self._helper(script, *args, data=data)

    def _helper(self, script: str, *args: str,
                data: Optional[bytes] = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            self._enter([self.helper, "-I", "-S", "-c", script, *args], "/"),
            env=self.env(), input=data, capture_output=True, timeout=300,
            stdin=subprocess.DEVNULL if data is None else None,
        )

    def read_bytes(self, path: str) -> bytes:
        """The content of ``path`` as seen inside the namespace."""
        proc = self._helper(_READ, path)
        if proc.returncode == 3:
            raise FileNotFoundError(path)
        if proc.returncode != 0:
            raise NamespaceError("reading %s: %s" % (path, proc.stderr.decode(errors="replace")))
        return proc.stdout

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write ``path`` inside the namespace (its directory must exist)."""
        proc = self._helper(_WRITE, path, data=data)
        if proc.returncode != 0:
            raise NamespaceError("writing %s: %s" % (path, proc.stderr.decode(errors="replace")))

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists (even as a dangling symlink) inside the namespace."""
        proc = self._helper("import os, sys; sys.exit(not os.path.lexists(sys.argv[1]))", path)
        return proc.returncode == 0

    def tree_digest(self, path: str, skip_pycache: bool = False) -> Digest:
        """Everything below ``path`` inside the namespace: relpath -> (st_mode, content).

        Content is the sha256 of a file, the target of a symlink, None for a
        directory.  A missing ``path`` gives ``{}``.
        """
        proc = self._helper(_DIGEST, path, "1" if skip_pycache else "0")
        if proc.returncode != 0:
            raise NamespaceError("digest of %s: %s" % (path, proc.stderr.decode(errors="replace")))
        return {rel: (mode, value) for rel, (mode, value) in json.loads(proc.stdout).items()}

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._proc.wait()

    def close(self) -> None:
        """Kill the holder (its namespace, overlays and tmpfs vanish); remove the temp dir."""
        self._kill()
        if self._proc is not None:
            for stream in (self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    stream.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def foreign_startup_files(python: Interpreter) -> List[str]:
    """This machine's own startup files in Debian's site directories, hidden inside the
    namespace (an overlay's whiteout; the real files stay): every ``.pth`` in
    ``/usr/local``'s, and the ``.pth`` files no Debian package owns in
    ``/usr/lib/python3/dist-packages`` (e.g. a CI sandbox's CA hook).  ``check`` lists
    and flags such files (``unowned-startup-code``); the namespace shows Debian as
    installed, as the benchmarks' namespaces do."""
    from sitewarden.facts.owners import dpkg_owners  # the product's own dpkg reader

    local = "/usr/local/lib/python%s/dist-packages" % python.short_version
    distro = "/usr/lib/python3/dist-packages"
    out = []
    for directory in (local, distro):
        try:
            names = sorted(n for n in os.listdir(directory) if n.endswith(".pth"))
        except OSError:
            continue
        paths = [os.path.join(directory, n) for n in names]
        owned = dpkg_owners(paths) if directory == distro else {}
        out += [p for p in paths if p not in owned]
    return out


class DebianNamespace(MountNamespace):
    """A private mount namespace in which Debian's python and its directories are writable."""

    def __init__(self, extra_overlays: Sequence[str] = (), writable: Sequence[str] = (),
                 readonly_root: bool = True) -> None:
        python = debian_system_python()
        if python is None:
            raise NamespaceError("no Debian system python (/usr/bin/python3)")
        super().__init__("sitewarden-ns-")
        self.python = python
        self.executable = python.executable
        self.stdlib = Path(python.stdlib)
        self.marker = self.stdlib / "EXTERNALLY-MANAGED"
        self.local_dir = Path(python.purelib)
        self.distro_dir = Path("/usr/lib/python3/dist-packages")
        self.overlays = overlay_dirs(python, extra_overlays)
        self.hidden = foreign_startup_files(python)
        self.helper = _helper_python()
        self.cli = list(CLI)
        try:
            self._start(self._script(self.host_binds(writable), readonly_root))
        except BaseException:
            self.close()
            raise

    def _script(self, binds: List[str], readonly_root: bool) -> str:
        q = shlex.quote
        lines = ["set -e"]
        lines += ["mount --bind %s %s" % (q(b), q(b)) for b in binds]
        lines += self._tmpfs_lines()
        for n, lower in enumerate(self.overlays):
            if any(c in lower + str(self.tmp) for c in ",:"):
                raise NamespaceError("cannot overlay a path with ',' or ':': %s" % lower)
            layer = self.tmp / "overlay" / str(n)
            upper, work = layer / "upper", layer / "work"
            lines.append("mkdir -p %s %s" % (q(str(upper)), q(str(work))))
            options = "lowerdir=%s,upperdir=%s,workdir=%s,redirect_dir=on" % (lower, upper, work)
            lines.append("mount -t overlay sitewarden-ns -o %s %s" % (q(options), q(lower)))
        lines += ["rm -f %s" % q(p) for p in getattr(self, "hidden", ())]
        if readonly_root:
            lines.append("mount -o remount,bind,ro /")
        lines += ["echo READY", "exec sleep infinity"]
        return "\n".join(lines)

    def _enter(self, argv: Sequence[str], cwd: str) -> List[str]:
        return ["nsenter", "-t", str(self.pid), "-m", "--wd=%s" % cwd, "--", *map(str, argv)]


@functools.lru_cache(maxsize=None)
def available() -> Tuple[bool, str]:
    """(True, "") when a Debian namespace can be made here, else (False, why not).

    Needs root, Debian, ``/usr/bin/python3`` being Debian's with its marker,
    ``unshare``/``nsenter``/``mount``, and overlayfs (tried for real, once).
    """
    if os.name != "posix" or os.geteuid() != 0:
        return False, "needs root (mount namespaces, overlayfs)"
    if not os.path.exists("/etc/debian_version"):
        return False, "not a Debian system (no /etc/debian_version)"
    python = debian_system_python()
    if python is None:
        return False, "/usr/bin/python3 is missing or not Debian's system python"
    if not (Path(python.stdlib) / "EXTERNALLY-MANAGED").is_file():
        return False, "%s/EXTERNALLY-MANAGED is missing" % python.stdlib
    missing = [tool for tool in ("unshare", "nsenter", "mount") if shutil.which(tool) is None]
    if missing:
        return False, "missing tools: %s" % ", ".join(missing)
    try:
        with DebianNamespace() as ns:
            proc = ns.run([python.executable, "-c", "pass"])
            if proc.returncode != 0:
                return False, "%s fails in the namespace: %s" % (python.executable, proc.stderr)
    except (NamespaceError, OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    return True, ""
