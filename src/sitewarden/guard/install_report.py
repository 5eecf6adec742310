"""What an install left shadowed: PEP 668's recommended end-of-run warning.

After a successful install into the interpreter's own directories, the pip,
setuptools and installer guards call :func:`report` with what the install wrote
(the scheme guard notes it), so only what this install changed is listed.
The analysis is ``check``'s own, run in a fresh process of the same interpreter
started without ``site`` (``startup_report.static_report``: no startup code runs, not
even what this install just added): it needs metadata readers and ``packaging``, and pip
26.3 refuses new imports once an installation has started (so what :func:`collect` needs
is imported with this module, when the installer is).  Runtime module.
"""

import os
import sys

from ..facts.records import ShadowCase, Violation  # with this module: see above
from ..facts.text import fit  # likewise


def collect(check):
    """The shadowing cases an install left (their winning copy local, the first copy it
    shadows the distribution's), as ``(cases, violations)``: records.  ``check``: the
    child's report (``startup_report.static_report``)."""
    shadowing = check.get("shadowing") or {}
    cases = [ShadowCase.from_json(c) for c in shadowing.get("modules") or []]
    cases = [c for c in cases if c.winner.cls in ("local", "user") and c.shadowed
             and c.shadowed[0].cls == "distro"]
    return cases, [Violation.from_json(v) for v in shadowing.get("violations") or []]


def _canonical(name):
    # PEP 503, without importing anything (pip 26.3 forbids new imports by now).
    out = name.lower()
    for sep in ("_", "."):
        out = out.replace(sep, "-")
    while "--" in out:
        out = out.replace("--", "-")
    return out


def format_report(cases, violations):
    if not cases:
        return ""
    lines = ["sitewarden: this interpreter's distro packages are now shadowed by local copies "
             "(PEP 668 recommends saying so):"]
    for case in cases:
        line = "  %s: %s shadows %s" % (case.module, case.winner.text(),
                                        case.shadowed[0].text())
        if case.comparison == "cannot compare":
            line += "; versions cannot be compared"
        lines.append(line)
    shadowed = {c.winner.distribution for c in cases}
    shadowed |= {c.module for c in cases}
    names = {_canonical(n) for n in shadowed if n}
    for v in violations:
        if _canonical(v.requires or "") in names:
            lines.append("  %s %s requires '%s', but %s is installed: distro programs using "
                         "it may break" % (v.consumer, v.consumer_version or "",
                                           v.requirement, v.installed))
    lines.append("hint: distro programs now import these copies; `sitewarden check` shows the "
                 "whole state, and a virtual environment avoids it.")
    return "\n".join(lines) + "\n"


def changed_by(cases, written):
    """The cases whose winning copy is an entry this install wrote: ``written`` is
    ``{(own directory, top-level entry)}`` from the scheme guard."""
    out = []
    for case in cases:
        path = os.path.realpath(case.winner.path.rstrip(os.sep))
        for own, entry in written:
            if path == os.path.join(own, entry) or path.startswith(
                    os.path.join(own, entry) + os.sep):
                out.append(case)
                break
    return out


def report(check, stream=None, written=None):
    """Print the report of what this install (``written``, see :func:`changed_by`;
    None: everything) left shadowed; nothing when nothing is.  ``check(kind)``: the
    child's report (``startup_report.static_report``, shared with the startup report).
    A failure propagates: the caller (``policy.Decision.report``) says it in one line."""
    stream = sys.stderr if stream is None else stream
    if written is not None and not written:
        return
    cases, violations = collect(check("shadows"))
    if written is not None:
        cases = changed_by(cases, written)
    text = format_report(cases, violations)
    if text:
        stream.write(fit(text.rstrip("\n")) + "\n")  # no line wider than a screen
        stream.flush()
