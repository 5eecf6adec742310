"""Hermetic "system" interpreters: a Debian-shaped installation per test.

sitewarden guards distro interpreters, but tests must never write into a real
one.  ``build_hermetic`` turns any CPython 3.8+ installation (pyenv's) into a
private prefix ``P`` that behaves like ``/usr`` on Debian, cheaply enough that
every test gets its own::

    P/bin/python3.N                 the real binary, copied (getpath resolves symlinks,
                                    so a symlink would report the original prefix)
    P/bin/python3                   -> python3.N
    P/lib/python3.N/                real directory: a symlink per stdlib entry, plus
        EXTERNALLY-MANAGED          the PEP 668 marker (optional)
        site.py                     a copy of the real one, patched like a distro patch
        site-packages/              empty: the "local" directory (purelib, where pip writes)
        __pycache__/                symlinks to the real .pyc files, except site's
    P/lib/python3/dist-packages/    empty: the "distro" directory, after the local one

The patched ``site.getsitepackages`` appends the distro directory when ``P`` is
among the prefixes, as Debian's patch does, so ``sys.path`` has the local
directory before the distro one and ``python -S -c "import site; ..."`` (how
sitewarden's probe runs) sees it as well.

Surprises this layout works around:

* getpath follows the symlinks of the executable, so ``bin/python3.N`` must be
  a real file.  It is copied, never hard-linked: a hard link shares the inode,
  so a test that chmods or rewrites it would change the pyenv installation.
  pyenv binaries link ``libpython3.N.so`` through an absolute RUNPATH, so the
  copy (17 kB) still finds it; if a build uses ``$ORIGIN``, the library is
  linked into ``P/lib`` too.
* Python 3.11+ runs the ``site`` module frozen into the binary and never reads
  ``site.py``; only ``-X frozen_modules=off`` changes that (3.13 also has
  ``PYTHON_FROZEN_MODULES``, which ``-E`` ignores).  For those versions
  ``bin/python3.N`` is a two-line launcher that execs the copied binary
  (``bin/.python3.N-bin``) with ``argv[0]`` kept and ``-X frozen_modules=off``,
  so getpath still sees ``P/bin/python3.N``.  Debian itself compiles its
  patched ``site`` into its binary, which a copy of pyenv's cannot do.
* The stdlib ``__pycache__`` is not linked as a whole: the first start would
  otherwise write the patched ``site.py``'s bytecode into the pyenv tree.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence, Tuple, Union

from .environ import clean_env
from .interpreters import Interpreter, describe

DEFAULT_MARKER = """\
[externally-managed]
Error=This interpreter is a hermetic fixture of the sitewarden test suite and is
 externally managed: install Python packages with the distribution's tools.
