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

``--remove ID|FILE`` takes an acknowledgement back: the line (and the comment above it)
that acknowledges the finding ``ID`` (the comment names it), or the startup file
``FILE``, out of the silence file that holds it, rewritten atomically.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .. import settings
from ..audit.acknowledgements import ACKNOWLEDGEABLE, UNPINNABLE
from ..facts import distinfo
from ..facts.records import SHOWN, CheckReport, Finding
from ..facts.startup_records import ACKNOWLEDGEABLE_SHADOWS
from . import deployed, fileops, targets, verdict
from .errors import EXIT_ATTENTION, EXIT_OK, UsageError

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from .render import Style

#: The shortest prefix of a finding's id the command takes.
MIN_PREFIX = 8
#: What opens the comment the command writes above each line it adds.
COMMENT = verdict.COMMENT
_HEX = "0123456789abcdef"
#: Why a finding of each kind is no acknowledgement's to lift.
_REFUSED = {
    "startup-file-modified": "a file that is not what its owner installed",
    "startup-module-modified": "a module that is not what its owner installed",
    "unread-startup-code": "code that could not be read",
    "writable-startup-file": "a file others may change",
    "writable-startup-module": "a module others may change",
    "writable-path-entry": "a sys.path directory others may change",
    "marker-removed": "a PEP 668 marker that was removed",
    "requirement-violated": "a broken requirement: acknowledge the shadow that breaks it",
}


def _wanted_id(text: str) -> str:
    """``text`` as a finding's id or prefix; a usage error unless 8 hex digits or more."""
    wanted = text.strip().lower()
    if len(wanted) < MIN_PREFIX or any(c not in _HEX for c in wanted):
        raise UsageError("a finding id needs %d hex digits or more (%r); the ids: "
                         "sitewarden check shows the first %d digits, check --json all 16"
                         % (MIN_PREFIX, text, SHOWN))
    return wanted


def cmd_acknowledge(args: argparse.Namespace, style: Style, check_data: Any) -> int:
    """The command; ``check_data``: ``commands.check_data``, ``check``'s report."""
    if getattr(args, "remove", False):
        return cmd_remove(args, style, check_data)
    wanted = _wanted_id(args.id)
    report = check_data(args.python, targets.PendingCheck(args.python, "pins"))
    report.as_json()  # each finding's id (the CLI's side: CheckReport.as_json)
    finding = _find(report, wanted)
    about = verdict.About(finding)
    where = "sitewarden check --python %s" % report.interpreter.executable
    if about.acknowledged_by:
        when = about.acknowledged_at
        print("%s is acknowledged already, in %s%s" % (
            finding.id, about.acknowledged_by, " on %s" % when if when else ""))
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
    _refuse_refused(path, finding, report)
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
    if not exact:
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


def _line(finding: Finding, about: verdict.About, where: str) -> str:
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
    if finding.kind in ACKNOWLEDGEABLE_SHADOWS and about.module:
        return "shadow:%s" % about.module
    fix, reason = verdict.fix_of(finding)
    raise UsageError(
        "%s is a %s finding, which cannot be acknowledged (%s): an acknowledgement accepts "
        "what startup code does, or a shadow; %s" % (
            finding.id[:SHOWN] if finding.id else "it", finding.kind,
            _REFUSED.get(finding.kind, "the state of this interpreter, not code it runs"),
            "fix it: %s" % fix if fix else "what to do: %s" % reason))


def _destination(args: argparse.Namespace, report: CheckReport) -> Path:
    if not args.deployment:
        return Path(settings.SYSTEM_FILE)
    deployments = report.guard.deployments if report.guard else []
    if not deployments:
        raise UsageError("--deployment: the guard is not deployed in %s (sitewarden install "
                         "--python %s)" % (report.interpreter.executable,
                                           report.interpreter.executable))
    return Path(deployments[0].site_dir) / settings.SITE_FILE


def _refuse_refused(path: Path, finding: Finding, report: CheckReport) -> None:
    """A usage error when the deployment's silence file ``path`` exists and acknowledges
    nothing (``settings.refusal``: a package put it there, or others may write it; as a
    guarded process and ``check`` judge it): a line added there would not hold."""
    if str(path) == settings.SYSTEM_FILE or not path.is_file():
        return
    try:
        no = settings.refusal(str(path), distinfo.lister)
    except OSError as exc:
        raise UsageError("cannot read %s (%s)" % (path, exc.strerror or exc)) from None
    if no is not None:
        raise UsageError(
            "--deployment: %s acknowledges nothing: %s; run it without --deployment "
            "(%ssitewarden acknowledge %s --python %s)" % (
                path, settings.refusal_text(no[0], no[1], str(path)),
                "" if os.geteuid() == 0 else "sudo ",  # /etc is root's: root needs no sudo
                finding.id[:SHOWN] if finding.id else "ID", report.interpreter.executable))


