"""Human output: grouped, readable in a terminal, colour only on a terminal.

Every string of a report is escaped once, at render time (``render_startup.escaped``):
a path, a name, a startup line or a message that quotes them cannot forge a line."""

from __future__ import annotations

import os

from ..facts.records import SHOWN
from ..facts.text import fit, wrap
from ..pathfacts import package_dir
from . import verdict
from .judgement import incomplete_effect
from .render_startup import escaped, printable, render_startup
from .state import TargetFailure

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..facts.records import (
        CheckReport,
        Copy,
        Finding,
        HiddenNamespace,
        Layout,
        MarkerState,
        ShadowCase,
        Shadowing,
    )
    from .state import DeploymentState, GuardState, Orphan, Status

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}


class Style:
    """ANSI colour when writing to a terminal and ``NO_COLOR`` is unset."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        tty = hasattr(stream, "isatty") and stream.isatty()
        return cls(tty and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb")

    def _wrap(self, code: str, text: str) -> str:
        return "\033[%sm%s\033[0m" % (code, text) if self.colour else text

    def good(self, text: str) -> str:
        return self._wrap("32", text)

    def warn(self, text: str) -> str:
        return self._wrap("33", text)

    def bad(self, text: str) -> str:
        return self._wrap("1;31", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def severity(self, sev: str) -> str:
        label = "%-6s" % sev
        return {"high": self.bad, "medium": self.warn, "low": self.warn}.get(sev, self.dim)(label)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 finding``, ``2 findings`` (``words``: an irregular plural)."""
    return "%d %s" % (n, word if n == 1 else words or word + "s")


def heading(title: str, n: int, style: Style) -> str:
    """A counted section heading, ``Title (N)``: N entries follow, each a line indented
    by two spaces (its details deeper), or one ``none`` line when N is 0."""
    return style.bold("%s (%d)" % (title, n))


#: How the imported copy's version compares with the shadowed one's (``comparison``).
COMPARISON_TEXT = {"newer": "imported copy is newer", "older": "imported copy is older",
                   "cannot compare": "versions cannot be compared"}


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def render_marker(marker: MarkerState, style: Style) -> list[str]:
    """``status``'s marker: where, whether it applies, its message (said there only:
    ``check`` names the marker and its state)."""
    lines = []
    if marker.virtualenv:
        lines.append("  virtual environment: PEP 668 does not apply")
    if marker.removed_from:
        lines.append("  marker: %s: the marker was removed: %s is gone, though the Debian "
                     "package %s ships it; restore it: apt-get install --reinstall -y %s" % (
                         style.bad("NOT guarded"), marker.marker_path, marker.removed_from,
                         marker.removed_from))
    elif marker.marker_exists:
        state = style.bold("applies") if marker.applies else "present, not applied"
        lines.append("  marker: %s (%s)" % (marker.marker_path, state))
        if marker.problem:
            lines.append("  %s %s" % (style.warn("unreadable:"), marker.problem))
        if marker.message:
            lines.append("  message%s:" % (" [%s]" % marker.message_key
                                          if marker.message_key else ""))
            lines.append(_indent(marker.message))
    elif marker.diverted_to:
        lines.append("  marker: diverted (the image opted out of PEP 668 with dpkg-divert; "
                     "the distribution's marker is kept at %s): installers are not refused "
                     "here; a guard still keeps them out of the distribution's directories "
                     "and warns of shadowed modules" % marker.diverted_to)
    else:
        lines.append("  marker: none (expected at %s)" % marker.marker_path)
    return lines


def _loaded_from(dep: DeploymentState, data: GuardState) -> bool | None:
    """Is the guard that a start loads this deployment's copy?  None: nothing loaded."""
    module = data.active_module
    if not data.active or not module:
        return None
    return os.path.realpath(module).startswith(
        os.path.realpath(package_dir(dep.site_dir)) + os.sep)


def deployment_line(dep: DeploymentState, data: GuardState, style: Style) -> str:
    kind = "Debian package sitewarden" if dep.installer == "dpkg" \
        else dep.hook or "hook only"
    loaded = _loaded_from(dep, data) if len(data.deployments) > 1 else None
    return "  deployed: %s (sitewarden %s, %s)%s%s" % (
        dep.site_dir, dep.version or "?", kind,
        "" if dep.complete else style.warn(" incomplete"),
        "" if loaded is None else style.good(" [loaded]") if loaded
        else style.dim(" [silent: another copy is loaded]"))


