"""One way to spread a test over the interpreters under test: :func:`spread`, four modes.

The targets, in this order (a target's place is its *turn*, :func:`turn`): the hermetic
copies of pyenv's CPythons 3.8-3.13 (oldest first), Debian 12's ``/usr/bin/python3`` in a
mount namespace, then the roots' interpreters (Debian 13's, sid's 3.14 and 3.15).  A
*target set* names a part of them: ``"all"`` (the default), ``"hermetic"``, ``"local"``
(no roots), ``"debian"`` (Debian 12's, id ``host``, and the roots'), ``"roots"``.

The modes, for a test over ``inputs`` (pip releases, damaged files, corruptions...):

* :data:`EVERY`, "every target": each input on each target (no inputs: each target).
* :data:`ONE_PER`, "one per release": each input once, on the newest target that
  ``accepts`` it (the pips, each on the newest Python it installs with).
* :data:`ROTATED`, "rotated": each input on every ``ways``-th target, in rotation (input
  ``i`` on the targets whose turn ``t`` has ``(i + t) % ways == 0``): each target runs a
  ``1/ways`` share of the inputs, every input runs on ``n/ways`` targets, and an input
  that would get none (a target's own input list) goes to the target that accepts it
  with the fewest so far.
* :data:`SHARED`, "shared": each input on the hermetic and Debian 12 targets; the
  roots' three interpreters split the inputs (each every third), so each release's
  interpreters together still run every input.

At collection, ``spread(mode, inputs, targets=, group=)`` gives the pytest params
(``(target, input)`` pairs, or targets alone), each of one (test, target) in the xdist
group ``<group>-<target id>`` when ``group`` is given (``harness.inputs``: the inputs of
one target then run on one worker, in one python).  Inside a test, ``portion(mode,
target, items)`` gives a target's share of a loop's items by the same rule,
``scaled(target, n)`` a repetition count (a third on the roots), and
``inputs_of(params, target)`` the inputs a ``spread`` gave a target, for a run that
applies them all at once.  The fixtures'
``target`` values (an ``Interpreter``, ``"debian"``, a ``RootTarget``) and the
``GuardedPython`` made from them are both accepted as ``target``.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import pytest

from .interpreters import debian_system_python, pyenv_interpreters
from .roots import TARGETS as ROOT_TARGETS
from .roots import RootTarget

EVERY = "every target"
ONE_PER = "one per release"
ROTATED = "rotated"
SHARED = "shared"
MODES = (EVERY, ONE_PER, ROTATED, SHARED)

#: The value of the Debian 12 target (``make_guarded("debian")``).
DEBIAN = "debian"

Inputs = Union[Sequence[Any], Callable[[Any], Sequence[Any]]]


def slug(name: Any) -> str:
    """``name`` as a test id part: runs of other characters than letters, digits, dots
    and underscores become one ``-``."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", str(name)).strip("-")


def target_params(targets: str = "all") -> List[Any]:
    """The target set ``targets`` as pytest params (value: what ``make_guarded`` takes)."""
    if targets not in ("all", "hermetic", "local", "debian", "roots"):
        raise ValueError("unknown target set %r" % targets)
    params: List[Any] = []
    if targets in ("all", "hermetic", "local"):
        params += [pytest.param(i, id=i.id) for i in pyenv_interpreters()]
    if targets in ("all", "local"):
        deb = debian_system_python()
        params.append(pytest.param(DEBIAN, id=deb.id if deb else DEBIAN,
                                   marks=pytest.mark.debian))
    if targets == "debian":
        params.append(pytest.param(DEBIAN, id="host", marks=pytest.mark.debian))
    if targets in ("all", "debian", "roots"):
        params += [pytest.param(t, id=t.id, marks=[pytest.mark.debian, pytest.mark.roots])
                   for t in ROOT_TARGETS]
    return params


def _value(target: Any) -> Any:
    """A fixture value or a ``GuardedPython`` as the value its fixture was made from."""
    return getattr(target, "param", target)


def turn(target: Any) -> int:
    """``target``'s place among all targets (0 for one that is not among them)."""
    value = _value(target)
    for index, param in enumerate(target_params()):
        if param.values[0] == value:
            return index
    return 0


def portion(mode: str, target: Any, items: Sequence[Any], ways: int = 3) -> List[Any]:
    """``target``'s share of ``items`` under ``mode`` (see the module docstring); for
    :data:`ROTATED`, without the repair of inputs left without a target (use
    :func:`spread` for that)."""
    items = list(items)
    if mode == EVERY:
        return items
    if mode == SHARED:
        value = _value(target)
        if isinstance(value, RootTarget):
            return items[ROOT_TARGETS.index(value)::len(ROOT_TARGETS)]
        return items
    if mode == ROTATED:
        t = turn(target)
        return [item for i, item in enumerate(items) if (i + t) % ways == 0]
    raise ValueError("portion() of mode %r" % mode)


