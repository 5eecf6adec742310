"""pytest fixtures of the harness, loaded as a plugin.

Enable them with ``pytest_plugins = ["harness.fixtures"]`` in the top-level
``tests/conftest.py`` (or in a test module).  They are kept out of
``harness/__init__.py`` so that importing the harness registers nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator, Optional, Union

import pytest

from .guarded import GuardedPython, make_guarded, open_root, running_under_ci
from .hermetic import DEFAULT_MARKER
from .inputs import pytest_collection_modifyitems  # noqa: F401  (a hook: xdist groups)
from .interpreters import Interpreter, pyenv_interpreters
from .spread import DEBIAN, spread, target_params

__all__ = ["open_root", "running_under_ci"]  # the harness's rule for a missing prerequisite


MakeHermetic = Callable[..., GuardedPython]


@pytest.fixture
def make_hermetic(tmp_path: Path) -> MakeHermetic:
    """Factory: ``make_hermetic(base, marker=DEFAULT_MARKER)`` gives a fresh hermetic
    python made from ``base`` (an ``Interpreter`` or an executable's path), guard not
    deployed, as ``make_guarded(base, deploy=False)`` does (a ``HermeticGuarded``;
    ``place``: the ``HermeticPython``), with the marker's text ``marker`` (None: no
    marker).  Each call builds into its own directory under the test's ``tmp_path``.
    """
    count = 0

    def make(base: Union[Interpreter, str], *,
             marker: Optional[str] = DEFAULT_MARKER) -> GuardedPython:
        nonlocal count
        count += 1
        return make_guarded(base, deploy=False, dest=tmp_path / ("hermetic-%d" % count),
                            marker=marker)

    return make


@pytest.fixture
def debian_ns() -> Iterator[GuardedPython]:
    """Debian 12's real python in a private mount namespace, guard not deployed, torn
    down after the test (``place``: the ``DebianNamespace``).

    Skipped where it cannot work (not root, not Debian...), but fails under CI,
    where those prerequisites are part of the contract.
    """
    target = make_guarded(DEBIAN, deploy=False)
    yield target
    target.close()


@pytest.fixture(params=target_params("roots"))
def root_ns(request) -> Iterator[GuardedPython]:
    """Each interpreter of the debootstrapped roots (Debian 13's python3, sid's python3
    and python3.15) in its own namespace over its root, guard not deployed, torn down
    after the test (``place``: the ``ChrootNamespace``)."""
    target = make_guarded(request.param, deploy=False)
    yield target
    target.close()


@pytest.fixture(params=target_params("debian"))
def debian_any(request) -> Iterator[GuardedPython]:
    """As ``debian_ns`` (the host's Debian 12 python, id ``host``), then as ``root_ns``
    for each root interpreter: Debian's pythons, guard not deployed."""
    target = make_guarded(request.param, deploy=False)
    yield target
    target.close()


@pytest.fixture(params=spread())
def guarded_target(request):
    """Each CPython 3.8+ (hermetic), Debian's python (namespace) and the roots'
    interpreters (chroot), guard deployed: a copy of what the CLI deployed for that
    interpreter once per test process (``harness.guarded.deployed_tree``; a test that
    needs the CLI's own run calls ``install()``)."""
    target = make_guarded(request.param, deploy="copy")
    yield target
    target.close()


@pytest.fixture(params=spread())
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