def _active_line(data: GuardState, style: Style) -> str:
    """Whether a start loads the guard, and whether this environment turns it off."""
    module = data.active_module
    if data.active and data.disabled_value:
        return ("  active at startup: %s: SITEWARDEN_DISABLE=%s in this environment: the guard "
                "is off in every process started from it (a start without it loads %s)" % (
                    style.warn("no, not here"), data.disabled_value, module or "it"))
    if data.active:
        return "  active at startup: %s%s" % (style.good("yes"), " (%s)" % module if module
                                              else "")
    line = "  active at startup: %s" % style.warn("no")
    if data.disabled_value:
        line += " (and SITEWARDEN_DISABLE=%s in this environment: the guard is off in every " \
            "process started from it)" % data.disabled_value
    return line


def render_environment(data: Status | CheckReport, style: Style, indent: str = "  ",
                       verbose: bool = False) -> list[str]:
    """The ``SITEWARDEN_*`` variables set and the silence files (``cli.environment``):
    ``settings:``, then each source's words, one a line, with their state (``verbose``:
    and what each means); nothing when there are none."""
    items = (data.environment or []) + (data.silence_files or [])
    if not items:
        return []
    lines = [indent + style.bold("settings:")]
    for item in items:
        label = item.path if item.name is None else item.name
        words = item.words or []
        if not words:  # a variable of one value (SITEWARDEN_DISABLE, SITEWARDEN_DEBUG...)
            meaning = item.meaning if item.understood else style.warn(item.meaning)
            lines.append("%s  %s: %s" % (indent, item.label(), meaning))
            continue
        for w in words:
            state = w.state or ""
            shown = style.good(state) if state == "acknowledged" else style.warn(state) \
                if state not in ("silenced", "pinned") else state
            line = "%s  %s: %s %s" % (indent, label, w.word, shown)
            if verbose and w.meaning:
                line += ": " + w.meaning
            lines.append(line)
    return lines


def render_status(data: Status, style: Style, verbose: bool = False) -> str:
    """``status``'s text: where the guard is, whether a start loads it, the settings,
    the marker with its message, then ``check``'s verdict (``verbose``: what each
    setting means)."""
    data = escaped(data)  # every path and text as the terminal may show it
    lines = [style.bold("sitewarden status for %s (Python %s)"
                        % (data.python, data.python_version))]
    if data.deployments:
        orphaned = {o.site_dir for o in data.orphans or []}  # said below, as check says it
        for dep in data.deployments:
            lines.append(deployment_line(dep, data, style))
            if not dep.complete and dep.missing and dep.site_dir not in orphaned:
                missing = dep.missing
                fix = ("apt install --reinstall sitewarden" if dep.installer == "dpkg"
                       else "sitewarden install --python %s" % data.python)
                lines.append("  %s the deployment is incomplete: missing %s; %s"
                             % (style.warn("damaged:"), ", ".join(missing),
                                incomplete_effect(data.active, data.marker, fix)))
    else:
        lines.append("  deployed: %s" % style.warn("nowhere"))
    lines.extend(render_orphans(data.orphans or [], style))
    lines.append(_active_line(data, style))
    lines.extend(render_environment(data, style, verbose=verbose))
    if data.startup_stderr:
        lines.append("  %s a plain start printed to stderr:" % style.warn("note:"))
        lines.append(_indent(data.startup_stderr.rstrip()))
    lines.extend(render_marker(data.marker, style))
    if data.verdict:
        lines.append(verdict.text(data.verdict, "check ", style))
    return fit(lines)