def _comment(finding: Finding, about: verdict.About, report: CheckReport) -> list[str]:
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


# ---------------------------------------------------------------- --remove


def _blocks(lines: list[str]) -> list[tuple[int, int, str]]:
    """The acknowledgements of a silence file's ``lines``: ``(first, last, word)``, the
    line range of each word line with the comment ``acknowledge`` wrote above it."""
    out = []
    for n, line in enumerate(lines):
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        first = n
        while first > 0 and (lines[first - 1].startswith(COMMENT)
                             or lines[first - 1].startswith("#   ")):
            first -= 1
            if lines[first].startswith(COMMENT):
                break
        out.append((first, n, word))
    return out


def _comment_id(lines: list[str], first: int) -> str:
    line = lines[first]
    return line[len(COMMENT):].partition(",")[0].strip().lower() \
        if line.startswith(COMMENT) else ""


def _matches(wanted: str, word: str) -> bool:
    """Does the silence file's ``word`` acknowledge ``wanted``: a startup file's path,
    or an acknowledgement as written (``startup:...``, ``shadow:NAME``)?"""
    if word == wanted:
        return True
    if wanted.startswith("/") and word.lower().startswith("startup:"):
        return settings.startup_pin(word[8:])[0] == wanted
    return False


def _silence_files(args: argparse.Namespace) -> list[Path]:
    """The silence files an acknowledgement may be in: the machine's and the target's
    deployments' (``--deployment``: the latter alone)."""
    files = [] if args.deployment else [Path(settings.SYSTEM_FILE)]
    if args.deployment or args.python is not None:
        target = targets.probe_target(args.python)
        files += [Path(d.site_dir) / settings.SITE_FILE
                  for d in deployed.find_deployments(target)]
    return [p for p in files if p.is_file()]


def _words_of(report: CheckReport, wanted: str) -> list[str]:
    """The words that acknowledge the finding ``wanted`` (an id or prefix) in the target
    (``report``): its startup file's pin, its module's ``shadow:NAME``."""
    finding = _find(report, wanted)
    about = verdict.About(finding)
    acks = verdict.acknowledgements(report.sections) or ()
    out = ["startup:" + a.word for a in acks if a.file == about.file and a.word]
    if about.module:
        out.append("shadow:%s" % about.module)
    return out


def cmd_remove(args: argparse.Namespace, style: Style, check_data: Any) -> int:
    """``acknowledge --remove ID|FILE``: the acknowledgement taken out of the silence file
    that holds it; exit status 1 when none matched."""
    given = args.id.strip()
    by_path = given.startswith("/") or given.lower().startswith(("startup:", "shadow:"))
    wanted = given if by_path else _wanted_id(given)
    files = _silence_files(args)
    removed = _remove(files, wanted, by_path)
    if not removed and not by_path:  # no comment names it: the words that acknowledge it
        report = check_data(args.python, targets.PendingCheck(args.python, "pins"))
        report.as_json()
        try:
            words = _words_of(report, wanted)
        except UsageError:  # no such finding now: nothing acknowledges it either
            words = []
        for word in words:
            removed += _remove(files, word, True)
    if not removed:
        print("sitewarden: no acknowledgement of %s in %s" % (
            given, ", ".join(str(p) for p in files) or "any silence file (%s, or a "
            "deployment's %s)" % (settings.SYSTEM_FILE, settings.SITE_FILE)),
            file=sys.stderr)
        return EXIT_ATTENTION
    for path, lines in removed:
        print(style.bold("removed from %s:" % path))
        print("\n".join("  " + line for line in lines))
    return EXIT_OK


def _remove(files: list[Path], wanted: str, by_path: bool) -> list[tuple[Path, list[str]]]:
    """Take the acknowledgements of ``wanted`` (a word or startup file: ``by_path``; else
    an id or its prefix, as the comment above the line names it) out of ``files``, each
    rewritten atomically; ``[(file, the lines taken out)]``."""
    out = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise UsageError("cannot read %s (%s)" % (path, exc.strerror or exc)) from None
        lines = text.splitlines()
        gone: set[int] = set()
        for first, last, word in _blocks(lines):
            if (_matches(wanted, word) if by_path
                    else _comment_id(lines, first).startswith(wanted)):
                gone.update(range(first, last + 1))
        if not gone:
            continue
        kept = [x for n, x in enumerate(lines) if n not in gone]
        try:
            fileops.refuse_symlink(path)
            fileops.atomic_write(path, ("\n".join(kept) + "\n" if kept else "").encode(
                "utf-8", "surrogateescape"), like=path.stat())
        except OSError as exc:
            raise UsageError("cannot write %s (%s)%s" % (
                path, exc.strerror or exc, ": run it as root (sudo sitewarden acknowledge "
                "--remove ...)" if isinstance(exc, PermissionError) and os.geteuid() != 0
                else "")) from None
        out.append((path, [x for n, x in enumerate(lines) if n in gone]))
    return out
