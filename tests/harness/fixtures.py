"""pytest fixtures of the harness, loaded as a plugin.

Enable them with ``pytest_plugins = ["harness.fixtures"]`` in the top-level
``tests/conftest.py`` (or in a test module).  They are kept out of
``harness/__init__.py`` so that importing the harness registers nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator, Optional, Union

import pytest

from . import roots
from .debian_ns import DebianNamespace, MountNamespace, available
from .guarded import guarded_params, make_guarded, open_root, running_under_ci
from .hermetic import DEFAULT_MARKER, HermeticPython, build_hermetic
from .inputs import pytest_collection_modifyitems  # noqa: F401  (a hook: xdist groups)
from .interpreters import Interpreter, pyenv_interpreters

__all__ = ["open_root", "running_under_ci"]  # the harness's rule for a missing prerequisite


MakeHermetic = Callable[..., HermeticPython]


@pytest.fixture
def make_hermetic(tmp_path: Path) -> MakeHermetic:
    """Factory: ``make_hermetic(base, marker=DEFAULT_MARKER)`` builds a fresh hermetic python.

    Each call builds into its own directory under the test's ``tmp_path``.
    """
    count = 0

    def make(base: Union[Interpreter, str], *, marker: Optional[str] = DEFAULT_MARKER,
             check: bool = True) -> HermeticPython:
        nonlocal count
        count += 1
        return build_hermetic(base, tmp_path / ("hermetic-%d" % count), marker=marker, check=check)

    return make


@pytest.fixture
def debian_ns() -> Iterator[DebianNamespace]:
    """Debian's real python in a private mount namespace, torn down after the test.

    Skipped where it cannot work (not root, not Debian...), but fails under CI,
    where those prerequisites are part of the contract.
    """
    ok, reason = available()
    if not ok:
        if running_under_ci():
            pytest.fail("debian_ns is required under CI but unavailable: %s" % reason)
        pytest.skip("debian_ns unavailable: %s" % reason)
    ns = DebianNamespace()
    try:
        yield ns
    finally:
        ns.close()


@pytest.fixture(params=roots.root_params())
def root_ns(request) -> Iterator[roots.ChrootNamespace]:
    """Each interpreter of the debootstrapped roots (Debian 13's python3, sid's python3
    and python3.15) in its own namespace over its root, torn down after the test."""
    ns = open_root(request.param)
    try:
        yield ns
    finally:
        ns.close()


#: The host's Debian python (``DebianNamespace``) and the roots' interpreters.
DEBIAN_ANY = [pytest.param(None, id="host", marks=pytest.mark.debian), *roots.root_params()]


@pytest.fixture(params=DEBIAN_ANY)
def debian_any(request) -> Iterator[MountNamespace]:
    """As ``debian_ns`` (the host's Debian 12 python), then once per root interpreter:
    same interface (``run``, ``cli``, ``executable``, ``local_dir``, ``tree_digest``...)."""
    if request.param is None:
        ns: MountNamespace = request.getfixturevalue("debian_ns")
        yield ns
        return
    ns = open_root(request.param)
    try:
        yield ns
    finally:
        ns.close()


@pytest.fixture(params=guarded_params())
def guarded_target(request):
    """Each CPython 3.8+ (hermetic), Debian's python (namespace) and the roots'
    interpreters (chroot), guard deployed by the CLI (``harness.guarded``)."""
    target = make_guarded(request.param)
    yield target
    target.close()


@pytest.fixture(params=guarded_params())
def bare_target(request):
    """As ``guarded_target``, without the guard deployed."""
    target = make_guarded(request.param, deploy=False)
    yield target
    target.close()


@pytest.fixture
def guarded(tmp_path):
    """Factory: ``guarded(interp=None)`` gives a fresh hermetic python (default: the
    newest CPython) in the test's ``tmp_path``, with a copy of the guard the CLI
    deployed once per interpreter (``harness.guarded``, ``deploy="copy"``)."""
    count = [0]

    def make(interp=None):
        count[0] += 1
        return make_guarded(interp or pyenv_interpreters()[-1], deploy="copy",
                            dest=tmp_path / ("py%d" % count[0]))

    return make