def render_status_all(items: list[Status | TargetFailure], style: Style,
                      summary: dict[str, Any] | None = None, verbose: bool = False) -> str:
    """``status --all``: one block per interpreter, its guard state first and
    ``check``'s verdict on it last; then the verdict over all of them (``summary``)."""
    lines = [style.bold("sitewarden status: %s" % plural(len(items), "python3 interpreter"))]
    for data in map(escaped, items):  # every path and text as the terminal may show it
        names = ", ".join(data.aliases or [])
        lines.append("")
        if isinstance(data, TargetFailure):
            lines.append("%s %s" % (style.bold(data.python), style.bad(data.error)))
            continue
        guard = style.good("guarded") if data.active else style.warn("NOT GUARDED")
        if data.marker.removed_from:
            guard = style.bad("NOT guarded: the marker was removed") + style.dim(
                " (%s ships it: apt-get install --reinstall -y %s)" % (
                    data.marker.removed_from, data.marker.removed_from))
        elif data.virtualenv or not data.marker.applies:
            guard += style.dim(" (PEP 668 marker %s)" % (
                "absent" if not data.marker.marker_exists else "not applied"))
        if data.disabled_value:
            guard += style.warn(" (SITEWARDEN_DISABLE=%s in this environment: the guard is off "
                                "in every process started from it)" % data.disabled_value)
        lines.append("%s (Python %s%s): %s" % (
            style.bold(data.python), data.python_version,
            "; also " + names if names else "", guard))
        for dep in data.deployments:
            lines.append(deployment_line(dep, data, style))
        if not data.deployments:
            lines.append("  deployed: %s" % style.warn("nowhere"))
        if data.active and data.active_module:
            lines.append("  loaded: %s" % data.active_module)
        if data.startup_stderr:
            lines.append("  %s a plain start printed to stderr:" % style.warn("note:"))
            lines.append(_indent(data.startup_stderr.rstrip()))
        if data.verdict:
            lines.append("  " + verdict.text(data.verdict, "check ", style))
    if summary:
        lines.extend(["", verdict.text(summary, "check ", style)])
    return fit(lines)


def render_orphans(orphans: list[Orphan], style: Style) -> list[str]:
    """Hooks left without their runtime: which, what they do, the command that removes them."""
    lines = []
    for o in orphans:
        lines.append("  %s %s: %s" % (style.bad("orphaned hook:"), o.hook, o.problem))
        lines.append("    %s" % o.effect)
        lines.append("    remove it: %s" % o.remove)
        if o.uninstall != o.remove:
            lines.append("    (or: %s)" % o.uninstall)
    return lines


def render_layout(layout: Layout, style: Style) -> list[str]:
    """``sys.path``, one entry a line, with its class and where it came from."""
    title = "sys.path%s" % (" (virtual environment)" if layout.venv else "")
    lines = [style.bold(title)]
    for e in layout.entries or []:
        path = e.path or "'' (%s)" % (e.realpath or "the working directory, deleted")
        notes = []
        if e.source not in (None, "site", "script", "startup"):
            notes.append("from " + e.source)
        if e.foreign:
            notes.append("Python %s" % e.foreign)
        if e.duplicate_of is not None:
            notes.append("duplicate of [%d]" % e.duplicate_of)
        elif e.same_as is not None:
            notes.append("same directory as [%d]" % e.same_as)
        if not e.exists:
            notes.append("missing")
        if e.note:
            notes.append(e.note)
        cls = "%-10s" % e.cls
        if e.cls == "foreign":
            cls = style.bad(cls)
        elif e.cls == "distro":
            cls = style.bold(cls)
        lines.append("  %3d  %s %s%s" % (e.index, cls, path,
                                         style.dim(" (%s)" % ", ".join(notes)) if notes else ""))
    return lines


def _copy_line(label: str, copy: Copy) -> str:
    return "    %s %s  [%s]" % (label, copy.text(), copy.cls)


def _case_lines(case: ShadowCase, style: Style, ids: list[str] | None = None,
               verbose: bool = True) -> list[str]:
    """A shadowed module; with a finding (``ids``) its copies and requirements are the
    finding's to say, unless ``verbose``."""
    comparison = case.comparison
    note = "" if comparison in (None, "same") else " (%s)" % COMPARISON_TEXT.get(
        comparison, "versions: %s" % comparison)
    lines = ["  %s %s%s%s" % (style.severity(case.severity), case.module,
                              style.dim(note) if note else "",
                              " (finding %s)" % ", ".join(ids) if ids else "")]
    if ids and not verbose:
        return lines
    lines.append(_copy_line("imported:", case.winner))
    for copy in case.shadowed:
        lines.append(_copy_line("shadowed:", copy))
    for req in case.requirements or []:
        status = req.status
        mark = style.bad(status) if req.broken() \
            else style.warn(status) if status == "cannot compare" else style.good(status)
        lines.append("    required: %s requires '%s': %s" % (
            req.consumer_text(), req.requirement, mark))
    return lines


