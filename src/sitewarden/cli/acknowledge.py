"""``sitewarden acknowledge FINDING-ID``: accept one of ``check``'s findings as it is.

It runs ``check``'s probe in the target (kind ``pins``: as ``check``, nothing of the
target runs), finds the finding by its ``id`` (or a prefix of 8 digits or more that
names one), and appends the line that acknowledges it to the machine's silence file
(``settings.SYSTEM_FILE``; ``--deployment``: the target's guard deployment's alone, for
a shadow only: startup code is acknowledged only by the administrator's file or the
environment, never a file in a site directory; ``--print``: writes nothing, prints the
line), under a comment saying what was acknowledged, by whom and when:

- startup code (``audit.acknowledgements.ACKNOWLEDGEABLE``): ``startup:PATH@sha256:...``,
  pinned to the file, its owner and every byte its code runs; any change to them
  brings the finding back.  An earlier acknowledgement of the same file in that silence
  file is replaced;
- a shadowed module: ``shadow:NAME`` (a shadow is acknowledged by the module's name).

Any other finding is refused with its fix: no acknowledgement excuses a file that is
not what its owner installed, code that could not be read, or a place others may change.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .. import settings
from ..audit.acknowledgements import ACKNOWLEDGEABLE, UNPINNABLE
from ..facts.records import CheckReport, Finding
from . import fileops, targets
from .errors import EXIT_OK, UsageError

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from .render import Style

#: The shortest prefix of a finding's id the command takes.
MIN_PREFIX = 8
#: What opens the comment the command writes above each line it adds.
COMMENT = "# sitewarden acknowledge "


class _About:
    """What the command reads of a finding's details, read in one place."""

    def __init__(self, finding: Finding) -> None:
        details = finding.details
        self.file, self.module = details.get("file"), details.get("module")
        self.pin, self.command = details.get("pin"), details.get("command")
        self.capabilities = details.get("capabilities") or ()
        self.acknowledged_by = details.get("acknowledged_by") if details.get(
            "acknowledged") else None
        owner = details.get("owner") or {}
        self.owner = (owner.get("package") or owner.get("distribution"), owner.get("version"))


def cmd_acknowledge(args: argparse.Namespace, style: Style, check_data: Any) -> int:
    """The command; ``check_data``: ``commands.check_data``, ``check``'s report."""
    report = check_data(args.python, targets.PendingCheck(args.python, "pins"))
    report.as_json()  # each finding's id (the CLI's side: CheckReport.as_json)
    finding = _find(report, args.id.strip().lower())
    about = _About(finding)
    where = "sitewarden check --python %s" % report.interpreter.executable
    if about.acknowledged_by:
        print("%s is acknowledged already (%s): %s" % (
            finding.id, about.acknowledged_by, finding.message))
        return EXIT_OK
    line = _line(finding, about, where)
    if args.print:
        print(line)
        return EXIT_OK
    if args.deployment and line.startswith("startup:"):
        raise UsageError(
            "--deployment: startup code is acknowledged only in %s (root's) or in "
            "SITEWARDEN_SILENCE: a deployment's %s is in a site directory, where a package "
            "can put one, so check takes no startup acknowledgement from it; run it "
            "without --deployment (sudo sitewarden acknowledge %s --python %s), or with "
            "--print for SITEWARDEN_SILENCE" % (
                settings.SYSTEM_FILE, settings.SITE_FILE, finding.id,
                report.interpreter.executable))
    path = _destination(args, report)
    replaced = _write(path, line, _comment(finding, about, report))
    print(style.bold("acknowledged %s (%s, %s): %s" % (
        finding.id, finding.kind, finding.severity, about.file or about.module)))
    print("  wrote %s\n  to %s" % (line, path))
    if replaced:
        print("  in place of the earlier acknowledgement of this file: %s" % ", ".join(
            replaced))
    if line.startswith("startup:"):
        print("  %s lists it as acknowledged (info) while the file, its owner and the "
              "code it runs stay as they are now; any change brings the finding back" % where)
    else:
        print("  no warning about this shadow in any guarded process; %s lists it as "
              "acknowledged (info)" % where)
    return EXIT_OK


