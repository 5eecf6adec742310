"""Test harness of sitewarden: real interpreters, never the real machine's directories.

* ``interpreters``: which CPythons to test against (pyenv's, Debian's).
* ``hermetic``: a private Debian-shaped copy of any CPython 3.8+, per test.
* ``dists``: "installed" distributions for shadowing tests.
* ``debian_ns``: Debian's real ``/usr/bin/python3``, writable in a mount namespace.
* ``roots``: debootstrapped Debian roots (13 trixie, sid with 3.15), chroot namespaces.
* ``wheels``: cached wheels from PyPI and the pip x Python matrix.
* ``guarded``: ``GuardedPython``, the one interface of an interpreter under test, which
  every interpreter fixture yields (``guarded_target``, ``bare_target``, ``debian_any``,
  ``debian_ns``, ``root_ns``, ``guarded``, ``make_hermetic``), guard deployed or not;
  where it runs is a strategy behind it (``HermeticGuarded``, ``DebianGuarded``,
  ``RootGuarded``; the hermetic prefix or the namespace itself is its ``place``).
* ``spread``: the one way to spread a test over the targets, ``spread(mode, inputs)``
  with the modes ``EVERY`` (every target), ``ONE_PER`` (one per release), ``ROTATED``
  and ``SHARED``; ``portion``, ``scaled``, ``inputs_of``, ``turn`` for test bodies.
* ``cli``: the CLI of this checkout on the host (``CLI``, ``run_cli``).
* ``fixtures``: the pytest fixtures (``pytest_plugins = ["harness.fixtures"]``).
* ``inputs``: one test per input of a reliability loop, the loop still run once per
  interpreter (``once``, ``PerInput``; the params and xdist groups from ``spread``).
* ``fast``: the ``slow`` marker and ``--fast`` (``make test-fast``, each test function
  once, the interpreters in rotation), loaded by ``tests/conftest.py``.
* ``payloads``, ``recorder``, ``oracle``: the startup oracle (``test_startup_oracle``):
  generated payloads, a PEP 578 recorder planted as the first startup file, and the
  comparison of what ran with what ``check --json`` said; ``real_tools``: real wheels
  that ship startup files, with the verdicts they should get.
"""

from .debian_ns import DebianNamespace, MountNamespace, NamespaceError, available, overlay_dirs
from .dists import make_dist
from .environ import clean_env
from .hermetic import (
    DEFAULT_MARKER,
    HermeticBuildError,
    HermeticPython,
    build_hermetic,
    patch_site,
    verify,
)
from .interpreters import (
    DiscoveryError,
    Interpreter,
    all_interpreters,
    debian_system_python,
    describe,
    interpreters,
    old_interpreters,
    pyenv_interpreters,
)
from .roots import TARGETS, ChrootNamespace, RootError, RootTarget, ensure_root
from .wheels import MATRIX, cache_dir, pip_dir, pip_versions_for, pip_wheel, unpacked, wheel

__all__ = [
    "DEFAULT_MARKER",
    "MATRIX",
    "MountNamespace",
    "ChrootNamespace",
    "DebianNamespace",
    "DiscoveryError",
    "HermeticBuildError",
    "HermeticPython",
    "Interpreter",
    "NamespaceError",
    "RootError",
    "RootTarget",
    "TARGETS",
    "all_interpreters",
    "available",
    "build_hermetic",
    "cache_dir",
    "clean_env",
    "debian_system_python",
    "describe",
    "ensure_root",
    "interpreters",
    "make_dist",
    "old_interpreters",
    "overlay_dirs",
    "patch_site",
    "pip_dir",
    "pip_versions_for",
    "pip_wheel",
    "pyenv_interpreters",
    "unpacked",
    "verify",
    "wheel",
]