"""

#: Stdlib entries that are not linked into the hermetic stdlib.
_NOT_LINKED = {"site-packages", "site.py", "__pycache__", "EXTERNALLY-MANAGED",
               "sitecustomize.py", "usercustomize.py"}

_SITE_ANCHOR = "\nif not sys.flags.no_site:\n    main()\n"

_SITE_PATCH = '''
# --- sitewarden test harness: emulated distro patch (hermetic fixture) ---
# Like Debian's patch of site.py: the system prefix also reads
# <prefix>/lib/python3/dist-packages, after its own site-packages.
_HERMETIC_PREFIX = {prefix!r}
_HERMETIC_DISTRO_DIR = {distro!r}
_hermetic_upstream_getsitepackages = getsitepackages


def getsitepackages(prefixes=None):
    """Upstream site directories, then the distro directory of the hermetic prefix."""
    sitepackages = _hermetic_upstream_getsitepackages(prefixes)
    if prefixes is None:
        prefixes = PREFIXES
    real = os.path.realpath(_HERMETIC_PREFIX)
    if any(os.path.realpath(p) == real for p in prefixes):
        if _HERMETIC_DISTRO_DIR not in sitepackages:
            sitepackages.append(_HERMETIC_DISTRO_DIR)
    return sitepackages
# --- end of emulated distro patch ---
'''

_LAUNCHER = """#!/bin/bash
# sitewarden test harness: this Python's site module is frozen into the binary;
# run the copied binary with it thawed, so the patched lib/python{v}/site.py is used.
exec -a "$0" {binary} -X frozen_modules=off "$@"
"""

_CHECK = (
    "import json, site, sys, sysconfig; print(json.dumps({"
    "'prefix': sys.prefix, 'base_prefix': sys.base_prefix, 'exec_prefix': sys.exec_prefix,"
    "'purelib': sysconfig.get_path('purelib'), 'platlib': sysconfig.get_path('platlib'),"
    "'stdlib': sysconfig.get_path('stdlib'), 'path': sys.path,"
    "'sitepackages': site.getsitepackages(), 'site_file': site.__file__,"
    "'patched': hasattr(site, '_hermetic_upstream_getsitepackages')}))"
)


class HermeticBuildError(RuntimeError):
    """The hermetic interpreter could not be built or does not behave as designed."""


@dataclass(frozen=True)
class HermeticPython:
    """A private Debian-shaped installation; ``os.fspath()`` gives its executable."""

    executable: Path  # P/bin/python3.N
    prefix: Path  # P (sys.prefix == sys.base_prefix == P)
    stdlib: Path  # P/lib/python3.N, holds the marker
    local_dir: Path  # P/lib/python3.N/site-packages: purelib, pip's default target
    distro_dir: Path  # P/lib/python3/dist-packages: what the "distro" installed
    marker: Optional[Path]  # P/lib/python3.N/EXTERNALLY-MANAGED, or None when built without
    version: Tuple[int, int, int]
    base: Interpreter  # the real installation it was made from
    user_base: Path  # PYTHONUSERBASE of every run (not created up front)

    @property
    def user_site(self) -> Path:
        """Where ``--user`` installs land: ``<user_base>/lib/python3.N/site-packages``."""
        return self.user_base / "lib" / ("python%d.%d" % self.version[:2]) / "site-packages"

    def env(self, extra: Optional[Mapping[str, str]] = None,
            user_base: Union[str, Path, None] = None) -> dict[str, str]:
        """A clean environment (see ``harness.environ``) with this python's user base."""
        return clean_env(user_base or self.user_base, extra)

    def run(self, args: Sequence[Union[str, os.PathLike]], env: Optional[Mapping[str, str]] = None,
            **kwargs) -> subprocess.CompletedProcess:
        """Run ``P/bin/python3.N *args``: text mode, output captured, cwd ``/``, stdin closed.

        ``env`` adds to (and overrides) ``self.env()``; other keywords go to
        ``subprocess.run`` and override the defaults.
        """
        options = dict(capture_output=True, text=True, cwd="/", stdin=subprocess.DEVNULL,
                       timeout=300, env=self.env(env))
        if "input" in kwargs:
            del options["stdin"]
        options.update(kwargs)
        return subprocess.run([str(self.executable), *args], **options)

    def __fspath__(self) -> str:
        return str(self.executable)


def patch_site(source: str, prefix: Path, distro_dir: Path) -> str:
    """The text of ``site.py`` with the emulated distro patch, or HermeticBuildError."""
    for anchor in (_SITE_ANCHOR, "\ndef getsitepackages(prefixes=None):\n",
                   "\n    if prefixes is None:\n        prefixes = PREFIXES\n",
                   "in getsitepackages(prefixes):\n"):
        if source.count(anchor) != 1:
            raise HermeticBuildError("site.py: expected exactly one %r" % anchor)
    head, tail = source.split(_SITE_ANCHOR)
    patch = _SITE_PATCH.format(prefix=str(prefix), distro=str(distro_dir))
    return head + "\n" + patch + _SITE_ANCHOR + tail


def _link_stdlib(real: Path, stdlib: Path) -> None:
    stdlib.mkdir(parents=True)
    for entry in os.listdir(real):
        if entry not in _NOT_LINKED:
            os.symlink(real / entry, stdlib / entry)
    (stdlib / "__pycache__").mkdir()
    real_cache = real / "__pycache__"
    if real_cache.is_dir():
        for entry in os.listdir(real_cache):
            if not entry.startswith(("site.", "sitecustomize.", "usercustomize.")):
                os.symlink(real_cache / entry, stdlib / "__pycache__" / entry)


def _install_binary(base: Interpreter, bindir: Path, name: str) -> Path:
    real = Path(os.path.realpath(base.executable))
    bindir.mkdir(parents=True)
    exe = bindir / name
    if base.frozen_site:
        if not os.access("/bin/bash", os.X_OK):
            raise HermeticBuildError("the launcher of Python 3.11+ needs /bin/bash")
        binary = bindir / (".%s-bin" % name)
        shutil.copy2(real, binary)
        exe.write_text(_LAUNCHER.format(v=name[len("python"):], binary=shlex.quote(str(binary))))
        exe.chmod(0o755)
    else:
        shutil.copy2(real, exe)
    os.symlink(name, bindir / "python3")
    return exe