def render_shadowing(data: Shadowing, style: Style, found: list[Finding] | None = None,
                     verbose: bool = True) -> list[str]:
    """Each shadowed module with both copies, and the requirements it breaks (one with
    a finding among ``found``: its id, the rest with ``verbose``); then the metadata seen
    first whose modules are missing, under a heading of its own."""
    ids: dict[str, list[str]] = {}
    for f in found or ():
        module = verdict.About(f).module
        if f.kind == "shadowed-module" and f.id and module:
            ids.setdefault(module, []).append(f.id[:SHOWN])
    modules = data.modules or []
    hidden_namespaces: list[HiddenNamespace] = data.hidden_namespaces or []
    lines = [heading("Shadowed modules", len(modules) + len(hidden_namespaces), style)]
    if not modules and not hidden_namespaces:
        lines.append("  " + style.good("none"))
    for case in modules:
        lines.extend(_case_lines(case, style, ids.get(case.module), verbose))
    for hidden in hidden_namespaces:
        lines.append("  %s %s: the regular package %s hides the distro's namespace package" % (
            style.severity("medium"), hidden.module, hidden.winner.path))
        lines.append(_copy_line("imported:", hidden.winner))
        for h in hidden.hidden:
            lines.append("    hidden:   %s  [namespace portion, %s]" % (h.path, h.cls))
    stale = [d for d in data.distributions or [] if not d.modules_present]
    if stale:
        lines.append("")
        lines.append(heading("Metadata without modules", len(stale), style))
    for dist in stale:
        lines.append("  %s %s: metadata %s without its modules" % (
            style.severity("low"), dist.name, dist.visible.metadata))
    return lines


def _finding_lines(f: Finding, style: Style) -> list[str]:
    """A finding: its severity, its id's first digits (what ``sitewarden acknowledge``
    takes), its message wrapped under itself.  An acknowledged one says only that, where
    and when: its advice no longer applies."""
    prefix = "  %s %s " % (style.severity(f.severity), (f.id or "?")[:SHOWN])
    about = verdict.About(f)
    if about.acknowledged:
        what = about.file or about.module or about.entry or f.kind
        when = about.acknowledged_at
        text = "%s (%s): acknowledged in %s%s" % (
            what, f.kind, about.acknowledged_by, " on %s" % when if when else "")
    else:
        text = f.message.rstrip("\n")
    fixes = [printable(c) for c in (about.fix, about.command) if isinstance(c, str)]
    return wrap(printable(text, lines=True), prefix, keep=fixes)


#: Information the ``PEP 668`` line of ``check``'s text already gives: not said twice.
MARKER_KINDS = verdict.MARKER_KINDS


def _marker_line(marker: MarkerState, style: Style, found: list[Finding]) -> list[str]:
    """``check``'s marker, on one line: where and whether it applies (its message is
    ``status``'s to show, ``--json`` has it: Debian's is 15 lines); a removed marker
    names its finding, which says the rest."""
    if marker.removed_from:
        ids = [f.id[:SHOWN] for f in found if f.kind == "marker-removed" and f.id]
        return ["PEP 668: marker %s: %s (finding %s)" % (
            marker.marker_path, style.bad("removed"), ", ".join(ids) or "marker-removed")]
    if not marker.marker_exists or not marker.message:
        return ["PEP 668:" + line[1:] for line in render_marker(marker, style)]
    state = style.bold("applies") if marker.applies else "present, not applied"
    lines = ["PEP 668: marker %s (%s)" % (marker.marker_path, state)]
    if marker.problem:
        lines.append("  %s %s" % (style.warn("unreadable:"), marker.problem))
    if marker.virtualenv:
        lines.insert(0, "  virtual environment: PEP 668 does not apply")
    return lines


