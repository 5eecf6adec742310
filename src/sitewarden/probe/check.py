"""``sitewarden check``: collect an interpreter's whole state, inside it.

Runs in the target interpreter (through the probe), started without ``site``, in the
state a normal start would give it, emulated (:mod:`.static_check`): nothing a start
runs has run.  Returns a
:class:`~.records.CheckReport`; the probe prints its JSON form, which the CLI reads
back, completes with the deployment facts and renders.  The schema is documented
in docs/check-schema.md and versioned by ``SCHEMA``.
"""

import sys

from .. import __version__, pathfacts
from ..audit import inventory, line_checks
from ..detect import layout, pathcheck, shadowscan
from ..facts.records import CheckReport, Finding, Interpreter, MarkerState

SCHEMA = 2

#: One collector per section: each returns ``(section name, its record, [Finding])``.
COLLECTORS = (layout.collect, shadowscan.collect, pathcheck.collect, inventory.collect)


def interpreter_facts():
    return Interpreter.make(
        executable=sys.executable,
        version="%d.%d.%d" % sys.version_info[:3],
        implementation=sys.implementation.name,
        prefix=sys.prefix,
        base_prefix=getattr(sys, "base_prefix", sys.prefix),
        cwd=pathfacts.cwd(),  # None when deleted
        flags={
            "isolated": bool(sys.flags.isolated),
            "ignore_environment": bool(sys.flags.ignore_environment),
            "no_user_site": bool(sys.flags.no_user_site),
            # -S of the static probe is its own: it describes a start with site
            "no_site": bool(sys.flags.no_site) and line_checks.STATIC is None,
            "safe_path": bool(getattr(sys.flags, "safe_path", False)),
        },
        sys_path=list(sys.path),
    )


def marker_findings(state):
    if state.virtualenv:
        return [Finding("virtualenv", "info",
                        "this is a virtual environment: PEP 668's marker does not apply")]
    if state.removed_from:
        return [_removed(state)]
    if not state.marker_exists:
        return [Finding("not-externally-managed", "info",
                        "no EXTERNALLY-MANAGED marker at %s: installers may write to this "
                        "interpreter's site directories" % state.marker_path)]
    out = [Finding("externally-managed", "info",
                   "externally managed (marker %s): installs outside a virtual environment "
                   "are refused" % state.marker_path)]
    if state.problem:
        out.append(Finding("marker-unreadable", "low",
                           "the marker %s cannot be used as written (%s); installs are still "
                           "refused, with sitewarden's default message"
                           % (state.marker_path, state.problem)))
    return out


def _removed(state):
    """``marker-removed``, medium: the marker a Debian package ships is gone and was not
    diverted (``dpkg-divert``, the documented opt-out).  Medium whoever runs the
    interpreter: what is lost is PEP 668's refusal, a guard against accidents, not a
    security boundary; it names the package and the command that puts the file back."""
    package = state.removed_from
    command = "apt-get install --reinstall -y %s" % package
    return Finding(
        "marker-removed", "medium",
        "the PEP 668 marker %s is gone, though the Debian package %s ships it: it was "
        "removed, not diverted (dpkg-divert is the opt-out), so installers may write to this "
        "interpreter's site directories; restore it: %s" % (state.marker_path, package,
                                                           command),
        marker=state.marker_path, package=package, command=command)


def collect(sections=None):
    """The report, as produced inside the target interpreter (``sections``: the names of
    the sections to collect, None: all)."""
    pathfacts.remember_real()  # one report: each directory resolved once
    line_checks.remember_specs()  # ...and each module name searched once
    try:
        return _report(sections)
    finally:
        line_checks.forget_specs()
        pathfacts.forget_real()


#: Each collector's section.
SECTIONS = ("layout", "shadowing", "path", "startup")


def _report(sections=None):
    state = MarkerState.read()
    if not state.marker_exists:
        from ..facts import owners  # reason: only where the marker is gone: did dpkg ship it?

        state.removed_from = owners.marker_removed_from(state)
    report = CheckReport(SCHEMA, __version__, interpreter_facts(), state)
    report.findings = marker_findings(state)
    for section, collector in zip(SECTIONS, COLLECTORS):
        if sections is not None and section not in sections:
            continue
        name, data, more = collector()
        report.put(name, data)
        report.findings.extend(more)
    return report
