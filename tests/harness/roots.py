"""Debootstrapped Debian roots (12 bookworm, 13 trixie, sid) as test targets.

Users run the guard on the interpreter their distribution ships; this module
gives the suite those interpreters without touching the host:

* :func:`ensure_root` builds (or reuses) one root per release in
  ``$SITEWARDEN_TEST_CACHE/roots/<release>`` (default
  ``~/.cache/sitewarden-tests``), outside the clone.  Under an ``fcntl`` lock
  (``<release>.lock``) it builds into ``<release>.tmp`` in steps that each
  check the real state of the directory first, so an interrupted build (or
  one started by hand with the same ``debootstrap`` command) is finished, not
  restarted:

  1. ``debootstrap --variant=minbase --include=<DEBOOTSTRAP>`` (skipped when
     the directory holds a completed bootstrap: no ``debootstrap/`` work dir
     left, every included package installed);
  2. ``apt-get install`` of the release's extra packages (sid: ``python3.15``),
     in a private mount namespace with ``/proc`` and ``/dev``, apt told not to
     check the Release file's validity date (sid's snapshot expires);
  3. ``apt-get clean``, a stamp file (``.sitewarden-root.json``: release,
     packages, versions) written, ``<release>.tmp`` renamed to ``<release>``.

  A finished root is never modified again: a root whose stamp lacks a
  package of :data:`PACKAGES` is copied to ``<release>.tmp``, completed, and
  swapped in by rename.
* :class:`ChrootNamespace` runs a test against one interpreter of a root with
  the interface of ``debian_ns.DebianNamespace`` (both derive from
  ``MountNamespace``): a holder ``unshare -m`` process mounts a tmpfs, an
  overlay over the whole root (lower: the cached root, upper/work in the
  tmpfs), ``/proc``, ``/dev``, the host temp dirs (so ``tmp_path`` and the
  like are seen at the same paths), the wheel cache, and read-only at their
  own paths: this checkout and the helper interpreter; every command is
  ``chroot``ed into the overlay.
* The CLI of this checkout runs inside the root on the root's own
  ``/usr/bin/python3`` (``-I -S``: no site, so no guard under test loads into
  it), with the checkout's ``src`` and a copy of the host's ``packaging``
  (plus its dist-info) first on ``sys.path``, bytecode cached in the tmpfs:
  ``ns.cli + ["install", "--python", ns.executable]``.  Nothing is built or
  installed into the root to run it.

``make roots`` (``main(["ensure", RELEASE...])``) builds what is missing;
``.ci/run`` calls it before the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .debian_ns import MountNamespace, NamespaceError, _helper_python, overlay_dirs
from .interpreters import _PROBE, Interpreter, _describe
from .wheels import ENV_CACHE, cache_dir

MIRROR = os.environ.get("SITEWARDEN_TEST_MIRROR", "http://deb.debian.org/debian")
RELEASES = ("bookworm", "trixie", "sid")

#: Installed by debootstrap into every root: what the tests use (pip, setuptools, the
#: distro packages of the shadowing tests) and valgrind for the benchmarks.  The one place
#: the package lists live.
DEBOOTSTRAP = (
    "python3", "python3-venv", "python3-pip", "python3-yaml", "python3-six",
    "python3-httplib2", "python3-pyparsing", "python3-setuptools", "python3-lazr.uri",
    "valgrind",
)
#: Added with apt-get after the bootstrap (so that adding one does not bootstrap again):
#: in every root (python3-distro: a distro copy for the user-site shadowing tests), and
#: per release (sid: python3.15, PEP 829 live).
APT_ALL: Tuple[str, ...] = ("python3-distro",)
EXTRA: Dict[str, Tuple[str, ...]] = {
    "bookworm": APT_ALL,
    "trixie": APT_ALL,
    "sid": APT_ALL + ("python3.15", "python3.15-venv"),
}
PACKAGES: Dict[str, Tuple[str, ...]] = {rel: DEBOOTSTRAP + EXTRA[rel] for rel in RELEASES}

#: apt-get options for every call: sid's Release file is served past its Valid-Until.
APT = ["apt-get", "-o", "Acquire::Check-Valid-Until=false", "-o", "Dpkg::Use-Pty=0", "-q"]
STAMP = ".sitewarden-root.json"

#: What to run inside the root: its CLI on ``/usr/bin/python3`` of the root.
CLI_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class RootTarget:
    """One interpreter of one release's root, as a test parameter."""

    release: str
    executable: str

    @property
    def id(self) -> str:
        """Test id: ``trixie-python3``, ``sid-python3.15``."""
        return "%s-%s" % (self.release, os.path.basename(self.executable))