def _link_libpython(base: Interpreter, libdir: Path) -> None:
    """For builds whose RUNPATH is relative ($ORIGIN/../lib): link libpython next to P/bin."""
    real_lib = Path(base.prefix) / "lib"
    for lib in real_lib.glob("libpython3*.so*"):
        target = libdir / lib.name
        if not target.exists():
            os.symlink(lib, target)


def _check(python: HermeticPython) -> dict:
    proc = python.run(["-c", _CHECK])
    if proc.returncode != 0 and "error while loading shared libraries" in proc.stderr:
        _link_libpython(python.base, python.prefix / "lib")
        proc = python.run(["-c", _CHECK])
    if proc.returncode != 0:
        raise HermeticBuildError("%s does not start:\n%s" % (python.executable, proc.stderr))
    return json.loads(proc.stdout)


def verify(python: HermeticPython) -> None:
    """Fail loudly unless ``python`` behaves like a Debian system python in its prefix."""
    facts = _check(python)
    prefix, local, distro = str(python.prefix), str(python.local_dir), str(python.distro_dir)
    problems = []
    for key in ("prefix", "base_prefix", "exec_prefix"):
        if facts[key] != prefix:
            problems.append("sys.%s is %s" % (key, facts[key]))
    for key in ("purelib", "platlib"):
        if facts[key] != local:
            problems.append("sysconfig %s is %s" % (key, facts[key]))
    if facts["stdlib"] != str(python.stdlib):
        problems.append("sysconfig stdlib is %s" % facts["stdlib"])
    if not facts["patched"] or facts["site_file"] != str(python.stdlib / "site.py"):
        problems.append("the patched site.py is not in use (%s)" % facts["site_file"])
    if facts["sitepackages"] != [local, distro]:
        problems.append("site.getsitepackages() is %s" % facts["sitepackages"])
    path = facts["path"]
    if local not in path or distro not in path or path.index(local) > path.index(distro):
        problems.append("sys.path lacks local before distro: %s" % path)
    foreign = [p for p in path if p and not p.startswith(prefix + os.sep)]
    if foreign:
        problems.append("sys.path has entries outside the prefix: %s" % foreign)
    if python.marker is not None and not python.marker.is_file():
        problems.append("no marker at %s" % python.marker)
    if problems:
        raise HermeticBuildError("%s (from %s):\n  %s" % (
            python.executable, python.base.executable, "\n  ".join(problems)))


def build_hermetic(
    base: Union[Interpreter, str, os.PathLike],
    dest: Union[str, os.PathLike],
    *,
    marker: Optional[str] = DEFAULT_MARKER,
    check: bool = True,
) -> HermeticPython:
    """Build a hermetic system interpreter from ``base`` in ``dest`` (new or empty).

    The prefix is ``dest/usr`` and the user base ``dest/userbase``.  ``marker``
    is the text of ``EXTERNALLY-MANAGED`` (None: no marker).  With ``check``
    (the default; ~30 ms) the result is started once and verified.
    """
    interp = base if isinstance(base, Interpreter) else describe(os.fspath(base))
    if interp.is_debian_system:
        raise HermeticBuildError("%s is Debian's own python: use the debian_ns fixture"
                                 % interp.executable)
    if interp.version[:2] < (3, 8):
        raise HermeticBuildError("%s is older than 3.8" % interp.executable)
    dest = Path(os.path.realpath(dest))
    if dest.exists() and any(dest.iterdir()):
        raise HermeticBuildError("%s is not empty" % dest)
    name = "python%s" % interp.short_version
    prefix = dest / "usr"
    stdlib = prefix / "lib" / name
    distro_dir = prefix / "lib" / "python3" / "dist-packages"

    real_stdlib = Path(interp.stdlib)
    _link_stdlib(real_stdlib, stdlib)
    (stdlib / "site-packages").mkdir()
    distro_dir.mkdir(parents=True)
    site_source = (real_stdlib / "site.py").read_text(encoding="utf-8")
    (stdlib / "site.py").write_text(patch_site(site_source, prefix, distro_dir), encoding="utf-8")
    marker_path = None
    if marker is not None:
        marker_path = stdlib / "EXTERNALLY-MANAGED"
        marker_path.write_text(marker, encoding="utf-8")
    python = HermeticPython(
        executable=_install_binary(interp, prefix / "bin", name),
        prefix=prefix, stdlib=stdlib, local_dir=stdlib / "site-packages",
        distro_dir=distro_dir, marker=marker_path, version=interp.version, base=interp,
        user_base=dest / "userbase",
    )
    if check:
        verify(python)
    return python
