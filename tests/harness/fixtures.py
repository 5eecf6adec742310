"""pytest fixtures of the harness, loaded as a plugin.

Enable them with ``pytest_plugins = ["harness.fixtures"]`` in the top-level
``tests/conftest.py`` (or in a test module).  They are kept out of
``harness/__init__.py`` so that importing the harness registers nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator, Optional, Union

import pytest

from . import roots
from .debian_ns import DebianNamespace, MountNamespace, available
from .hermetic import DEFAULT_MARKER, HermeticPython, build_hermetic
from .interpreters import Interpreter


def running_under_ci() -> bool:
    """CI=true (or any value but empty/0/false/no): missing prerequisites are failures."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


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