def _guard_lines(report: CheckReport, style: Style, verbose: bool = False) -> list[str]:
    guard = report.guard
    deps = guard.deployments or []
    active = _active_line(guard, style).strip()
    lines = ["Guard: deployed %s; %s" % (", ".join(
        d.site_dir + ("" if d.complete is not False else style.warn(" (incomplete)"))
        for d in deps) if deps else style.warn("nowhere"), active)]
    lines.extend(render_orphans(guard.orphans or [], style))
    lines.extend(render_environment(report, style, indent="", verbose=verbose))
    return lines


def _summary(real: list[Finding], info: list[Finding], style: Style) -> list[str]:
    """What needs attention first: a clean machine's answer is its first lines."""
    lines = [heading("Findings", len(real), style)]
    for f in real:
        lines.extend(_finding_lines(f, style))
    if not real:
        lines.append("  " + style.good("none: clean"))
    if info:
        lines.append(heading("Information", len(info), style))
        for f in info:
            lines.extend(_finding_lines(f, style))
    return lines


def render_check(report: CheckReport, style: Style, verbose: bool = False) -> str:
    """``check``'s text: the findings first (what needs attention, then what is only
    said), then what they are about: the marker, the guard, ``sys.path``, shadowed
    modules, startup code; each fact once (the marker's state is its line, not an
    ``info`` finding too; a startup file with a finding names it, its lines are the
    finding's or ``verbose``'s), and the verdict last."""
    report.identify()
    report = escaped(report)  # every path, line and message as the terminal may show it
    interp = report.interpreter
    findings = sorted(report.findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
    # Counted apart: what needs attention (the exit status), and what is only said.
    real = [f for f in findings if f.severity != "info"]
    info = [f for f in findings if f.severity == "info" and f.kind not in MARKER_KINDS]
    lines = [style.bold("sitewarden check: %s (Python %s)"
                        % (interp.executable, interp.version)), ""]
    lines.extend(_summary(real, info, style))
    lines.append("")
    lines.extend(_marker_line(report.marker, style, findings))
    lines.extend(_guard_lines(report, style, verbose))
    if report.layout:
        lines.append("")
        lines.extend(render_layout(report.layout, style))
    if report.shadowing:
        lines.append("")
        shadowing = render_shadowing(report.shadowing, style, findings, verbose)
        if len(shadowing) == 2 and not (report.shadowing.modules
                                        or report.shadowing.hidden_namespaces):
            shadowing = ["Shadowed modules: none"]  # said in one line
        lines.extend(shadowing)
    if report.section("startup"):
        lines.extend([""] + render_startup(report.section("startup"), style,
                                           _by_file(findings), verbose))
    if report.verdict:
        lines.extend(["", verdict.text(report.verdict, "", style)])
    return fit(lines)


def _by_file(findings: list[Finding]) -> dict[str, list[str]]:
    """``{startup file: the ids of its findings}``: its block names them."""
    out: dict[str, list[str]] = {}
    for f in findings:
        about = verdict.About(f)
        # writable-path-entry: the .pth whose path line adds the entry
        path = about.source if f.kind == "writable-path-entry" else about.file
        if path and f.id:
            out.setdefault(path, []).append(f.id[:SHOWN])
    return out


def render_check_all(items: list[CheckReport | TargetFailure], style: Style,
                     summary: dict[str, Any] | None = None, verbose: bool = False) -> str:
    """``check --all``: a summary line (as ``status --all`` has), then each report (its
    own verdict last), then the verdict over all of them (``summary``)."""
    failed = [r for r in items if isinstance(r, TargetFailure)]
    counts = [len([f for f in r.findings if f.severity != "info"]) for r in items
              if not isinstance(r, TargetFailure)]
    clean = counts.count(0)
    head = "sitewarden check: %s: %d clean, %d with findings (%s)%s" % (
        plural(len(items), "python3 interpreter"), clean, len(counts) - clean,
        plural(sum(counts), "finding"), ", %d not probed" % len(failed) if failed else "")
    blocks = [fit([style.bold(head)])] + [
        render_check(r, style, verbose) if not isinstance(r, TargetFailure)
        else fit(["%s %s: %s" % (style.bad("high:" if r.untrusted else "error:"),
                                 printable(r.python), printable(r.error))])
        for r in items]
    if summary:
        blocks.append("overall " + verdict.text(summary, "", style))
    return "\n\n".join(blocks)
