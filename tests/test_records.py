"""Typed records and string keys (the "one way to do each thing" issue).

Detection, the probe and the CLI pass records (``sitewarden.facts.records.Record``):
attributes in the code, JSON only at the process boundary, through one pair of
methods per record, ``as_json()`` and ``from_json(data)``.  Held here: (1) few
string-constant subscripts and ``.get("key")`` calls are left in the source, (2) every
record class comes back equal from its JSON form, (3) there is one name for "to JSON".
"""

from __future__ import annotations

import ast
import collections
import importlib
from pathlib import Path

import pytest

import sitewarden
from sitewarden.facts import records

SRC = Path(sitewarden.__file__).resolve().parent

#: The most string-constant subscripts (``x["k"]``) and ``.get("k")`` calls the source
#: may hold outside ``_vendor`` (526 before the records; /work/tools/strkeys.py's count).
#: 285 with ``sitewarden acknowledge`` (a finding's ``details``) and the probe's start in
#: ``runner``; 250 again once the guard's per-process state became records (``scheme_guard``'s
#: write watch, ``pip_guard``'s command) and the probe kinds one table.
MAX_STRING_KEYS = 250


def _is_string_key(n: ast.AST) -> bool:
    """``x["k"]`` or ``x.get("k", ...)``, as /work/tools/strkeys.py counts them."""
    if isinstance(n, ast.Subscript):
        return isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)
    return (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "get" and bool(n.args)
            and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str))


def _string_keys() -> collections.Counter:
    per: collections.Counter = collections.Counter()
    for path in SRC.rglob("*.py"):
        if "_vendor" in path.parts:
            continue
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _is_string_key(n):
                per[str(path.relative_to(SRC))] += 1
    return per


def test_few_string_keys_are_left():
    per = _string_keys()
    assert sum(per.values()) <= MAX_STRING_KEYS, per.most_common(12)


#: Every module that defines records (imported so that ``Record``'s subclasses are known).
RECORD_MODULES = ("sitewarden.facts.records", "sitewarden.detect.layout",
                  "sitewarden.facts.startup_records",
                  "sitewarden.cli.state", "sitewarden.cli.quarantine_files")


def _record_classes() -> list[type]:
    for name in RECORD_MODULES:
        importlib.import_module(name)
    out, todo = [], list(records.Record.__subclasses__())
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(out), key=lambda c: (c.__module__, c.__name__))


def _sample(kind, key, depth=0):
    """A value for the field ``key``: a record of ``kind`` when it has one."""
    if kind is not None:
        return [_sample_json(kind, depth + 1)]
    return "%s-value" % key


def _sample_json(cls, depth=0) -> dict:
    """A JSON form of ``cls`` with every field set (nested records too)."""
    data = {key: _sample(kind, key, depth) for key, _attr, kind in cls.FIELDS}
    if cls is records.Finding:
        data["module"] = "six"  # a detail
    if cls is records.CheckReport:
        data["startup"] = {"files": []}  # a section added by a collector it does not know
    if cls.__name__ == "Writers":
        data["mode"] = "0755"  # octal text in the JSON form, an int in the record
    for key in ("winner", "visible", "interpreter", "marker", "layout", "shadowing", "path",
                "owner", "writers"):
        if key in data and isinstance(data[key], list):
            data[key] = data[key][0]  # one record, not a list
    return data


def test_records_found():
    names = {c.__name__ for c in _record_classes()}
    assert {"PathEntry", "Copy", "ShadowCase", "HiddenNamespace", "Finding", "Requirement",
            "Violation", "MarkerState", "CheckReport", "LayoutFacts", "Status",
            "GuardState", "DeploymentState", "Orphan", "StartupSection", "StartupFile",
            "StartupLine", "Owner", "PathDirectory", "Writers"} <= names, names


#: Keys a JSON form computes from its other keys (an owner's ``checked`` words, a
#: finding's ``id`` in the CLI's report): written, never read back.
DERIVED = ("checked", "id")


def _without_derived(value):
    if isinstance(value, dict):
        return {k: _without_derived(v) for k, v in value.items() if k not in DERIVED}
    if isinstance(value, list):
        return [_without_derived(v) for v in value]
    return value


@pytest.mark.parametrize("cls", _record_classes(), ids=lambda c: c.__name__)
def test_record_round_trips(cls):
    data = _without_derived(_sample_json(cls))
    record = cls.from_json(data)
    assert _without_derived(record.as_json()) == data
    assert _without_derived(cls.from_json(record.as_json()).as_json()) == data


def test_copy_optional_keys_and_text():
    copy = records.Copy.from_json({"index": 3, "entry": "/x", "class": "local",
                                   "path": "/x/six.py", "file": "/x/six.py",
                                   "distribution": "six", "version": None})
    assert "pth" not in copy.as_json() and "editable" not in copy.as_json()
    assert copy.text() == "/x/six.py (six (no version))"
    copy.distribution = None
    assert copy.text() == "/x/six.py (no distribution metadata)"


def test_check_report_of_this_interpreter_round_trips():
    """A real report, made in this process: its JSON form read back and written again
    is the same, key for key (what the CLI does with the probe's)."""
    from sitewarden.probe import check

    data = check.collect().as_json()
    assert "host" not in data and all("id" not in f for f in data["findings"])  # the CLI's
    once = records.CheckReport.from_json(data).as_json()
    assert records.CheckReport.from_json(once).as_json() == once
    assert once["host"] and once["time"] and all(f["id"] for f in once["findings"])
    once = {k: v for k, v in once.items() if k not in ("host", "time")}
    assert _without_derived(once) == _without_derived(data)


#: Names a function must not have when it returns a JSON form: ``as_json`` is the one.
OTHER_SERIALISERS = ("as_dict", "to_dict", "to_json", "state", "facts", "asdict", "json",
                     "dict", "serialize", "serialise", "dump")


def _returns_json_form(fn: ast.FunctionDef) -> bool:
    """Does ``fn`` build and return a dict literal (or a ``dict(...)``)?"""
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None and (
                isinstance(node.value, ast.Dict) or (
                    isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "id", None) == "dict")):
            return True
    return False


def test_one_name_for_the_json_form():
    """No method or function named like a serialiser but ``as_json`` (``as_dict``,
    ``state``, ``facts``...) returns a dict literal: functions that collect facts
    return records, or a record's ``as_json()``."""
    found = []
    for path in SRC.rglob("*.py"):
        if "_vendor" in path.parts:
            continue
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, ast.FunctionDef) and fn.name in OTHER_SERIALISERS and \
                    _returns_json_form(fn):
                found.append("%s:%d %s" % (path.relative_to(SRC), fn.lineno, fn.name))
    assert not found, found