#: The interpreters Debian ships in 2026 beside the host's Debian 12 python: tests run on these.
TARGETS = (
    RootTarget("trixie", "/usr/bin/python3"),    # 3.13
    RootTarget("sid", "/usr/bin/python3"),       # 3.14
    RootTarget("sid", "/usr/bin/python3.15"),    # 3.15, PEP 829 .start files live
)


class RootError(RuntimeError):
    """A root could not be built or used."""


def roots_dir() -> Path:
    """``$SITEWARDEN_TEST_CACHE/roots`` (default ``~/.cache/sitewarden-tests/roots``)."""
    base = os.environ.get(ENV_CACHE) or Path.home() / ".cache" / "sitewarden-tests"
    return Path(base) / "roots"


def root_path(release: str) -> Path:
    return roots_dir() / release


# -- building ---------------------------------------------------------------------------------

def installed_packages(root: Path) -> Dict[str, str]:
    """``{package: version}`` of what dpkg says is installed in ``root``."""
    try:
        text = (root / "var/lib/dpkg/status").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    out = {}
    for stanza in text.split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            if line and not line[0].isspace() and ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields.get("Status") == "install ok installed" and "Package" in fields:
            out[fields["Package"]] = fields.get("Version", "")
    return out


def read_stamp(root: Path) -> Optional[dict]:
    try:
        return json.loads((root / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _usable(release: str, root: Path) -> bool:
    stamp = read_stamp(root)
    return (stamp is not None and stamp.get("release") == release
            and set(PACKAGES[release]) <= set(stamp.get("packages", ())))


def _log(log: Path, text: str) -> None:
    with open(log, "a", encoding="utf-8") as f:
        f.write(text + "\n")


def _run_logged(argv: Sequence[str], log: Path, env: Optional[Mapping[str, str]] = None) -> None:
    _log(log, "$ " + " ".join(map(shlex.quote, argv)))
    with open(log, "a", encoding="utf-8") as f:
        proc = subprocess.run(list(argv), stdout=f, stderr=subprocess.STDOUT, env=env,
                              stdin=subprocess.DEVNULL, cwd="/")
    _log(log, "rc=%d" % proc.returncode)
    if proc.returncode != 0:
        raise RootError("%s failed (exit %d), see %s" % (argv[0], proc.returncode, log))


def _in_root(root: Path, shell: str) -> List[str]:
    """argv running ``shell`` chrooted into ``root`` with /proc and /dev, in a private
    mount namespace (the mounts vanish with it)."""
    r = shlex.quote(str(root))
    script = "\n".join([
        "set -e",
        "mount -t proc proc %s/proc" % r,
        "mount --rbind /dev %s/dev" % r,
        "exec chroot %s /bin/sh -c %s" % (r, shlex.quote(shell)),
    ])
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script]


def _bootstrapped(tmp: Path) -> bool:
    """Whether ``tmp`` holds a completed debootstrap of :data:`DEBOOTSTRAP`."""
    return (tmp.is_dir() and not (tmp / "debootstrap").exists()
            and set(DEBOOTSTRAP) <= set(installed_packages(tmp)))


def build_steps(release: str, tmp: Path, log: Path) -> None:
    """Bring ``tmp`` to a complete root for ``release`` (each step skipped when done)."""
    if not _bootstrapped(tmp):
        if tmp.exists():
            _log(log, "incomplete bootstrap in %s: starting again" % tmp)
            shutil.rmtree(tmp)
        if shutil.which("debootstrap") is None:
            raise RootError("debootstrap is not installed (apt-get install debootstrap)")
        _run_logged(["debootstrap", "--variant=minbase", "--include=" + ",".join(DEBOOTSTRAP),
                     release, str(tmp), MIRROR], log)
        if not _bootstrapped(tmp):
            raise RootError("debootstrap of %s left packages missing, see %s" % (release, log))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive", LC_ALL="C.UTF-8")
    missing = [p for p in PACKAGES[release] if p not in installed_packages(tmp)]
    if missing:
        apt = " ".join(map(shlex.quote, APT))
        _run_logged(_in_root(tmp, "%s update && %s install -y --no-install-recommends %s"
                             % (apt, apt, " ".join(map(shlex.quote, missing)))), log, env)
        still = [p for p in PACKAGES[release] if p not in installed_packages(tmp)]
        if still:
            raise RootError("%s: not installed after apt-get: %s" % (release, " ".join(still)))
    if any((tmp / "var/cache/apt/archives").glob("*.deb")):
        _run_logged(_in_root(tmp, " ".join(map(shlex.quote, APT)) + " clean"), log, env)


@contextlib.contextmanager
def _locked(release: str) -> Iterator[None]:
    roots_dir().mkdir(parents=True, exist_ok=True)
    with open(roots_dir() / (release + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_root(release: str) -> Path:
    """The cached root of ``release``, built first if missing or lacking packages.

    Raises :class:`RootError` when it cannot be built (not root, no
    debootstrap, no network...).
    """
    if release not in PACKAGES:
        raise RootError("unknown release %r (known: %s)" % (release, ", ".join(RELEASES)))
    final = root_path(release)
    if _usable(release, final):
        return final
    if os.geteuid() != 0:
        raise RootError("building a debootstrapped root needs root")
    with _locked(release):
        if _usable(release, final):  # built by another process meanwhile
            return final
        tmp = roots_dir() / (release + ".tmp")
        log = roots_dir() / (release + ".log")
        started = time.monotonic()
        if final.exists() and not tmp.exists():
            # Lacks a package added to PACKAGES since: complete a copy, never the root in use.
            _run_logged(["cp", "-a", "--reflink=auto", str(final), str(tmp)], log)
            (tmp / STAMP).unlink()
        build_steps(release, tmp, log)
        packages = installed_packages(tmp)
        stamp = {
            "release": release,
            "mirror": MIRROR,
            "packages": list(PACKAGES[release]),
            "versions": {p: packages[p] for p in PACKAGES[release]},
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_seconds": round(time.monotonic() - started),
        }
        (tmp / STAMP).write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")
        for old in roots_dir().glob(release + ".old-*"):
            if time.time() - old.stat().st_mtime > 86400:
                shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            # Namespaces may still use it as their lower layer: set aside, removed a day later.
            final.rename(roots_dir() / ("%s.old-%d" % (release, time.time())))
        tmp.rename(final)
        _log(log, "ready: %s (%ds)" % (final, stamp["build_seconds"]))
    return final


# -- using ------------------------------------------------------------------------------------

_LAUNCH = r"""
import runpy, sys
sys.path[:0] = sys.argv[1:3]
del sys.argv[1:3]
sys.argv[0] = "sitewarden"
runpy.run_module("sitewarden", run_name="__main__", alter_sys=False)
"""


def _checkout() -> Path:
    """This checkout (the CLI under test): the directory holding ``src/sitewarden``."""
    import sitewarden

    src = Path(sitewarden.__file__).resolve().parent.parent
    if src.name != "src":
        raise RootError("sitewarden is not imported from a checkout's src/: %s" % src)
    return src.parent


@functools.lru_cache(maxsize=None)
def _cli_home() -> Path:
    """A host temp dir (seen at the same path inside every root, through the temp dir
    binds) holding ``lib`` (the host's ``packaging`` and its dist-info, the CLI's one
    dependency) and ``pycache`` (the CLI's bytecode, kept for the life of this process)."""
    import atexit

    import packaging

    home = Path(tempfile.mkdtemp(prefix="sitewarden-roots-cli-"))
    atexit.register(shutil.rmtree, str(home), True)
    home.chmod(0o755)
    pkg = Path(packaging.__file__).resolve().parent
    for src in [pkg, *pkg.parent.glob("packaging-%s.dist-info" % packaging.__version__)]:
        shutil.copytree(src, home / "lib" / src.name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (home / "pycache").mkdir()
    return home


class ChrootNamespace(MountNamespace):
    """One interpreter of a cached root, writable through an overlay, in a private
    mount namespace; commands are ``chroot``ed into it (see the module docstring)."""

    def __init__(self, release: str, executable: str = "/usr/bin/python3",
                 writable: Sequence[str] = ()) -> None:
        self.release = release
        self.root = ensure_root(release)
        super().__init__("sitewarden-root-")
        self.mnt = self.tmp / "root"
        self.executable = executable
        helper = Path(_helper_python()).resolve()
        helper_prefix: Optional[Path] = helper.parent.parent
        if str(helper_prefix) in ("/", "/usr", "/usr/local"):
            # No separate interpreter (no pyenv): the root's own, still -I -S (no site, so
            # nothing deployed into it runs), never the host's /usr over the root's.
            helper, helper_prefix = Path(CLI_PYTHON), None
        self.helper = str(helper)
        checkout = _checkout()
        home = _cli_home()
        self.cli = [CLI_PYTHON, "-I", "-S", "-X", "pycache_prefix=%s" % (home / "pycache"),
                    "-c", _LAUNCH, str(checkout / "src"), str(home / "lib")]
        try:
            self._start(self._script(self.host_binds(writable), checkout, helper_prefix))
            self.python = self._describe()
        except BaseException:
            self.close()
            raise
        self.stdlib = Path(self.python.stdlib)
        self.marker = self.stdlib / "EXTERNALLY-MANAGED"
        self.local_dir = Path(self.python.purelib)
        self.distro_dir = Path("/usr/lib/python3/dist-packages")
        #: What an install can touch (as ``DebianNamespace.overlays``; here all is overlaid).
        self.overlays = overlay_dirs(self.python, root=str(self.root))

    def _script(self, binds: List[str], checkout: Path, helper_prefix: Optional[Path]) -> str:
        q = shlex.quote
        mnt, layer = self.mnt, self.tmp / "layer"
        if any(c in str(self.root) + str(self.tmp) for c in ",:"):
            raise NamespaceError("cannot overlay a path with ',' or ':': %s" % self.root)
        lines = ["set -e", *self._tmpfs_lines()]
        lines.append("mkdir -p %s %s %s" % (q(str(layer / "upper")), q(str(layer / "work")),
                                            q(str(mnt))))
        options = "lowerdir=%s,upperdir=%s,workdir=%s,redirect_dir=on" % (
            self.root, layer / "upper", layer / "work")
        lines.append("mount -t overlay sitewarden-root -o %s %s" % (q(options), q(str(mnt))))
        # Host temp dirs first (they hold self.tmp: home, userbase; and the CLI's lib and
        # bytecode), then read-only: this checkout, the helper interpreter; the wheel cache
        # (pips run from their unpacked wheels, wheels to install) stays writable as on the
        # host, so their bytecode is written once, not compiled at every pip start; then
        # /proc and /dev.
        for path in binds:
            lines.append("mkdir -p %s" % q(str(mnt) + path))
            lines.append("mount --rbind %s %s" % (q(path), q(str(mnt) + path)))
        ro = [str(checkout)] + ([str(helper_prefix)] if helper_prefix else [])
        for path in [*ro, str(cache_dir())]:
            inside = q(str(mnt) + path)
            lines.append("mkdir -p %s" % inside)
            lines.append("mount --bind %s %s" % (q(path), inside))
            if path in ro:
                lines.append("mount -o remount,bind,ro %s" % inside)
        lines.append("mount -t proc proc %s" % q(str(mnt / "proc")))
        lines.append("mount --rbind /dev %s" % q(str(mnt / "dev")))
        lines += ["echo READY", "exec sleep infinity"]
        return "\n".join(lines)

    def _enter(self, argv: Sequence[str], cwd: str) -> List[str]:
        return ["nsenter", "-t", str(self.pid), "-m", "--", "chroot", str(self.mnt),
                "/bin/sh", "-c", 'cd "$0" && exec "$@"', cwd, *map(str, argv)]

    def _describe(self) -> Interpreter:
        return _describe_in(self.root, self.executable, self)

    @property
    def id(self) -> str:
        return "%s-%s" % (self.release, os.path.basename(self.executable))


_DESCRIBED: Dict[Tuple[str, str, str], Interpreter] = {}


def _describe_in(root: Path, executable: str, ns: ChrootNamespace) -> Interpreter:
    """The facts of ``executable`` in ``root`` (probed once per process, in ``ns``)."""
    stamp = read_stamp(root) or {}
    key = (str(root), stamp.get("built", ""), executable)
    if key not in _DESCRIBED:
        proc = ns.run([executable, "-E", "-s", "-S", "-c", _PROBE])
        interp = _describe(executable, proc)
        if interp is None:
            raise RootError("%s in %s is not usable: %s" % (executable, root, proc.stderr))
        _DESCRIBED[key] = interp
    return _DESCRIBED[key]


@functools.lru_cache(maxsize=None)
def available() -> Tuple[bool, str]:
    """(True, "") when chroot namespaces can be made here (the roots themselves are built
    on demand by :func:`ensure_root`), else (False, why not)."""
    if os.name != "posix" or os.geteuid() != 0:
        return False, "needs root (mount namespaces, overlayfs, chroot)"
    missing = [t for t in ("unshare", "nsenter", "mount", "chroot") if shutil.which(t) is None]
    if missing:
        return False, "missing tools: %s" % ", ".join(missing)
    return True, ""


def root_params() -> list:
    """``pytest.param`` per :data:`TARGETS`, marked ``debian`` and ``roots``."""
    import pytest

    return [pytest.param(t, id=t.id, marks=[pytest.mark.debian, pytest.mark.roots])
            for t in TARGETS]


def open_target(target: RootTarget) -> ChrootNamespace:
    """A fresh namespace for ``target``; building its root first if needed."""
    return ChrootNamespace(target.release, target.executable)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="make roots",
                                     description="Build or show the cached Debian roots.")
    sub = parser.add_subparsers(dest="command", required=True)
    ensure = sub.add_parser("ensure", help="build the missing roots (default: all)")
    ensure.add_argument("releases", nargs="*", default=list(RELEASES))
    sub.add_parser("show", help="where the roots are and what they hold")
    args = parser.parse_args(argv)
    if args.command == "ensure":
        failed = 0
        for release in args.releases:
            try:
                started = time.monotonic()
                path = ensure_root(release)
                print("%s: %s (%.0fs)" % (release, path, time.monotonic() - started))
            except RootError as exc:
                print("%s: FAILED: %s" % (release, exc), file=sys.stderr)
                failed = 1
        return failed
    for release in RELEASES:
        stamp = read_stamp(root_path(release))
        print("%s: %s" % (release, json.dumps(stamp) if stamp else "missing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