def _find(report: CheckReport, wanted: str) -> Finding:
    found = report.findings + (report.path.findings if report.path else [])
    exact = [f for f in found if f.id == wanted]
    if not exact and len(wanted) >= MIN_PREFIX:
        exact = [f for f in found if f.id and f.id.startswith(wanted)]
    where = "sitewarden check --python %s --json" % report.interpreter.executable
    if not exact:
        raise UsageError("no finding %s in the report on %s: an id changes when the file "
                         "it is about changes; the current ones: %s" % (
                             wanted, report.interpreter.executable, where))
    if len(exact) > 1:
        raise UsageError("%s names %d findings: give more of the id (%s)" % (
            wanted, len(exact), ", ".join(f.id for f in exact)))
    return exact[0]


def _line(finding: Finding, about: _About, where: str) -> str:
    """What acknowledges ``finding``, as a silence file holds it; refused (UsageError)
    for a finding no acknowledgement may lift."""
    if finding.kind in ACKNOWLEDGEABLE:
        if UNPINNABLE in about.capabilities:
            raise UsageError("%s cannot be acknowledged: its code runs what it does not show "
                             "(%s), so no pin covers what runs; remove it, or replace it "
                             "with code that shows what it does" % (about.file, UNPINNABLE))
        if not about.pin:
            raise UsageError("%s cannot be pinned: a file its code runs cannot be read "
                             "(%s names it)" % (about.file, where))
        return about.pin
    if finding.kind == "shadowed-module" and about.module:
        return "shadow:%s" % about.module
    raise UsageError(
        "a %s finding cannot be acknowledged: an acknowledgement accepts what startup code "
        "does, or a shadow; never a file that is not what its owner installed, code that "
        "could not be read, nor a place others may change; %s" % (
            finding.kind, "fix it: %s" % about.command if about.command else
            "the finding says what fixes it: " + finding.message))


def _destination(args: argparse.Namespace, report: CheckReport) -> Path:
    if not args.deployment:
        return Path(settings.SYSTEM_FILE)
    deployments = report.guard.deployments if report.guard else []
    if not deployments:
        raise UsageError("--deployment: the guard is not deployed in %s (sitewarden install "
                         "--python %s)" % (report.interpreter.executable,
                                           report.interpreter.executable))
    return Path(deployments[0].site_dir) / settings.SITE_FILE


def _comment(finding: Finding, about: _About, report: CheckReport) -> list[str]:
    who, version = about.owner
    return ["%s%s, %s on %s, %s (%s): %s" % (
        COMMENT, finding.id, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), report.host,
        finding.kind, finding.severity, report.interpreter.executable)] + (
        ["#   %s, %s" % (about.file, "installed by %s %s" % (who, version or "")
                         if who else "no package's record lists it")] if about.file else [])


def _write(path: Path, line: str, comment: list[str]) -> list[str]:
    """Append ``comment`` and ``line`` to the silence file ``path`` (made, with its
    directory, when missing), replacing an earlier acknowledgement of the same startup
    file and its comment; the lines it replaced."""
    try:
        fileops.refuse_symlink(path)
        old = path.read_text(encoding="utf-8", errors="surrogateescape") if path.exists() \
            else ""
        kept, replaced = _without(old.splitlines(), line)
        if line in [x.strip() for x in kept]:
            return []
        if not path.parent.is_dir():
            fileops.make_dirs(path.parent)
        text = "\n".join(kept + comment + [line]) + "\n"
        fileops.atomic_write(path, text.encode("utf-8", "surrogateescape"),
                             like=path.stat() if path.exists() else None)
    except OSError as exc:
        raise UsageError("cannot write %s (%s)%s" % (
            path, exc.strerror or exc, ": run it as root (sudo sitewarden acknowledge ...)"
            if isinstance(exc, PermissionError) and os.geteuid() != 0 else "")) from None
    return replaced


def _without(lines: list[str], line: str) -> tuple[list[str], list[str]]:
    """``lines`` without the acknowledgements of ``line``'s startup file other than
    ``line`` (and the comment the command wrote above each), and those it removed."""
    if not line.startswith("startup:"):
        return lines, []
    path, _digest = settings.startup_pin(line[8:])
    kept: list[str] = []
    replaced = []
    for x in lines:
        word = x.strip()
        if word.lower().startswith("startup:") and word != line and \
                settings.startup_pin(word[8:])[0] == path:
            replaced.append(word)
            while kept and kept[-1].startswith("#") and (
                    kept[-1].startswith(COMMENT) or kept[-1].startswith("#   ")):
                kept.pop()
            continue
        kept.append(x)
    return kept, replaced
