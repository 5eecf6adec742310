"""The differential oracle of the startup audit: what ``check`` says of startup code
against what the code does when it runs.

``harness.payloads`` generates, from a fixed seed (``SITEWARDEN_ORACLE_SEED`` overrides
it), several hundred startup payloads by documented mutation operators, each ending in a
harmless sink (``true`` started, a string executed, a canary file written, 127.0.0.1's
closed port 1, ``system`` through ``ctypes``), and benign controls.  ``harness.oracle``
plants them in batches in a throwaway target, runs the CLI's ``check --python T --json``
(which never starts the target normally), then starts the target once (``-c pass``)
under a PEP 578 audit hook planted as its first startup file (``harness.recorder``), and
lists every disagreement: a process, an exec of data, a socket or ``ctypes`` under a
verdict below high; a file written under one below medium; code run from a file the audit
did not list (``module_files``); a startup file that ran and is not listed; a control
above its severity.  The message names each case's operators, its payload, the verdict
and the event.

Targets (``harness.spread``): the oldest hermetic CPython and 3.12 split the cases (every
other one each); Debian 12's ``/usr/bin/python3`` (in its namespace) a third of them; the
roots' Debian 13 ``python3``, sid's ``python3`` (3.14) and ``python3.15`` a third each
(``SHARED``: together every case), plus the cases only 3.15 runs (``.start`` entry
points).  Each batch of cases shares one start and one ``check``; the whole costs about
half a minute on two idle cores.

``test_real_tools_get_right_reasons``: real wheels that ship startup files
(``harness.real_tools``), each verdict between its bounds and for the right reason.

Run alone: ``.venv/bin/python -m pytest -n 2 tests/test_startup_oracle.py`` (``-m "not
roots"`` without the roots); ``SITEWARDEN_ORACLE_REPORT=DIR`` writes each target's whole
outcome as ``DIR/oracle-TARGET.json`` and ``.txt``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.guarded import make_guarded
from harness.interpreters import pyenv_interpreters
from harness.oracle import run_oracle, string_constants
from harness.payloads import (
    COUNT,
    OPERATORS,
    SEVERITIES,
    Where,
    generate,
    make_case,
    operator_docs,
    seed,
)
from harness.real_tools import QUICK
from harness.roots import RootTarget
from harness.spread import DEBIAN, EVERY, SHARED, portion, spread
from harness.wheels import unpacked, wheel

REPORT = "SITEWARDEN_ORACLE_REPORT"


def _chosen():
    """The ids of the oracle's targets: the oldest hermetic CPython, 3.12 (else the
    newest), Debian 12's python3, and every root's: Debian 13's python3, sid's python3
    (3.14) and python3.15."""
    hermetic = pyenv_interpreters()
    ids = {"trixie-python3", "sid-python3", "sid-python3.15"} | {
        p.id for p in spread(EVERY) if p.values[0] == DEBIAN}
    if hermetic:
        ids.add(hermetic[0].id)
        ids.add(next((i for i in hermetic if i.version[:2] == (3, 12)), hermetic[-1]).id)
    return ids


TARGETS = [p for p in spread(EVERY) if p.id in _chosen()]


def _share(param, cases):
    """A target's cases: on the two hermetic CPythons, every other case (the old one the
    even ones, 3.12 the odd ones and those the old one cannot run: each case runs on one,
    each operator on both); on Debian 12's python, every third; on a root's interpreter
    its ``SHARED`` third, and the cases no other target runs (3.15's ``.start`` files)."""
    if param == DEBIAN:  # Debian 12's python: a third, as each root's
        return [c for c in cases if int(c.id[1:]) % 3 == 0]
    if not isinstance(param, RootTarget):
        hermetic = [p.values[0] for p in TARGETS if not isinstance(p.values[0], RootTarget)
                    and p.values[0] != DEBIAN]
        turn, oldest = hermetic.index(param), hermetic[0]
        return [c for c in cases if int(c.id[1:]) % len(hermetic) == turn
                or (turn and not c.accepts(oldest.version))]  # what the old one cannot run
    only_here = [c for c in cases if c.min_version >= (3, 15)]
    return [c for c in portion(SHARED, param, cases) if c not in only_here] + only_here


def _write_report(outcome):
    directory = os.environ.get(REPORT)
    if not directory:
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    stem = os.path.join(directory, "oracle-%s" % outcome.target)
    Path(stem + ".json").write_text(json.dumps(outcome.as_json(), indent=1))
    Path(stem + ".txt").write_text(outcome.message())


@pytest.mark.parametrize("param", TARGETS)
def test_startup_oracle(param):
    """Every planted case does no more than check's verdict says (see the module
    docstring), and the oracle saw every payload act and every control stay quiet."""
    target = make_guarded(param, deploy=False)
    try:
        where = Where(str(target.local_dir), str(target.tmp) + "/oracle-canary",
                      tuple(target.version[:2]))
        cases = _share(param, generate(where))
        outcome = run_oracle(target, cases, label=target.id)
    finally:
        target.close()
    _write_report(outcome)
    if outcome.disagreements or outcome.problems or outcome.inert:
        pytest.fail(outcome.message(), pytrace=False)


def test_payload_generator_is_seeded_and_named_by_operators(monkeypatch):
    """The generator is deterministic, overridable by ``SITEWARDEN_ORACLE_SEED``, makes
    several hundred cases from documented operators, and each case's names are its own."""
    where = Where("/site", "/canary", (3, 12))
    first = generate(where, 1)
    assert [c.payload_text() for c in first] == [c.payload_text() for c in generate(where, 1)]
    assert [c.payload_text() for c in generate(where, 2)] != [c.payload_text() for c in first]
    monkeypatch.setenv("SITEWARDEN_ORACLE_SEED", "2")
    assert seed() == 2
    assert len(first) >= 250 and COUNT >= 300  # several hundred
    assert {c.kind for c in first} == {"payload", "control"}
    for name, doc in operator_docs().items():
        assert doc and "\n" not in doc, name  # a one-line docstring each
    used = {op for c in first for op in c.operators}
    assert used <= set(OPERATORS)
    families = {op.split(":")[0] for op in used}
    assert {"sink", "reach", "call", "str", "run", "when", "where", "enc", "pyc", "own",
            "control"} <= families
    for case in first:
        assert case.operators, case.id
        for rel in case.files:
            assert rel.startswith(("<", case.prefix)) or rel.split("/")[0].startswith(
                case.prefix), (case.id, rel)
    # A case does not depend on the cases before it.
    by_id = {c.id: c for c in first}
    for index in (7, 150, COUNT - 1):
        case = make_case(index, where, 1)
        if case.id in by_id:
            assert case.payload_text() == by_id[case.id].payload_text()
    controls = [c for c in first if c.kind == "control"]
    assert controls and all(c.expected in SEVERITIES for c in controls)


def _severity_rank(severity):
    return SEVERITIES.index(severity) if severity in SEVERITIES else -1


def test_real_tools_get_right_reasons(make_hermetic):
    """Real wheels that ship startup files (``harness.real_tools.QUICK``), installed with
    their RECORD in a hermetic target: each file's worst finding lies between the tool's
    bounds, and its reason names what the tool's code really does."""
    target = make_hermetic(pyenv_interpreters()[-1])
    for tool in QUICK:
        target.merge_into(unpacked(wheel(tool.name, tool.version)), target.local_dir)
    proc = target.cli("check", "--python", target.executable, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    files = {f["path"]: f for f in report["startup"]["files"]}
    wrong = []
    for tool in QUICK:
        for name in tool.files:
            path = str(target.local_dir / name)
            if path not in files:
                wrong.append("%s: %s is not listed" % (tool.spec, name))
                continue
            found = [f for f in report["findings"] if f.get("file") == path]
            worst = max((f["severity"] for f in found), key=_severity_rank, default="info")
            lines = files[path].get("lines") or []
            said = " ".join([*(f["kind"] + " " + f["message"] for f in found),
                             str(files[path].get("template")),
                             *(" ".join(x.get("capabilities", []) + x.get("evidence", []))
                               for x in lines)])
            if not _severity_rank(tool.lowest) <= _severity_rank(worst) <= \
                    _severity_rank(tool.highest):
                wrong.append("%s: %s is %s, expected %s to %s (%s); findings: %s" % (
                    tool.spec, name, worst, tool.lowest, tool.highest, tool.why,
                    [(f["kind"], f["severity"]) for f in found]))
            if tool.reason not in said:
                wrong.append("%s: %s: the reason does not name %r (%s): %s" % (
                    tool.spec, name, tool.reason, tool.why, said[:600]))
    assert not wrong, "\n".join(wrong)


def test_an_exec_of_a_literal_is_code_and_a_spelled_string_data():
    """The oracle's line between code and data (``harness.oracle.Judge.literal``): a
    string literal of the planted code, or of the code a literal holds, is code the audit
    reads (pytest-cov's ``.pth`` execs one); a string built at run time is data."""
    pth = b"import os, sys;exec('if 1:\\n import os\\n exec(\\'x = 1\\')\\n')\n"
    found = string_constants(pth)
    assert "if 1:\n import os\n exec('x = 1')\n" in found
    assert "x = 1" in found  # one level down
    spelled = b"import base64; exec(base64.b64decode('eCA9IDE=').decode())\n"
    assert "x = 1" not in string_constants(spelled)
