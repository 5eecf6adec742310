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

from .debian_ns import DebianNamespace, available
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
