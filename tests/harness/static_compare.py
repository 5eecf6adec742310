"""``check``'s static report against the live one: the same, but where running code differs.

``check``'s probe starts its target without ``site`` and emulates the start
(``probe.static_check``); the probe kinds ``check`` and ``full`` still run after a normal
start, as the reference.  :func:`differences` lists what differs between the two reports of
one target and fixture, leaving out only what the static report says it cannot know:

- what a line that changes the import system when it runs did (its note ends "not
  applied by check"); one that changes ``sys.path``: then the layout, the path findings
  and the shadowing scan may differ, and only the startup files are compared;
- that a module found but not loaded raised while importing (the live probe saw it not
  loaded; statically it is never loaded), or lacks an attribute: such a line's error, the
  finding it gives and, before 3.15, the lines after it that ``site`` abandons;
- the probe's own ``-S`` (``interpreter.flags.no_site``: the static report describes a
  start with ``site``);
- the bytecode files among ``module_files``: the live start wrote them as it imported.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List

NOT_APPLIED = "not applied by check"
#: Errors only a normal start can show (``line_checks._module_error``, ``_attr_error``,
#: ``customize_error``).
RUN_ONLY_ERRORS = ("importing it raised an exception", "AttributeError: module",
                   "it raised while importing")


def _run_only(error: Any) -> bool:
    return isinstance(error, str) and any(e in error for e in RUN_ONLY_ERRORS)


def _strip_note(note: Any) -> Any:
    if not isinstance(note, str) or NOT_APPLIED not in note:
        return note
    kept = [part for part in note.split("; ") if NOT_APPLIED not in part]
    return "; ".join(kept) or None


def _normalise(report: Dict[str, Any], live: Dict[str, Any]) -> Dict[str, Any]:
    """``report`` without what only running code tells (see the module's docstring),
    judged by the ``live`` report's errors."""
    r = copy.deepcopy(report)
    r.get("interpreter", {}).get("flags", {}).pop("no_site", None)
    run_only_files = set()
    for f in live.get("startup", {}).get("files", []):
        if _run_only(f.get("error")) or any(_run_only(x.get("error")) for x in f["lines"]):
            run_only_files.add(f["path"])
    files = r.get("startup", {}).get("files", [])
    for f in files:
        if f["path"] in run_only_files:
            f["lines"] = [dict(x, error=None, runs=None, note=None) for x in f["lines"]]
            f["error"] = None
        for x in f["lines"] + [f]:
            if "note" in x or x is not f:
                x["note"] = _strip_note(x.get("note"))
            if x.get("module_files"):  # the bytecode a normal start writes as it imports
                x["module_files"] = [m for m in x["module_files"] if "/__pycache__/" not in m]
    r["findings"] = [x for x in r.get("findings", []) if x.get("file") not in run_only_files]
    return r


def differences(live: Dict[str, Any], static: Dict[str, Any]) -> List[str]:
    """What differs between the live and the static report, but what only running code
    tells: ``["path: live value != static value"]``."""
    changed = any("changes sys.path when" in (x.get("note") or "")
                  for f in static.get("startup", {}).get("files", []) for x in f["lines"])
    a, b = _normalise(live, live), _normalise(static, live)
    if changed:  # the path may differ: the startup files alone
        a = {"startup_files": a.get("startup", {}).get("files")}
        b = {"startup_files": b.get("startup", {}).get("files")}
    out: List[str] = []
    _walk(a, b, "", out)
    return out


def _walk(x: Any, y: Any, where: str, out: List[str]) -> None:
    if len(out) > 20:
        return
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            _walk(x.get(k), y.get(k), "%s/%s" % (where, k), out)
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            _walk(u, v, "%s[%d]" % (where, i), out)
    elif x != y:
        out.append("%s: %s != %s" % (where, repr(x)[:300], repr(y)[:300]))
