"""The ``slow`` marker and ``--fast``: a computed subset of the suite for use while working.

* ``slow``: every test of :data:`SLOW_MODULES` (the per-interpreter matrices and loops,
  where the suite's time is), marked here in one place; ``-m "not slow"`` leaves them out.
* ``--fast`` (``make test-fast``): each test function runs once, for one of its
  parametrizations, chosen so that the interpreters (and the Debian releases of the
  package tests) take turns: the functions are taken in collection order and each keeps
  the parametrization whose target has been chosen least so far (the first such one on
  a tie).  Every function and every target interpreter is therefore covered, and the
  selection is the same on every run and every xdist worker.  A parametrization naming
  no target (a module name, a value) counts as its own target, so those rotate too.
  The selection is made from what ``-k``/``-m`` left: ``--fast -k cpython3.12`` runs
  every function that has a parametrization on that interpreter, once.

Registered by ``tests/conftest.py`` (``pytest_plugins``).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import pytest

from .spread import target_params

#: Test modules all of whose tests are ``slow``: the per-interpreter pip matrices, the
#: reliability and deployment-fault loops, the Debian package's tests in the roots.
SLOW_MODULES = frozenset({
    "test_blocking_pip",
    "test_blocking_debian",
    "test_blocking_field",
    "test_reliability",
    "test_deb",
    "test_field_apt_hook",
    "test_deploy_faults",
})

#: Test ids of a target that are another name of a guarded target's id: Debian 12's
#: namespace in the target set ``"debian"`` (``debian_any``, ``spread(targets="debian")``).
ALIASES = {"host": "debian"}


def pytest_addoption(parser) -> None:
    parser.getgroup("sitewarden").addoption(
        "--fast", action="store_true", default=False,
        help="run each test function once, for one parametrization, the target "
             "interpreters in rotation (harness/fast.py; make test-fast)")


def target_ids() -> List[str]:
    """The ids of every target interpreter (``harness.spread.target_params()``)."""
    return [param.id for param in target_params()]


def target_of(param_id: str, targets: List[str]) -> Optional[str]:
    """The target interpreter a parametrization id names (a ``-``-separated part of it,
    the longest match: ``sid-python3.15`` rather than ``sid-python3``), or ``None``."""
    parts = "-%s-" % param_id
    found = [t for t in targets if "-%s-" % t in parts]
    for alias, kind in ALIASES.items():
        if "-%s-" % alias in parts:
            found += [t for t in targets if t.startswith(kind)]
    return max(found, key=len) if found else None


def function_of(item) -> Tuple[str, str, str]:
    """What identifies ``item``'s test function, parametrizations aside."""
    cls = getattr(item, "cls", None)
    return (str(item.path), cls.__qualname__ if cls else "",
            getattr(item, "originalname", None) or item.name)


def fast_selection(items: list, targets: List[str]) -> list:
    """One item per test function, the targets in rotation (see the module docstring)."""
    by_function: Dict[Tuple[str, str, str], list] = {}
    for item in items:
        by_function.setdefault(function_of(item), []).append(item)
    chosen_count: Dict[str, int] = {}
    keep = set()
    for candidates in by_function.values():
        best, best_count = None, None
        for item in candidates:
            callspec = getattr(item, "callspec", None)
            if callspec is None:
                best = item
                break
            key = target_of(callspec.id, targets) or callspec.id
            count = chosen_count.get(key, 0)
            if best_count is None or count < best_count:
                best, best_count, best_key = item, count, key
        if best_count is not None:
            chosen_count[best_key] = best_count + 1
        keep.add(id(best))
    return [item for item in items if id(item) in keep]


def pytest_itemcollected(item) -> None:
    """Mark the tests of :data:`SLOW_MODULES` ``slow`` (before ``-m`` is applied)."""
    module = getattr(item, "module", None)
    if module is not None and module.__name__.rpartition(".")[2] in SLOW_MODULES:
        item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """With ``--fast``, deselect all but :func:`fast_selection` of what ``-k``/``-m``
    left (so ``--fast -k cpython3.12`` runs each function once on that interpreter)."""
    if not config.getoption("fast", False):
        return
    kept = fast_selection(items, target_ids())
    if len(kept) < len(items):
        keep = set(map(id, kept))
        config.hook.pytest_deselected(items=[i for i in items if id(i) not in keep])
        items[:] = kept


__all__ = ["SLOW_MODULES", "fast_selection", "target_ids", "target_of"]
