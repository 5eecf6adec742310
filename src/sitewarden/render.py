"""Human output: grouped, readable in a terminal, colour only on a terminal."""

from __future__ import annotations

import os
from typing import Any, TextIO

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


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def render_marker(marker: dict[str, Any], style: Style) -> list[str]:
    lines = []
    if marker.get("virtualenv"):
        lines.append("  virtual environment: PEP 668 does not apply")
    if marker.get("marker_exists"):
        state = style.bold("applies") if marker.get("applies") else "present, not applied"
        lines.append("  marker: %s (%s)" % (marker.get("marker_path"), state))
        if marker.get("problem"):
            lines.append("  %s %s" % (style.warn("unreadable:"), marker["problem"]))
        if marker.get("message"):
            lines.append("  message%s:" % (" [%s]" % marker["message_key"]
                                          if marker.get("message_key") else ""))
            lines.append(_indent(marker["message"]))
    else:
        lines.append("  marker: none (expected at %s)" % marker.get("marker_path"))
    return lines


def render_status(data: dict[str, Any], style: Style) -> str:
    lines = [style.bold("sitewarden status for %s (Python %s)"
                        % (data["python"], data["python_version"]))]
    if data["deployments"]:
        for dep in data["deployments"]:
            kind = dep["hook"] or "hook only"
            lines.append("  deployed: %s (sitewarden %s, %s)%s" % (
                dep["site_dir"], dep["version"] or "?", kind,
                "" if dep["complete"] else style.warn(" incomplete: no manifest")))
    else:
        lines.append("  deployed: %s" % style.warn("nowhere"))
    active = style.good("yes") if data["active"] else style.warn("no")
    extra = " (%s)" % data["active_module"] if data["active"] and data["active_module"] else ""
    lines.append("  active at startup: %s%s" % (active, extra))
    if data.get("startup_stderr"):
        lines.append("  %s a plain start printed to stderr:" % style.warn("note:"))
        lines.append(_indent(data["startup_stderr"].rstrip()))
    lines.extend(render_marker(data["marker"], style))
    return "\n".join(lines)


def render_check(report: dict[str, Any], style: Style) -> str:
    interp = report["interpreter"]
    lines = [style.bold("sitewarden check: %s (Python %s)"
                        % (interp["executable"], interp["version"])), ""]
    lines.append(style.bold("PEP 668"))
    lines.extend(render_marker(report["marker"], style))
    guard = report.get("guard", {})
    lines.append("")
    lines.append(style.bold("Guard"))
    deps = guard.get("deployments") or []
    lines.append("  deployed: %s" % (", ".join(d["site_dir"] for d in deps) if deps
                                    else style.warn("nowhere")))
    lines.append("  active at startup: %s" % (style.good("yes") if guard.get("active")
                                              else style.warn("no")))
    for section in report.get("sections", []):
        lines.append("")
        lines.append(style.bold(section["title"]))
        lines.extend("  " + line for line in section["lines"])
    findings = sorted(report["findings"], key=lambda f: SEVERITY_ORDER.get(f["severity"], 9))
    lines.append("")
    real = [f for f in findings if f["severity"] != "info"]
    lines.append(style.bold("Findings (%d)" % len(real)))
    for f in findings:
        text = f["message"].splitlines() or [""]
        lines.append("  %s %s" % (style.severity(f["severity"]), text[0]))
        lines.extend("         " + t for t in text[1:])
    if not real:
        lines.append("  " + style.good("clean"))
    return "\n".join(lines)
