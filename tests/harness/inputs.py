"""One pytest test per input of a reliability loop, without one interpreter per input.

A reliability property tries many inputs on each interpreter.  Each input is a
test of its own, ``[<interpreter>-<input>]``, so that a failure names its
scenario, while the interpreters the loop shares stay shared, in one of two ways:

* :func:`once`: the first test of a (property, interpreter) runs the whole loop as
  one run (one guarded python, the inputs applied together), which returns each
  input's failures and records the property's count line (``harness.figures``);
  every test of the run then asserts on its own input's failures only.  A run that
  raised raises again in each of its tests (a skip skips them all).
* :class:`PerInput`: the tests apply their inputs one after another to one guarded
  python per interpreter, made by the first and kept while the next tests are on the
  same interpreter.

Either way the tests of one (property, interpreter) carry one ``xdist_group``
mark (``harness.spread.spread(..., group=...)``), and the suite runs with ``--dist loadgroup``
(pyproject's ``addopts``): pytest-xdist sends them to one worker, one after the
other, so each run happens once and each count line is written once.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pytest

from .figures import record
from .guarded import make_guarded


def key_of(python: Any) -> str:
    """A target value (``harness.spread``) as a cache key."""
    return str(getattr(python, "id", python))


#: (property, interpreter) -> ("ok", failures by input) or ("raised", exception)
_RUNS: Dict[Tuple[str, str], Tuple[str, Any]] = {}

Failures = Dict[str, List[Any]]


def once(prop: str, python: Any, run: Callable[..., Failures], *args: Any) -> Failures:
    """``run(*args)``'s failures by input for ``prop`` on ``python``: run by the first
    test that asks in this process, remembered for the others (an exception too)."""
    key = (prop, key_of(python))
    if key not in _RUNS:
        try:
            _RUNS[key] = ("ok", run(*args))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # pytest's skip and fail too: every test of the run sees it
            _RUNS[key] = ("raised", exc)
    how, value = _RUNS[key]
    if how == "raised":
        raise value
    return value


def by_input(inputs: Sequence[str]) -> Failures:
    """An empty failure list per input: what a run fills."""
    return {name: [] for name in inputs}


_WARNING = re.compile(r"^.*:\d+: (ShadowWarning|PathWarning): ")


def blame(problem: str, names: Sequence[str]) -> List[str]:
    """The inputs among ``names`` (applied together in one run) that ``problem`` names,
    sitewarden's own warning lines left aside; all of them when it names none."""
    text = "\n".join(line for line in str(problem).splitlines() if not _WARNING.match(line))
    named = [n for n in names
             if re.search(r"(?<![\w-])%s(?![\w])" % re.escape(n), text)]
    return named or list(names)


def assert_input(failures: Failures, name: str, tried: Optional[int] = None) -> None:
    """Fail with ``name``'s failures, if it has any."""
    mine = failures[name]
    assert not mine, "%d failed%s; first: %s" % (
        len(mine), "" if tried is None else " of %d" % tried, mine[:3])


class PerInput:
    """The guarded python the input tests of one property run on: one per interpreter,
    shared by its consecutive input tests (the inputs applied one after another, as in
    one loop).  With ``prop``, their counts (``tally``) add up and are recorded as one
    line per property and interpreter (``harness.figures``) when the python is replaced
    or the module ends."""

    def __init__(self, prop: Optional[str], inputs: Sequence[str],
                 prepare: Optional[Callable[[Any], None]] = None) -> None:
        self.prop, self.inputs, self.prepare = prop, inputs, prepare
        self.key = self.python = None

    def get(self, param: Any) -> Any:
        if self.python is None or self.key != param:
            self.close()
            python = make_guarded(param, deploy="copy")
            python.tally = {"tried": 0, "failures": 0, "inputs": 0}
            if self.prepare is not None:
                try:
                    self.prepare(python)
                except BaseException:
                    python.close()
                    raise
            self.python, self.key = python, param
        self.python.tally["inputs"] += 1  # one test, one input: the inputs this python got
        return self.python

    def discard(self) -> None:
        """Close the python without recording (a test left it in an unknown state); the
        next test makes a fresh one."""
        t, self.python, self.key = self.python, None, None
        if t is not None:
            t.close()

    def close(self) -> None:
        t, self.python, self.key = self.python, None, None
        if t is not None:
            try:
                if self.prop is not None:
                    record(self.prop, t.label, t.tally["tried"], t.tally["failures"],
                           inputs=t.tally["inputs"] or len(self.inputs))
            finally:
                t.close()


def per_input_python(prop: Optional[str], inputs: Sequence[str],
                     prepare: Optional[Callable[[Any], None]] = None):
    """A module-scoped fixture: ``fixture.get(param)`` gives the :class:`PerInput` python."""
    @pytest.fixture(scope="module")
    def fixture():
        pool = PerInput(prop, inputs, prepare)
        try:
            yield pool
        finally:
            pool.close()

    return fixture


def pytest_collection_modifyitems(config, items) -> None:
    """On a pytest-xdist worker under ``--dist loadgroup``, end the node id of each
    test with an ``xdist_group`` mark with ``@<group>``, which is how the scheduler
    sees the group: pytest-xdist does that itself, but its change no longer takes with
    pytest 9.2 (node ids became ``NodeId`` objects: pytest-dev/pytest-xdist#1386), and
    the tests of one run would then be spread over the workers, each running it.
    Registered by ``harness.fixtures``."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if not names or "@" in item.nodeid.rpartition("]")[2]:
            continue
        nodeid = "%s@%s" % (item.nodeid, "_".join(names))
        if hasattr(item, "_id"):  # pytest 9.2+
            item._id = type(item._id).parse(nodeid)
        else:
            item._nodeid = nodeid