def scaled(target: Any, n: int) -> int:
    """A repetition count for ``target``: ``n``, a third on the roots (:data:`SHARED`)."""
    if isinstance(_value(target), RootTarget):
        return max(1, -(-n // len(ROOT_TARGETS)))
    return n


def spread(mode: str = EVERY, inputs: Optional[Inputs] = None, *, targets: str = "all",
           group: Optional[str] = None, ways: int = 3,
           accepts: Optional[Callable[[Any, Any], bool]] = None,
           input_id: Callable[[Any], str] = slug, offset: int = 0) -> List[Any]:
    """pytest params of a test spread over ``targets`` by ``mode``.

    ``inputs``: a list, or ``inputs(target value)`` for each target's own list; without
    it the params are the targets alone: all of them, or with :data:`ROTATED` those
    whose turn ``t`` has ``(offset + t) % ways == 0`` (the test is the input numbered
    ``offset``; :func:`rotated` numbers a module's scenarios).  ``accepts(target
    value, input)``: which targets an input may run on (:data:`ONE_PER`,
    :data:`ROTATED`).  ``group``: the
    xdist group prefix; ``input_id``: an input as its part of the test id."""
    if mode not in MODES:
        raise ValueError("unknown mode %r" % mode)
    params = target_params(targets)

    def marks(param: Any) -> list:
        if group is None:
            return list(param.marks)
        return [*param.marks, pytest.mark.xdist_group("%s-%s" % (group, param.id))]

    if inputs is None:
        if mode == ROTATED:
            params = [p for p in params if (offset + turn(p.values[0])) % ways == 0]
        return [pytest.param(*p.values, id=p.id, marks=marks(p)) for p in params]

    def own(param: Any) -> List[Any]:
        value = param.values[0]
        listed = inputs(value) if callable(inputs) else inputs
        return [i for i in listed if accepts is None or accepts(value, i)]

    chosen: Dict[str, List[Any]] = {}
    if mode == ONE_PER:
        for param in reversed(params):
            for item in own(param):
                if not any(item in got for got in chosen.values()):
                    chosen.setdefault(param.id, []).append(item)
    else:
        for param in params:
            share = portion(mode, param.values[0], own(param), ways)
            chosen[param.id] = share
        if mode == ROTATED:
            for param in params:  # an input no target got goes to the least loaded one
                for item in own(param):
                    if any(item in got for got in chosen.values()):
                        continue
                    takers = [p for p in params if item in own(p)]
                    best = min(takers, key=lambda p: len(chosen[p.id]))
                    chosen[best.id].append(item)
    out = []
    for param in params:
        mine = chosen.get(param.id, [])
        listed = own(param)
        for item in sorted(mine, key=listed.index):
            out.append(pytest.param(param.values[0], item,
                                    id="%s-%s" % (param.id, input_id(item)), marks=marks(param)))
    return out


#: How many scenarios each module has numbered so far (:func:`rotated`).
_ROTATED_SO_FAR: Dict[str, int] = {}


def rotated(fixture: str = "guarded_target") -> Any:
    """A decorator: the scenario runs on a third of the targets through ``fixture``
    (``guarded_target`` or ``bare_target``), ``spread(ROTATED, offset=k)`` for its
    module's k-th rotated scenario, so that a module's rotated scenarios together run on
    every target, and each one on hermetic CPythons and a Debian python
    (docs/development.md lists them)."""
    module = sys._getframe(1).f_globals["__name__"]
    offset = _ROTATED_SO_FAR.get(module, 0)
    _ROTATED_SO_FAR[module] = offset + 1
    return pytest.mark.parametrize(fixture, spread(ROTATED, offset=offset), indirect=True)


def inputs_of(params: Sequence[Any], target: Any) -> List[Any]:
    """The inputs that ``params`` (made by :func:`spread`) give ``target``: what a test
    that runs all of a target's inputs in one run (``harness.inputs.once``) loops over."""
    value = _value(target)
    return [p.values[1] for p in params if p.values[0] == value]


__all__ = ["DEBIAN", "EVERY", "MODES", "ONE_PER", "ROTATED", "SHARED", "inputs_of", "portion",
           "rotated", "scaled", "slug", "spread", "target_params", "turn"]
