"""What ``check`` and ``status`` conclude, in one line, and each finding's ``fix``.

The verdict: how many findings at each severity, what the gate (``check --fail-on``)
decides, and the command to run next; ``status`` gives ``check``'s, with its default
gate.  The ``fix`` of every finding in the JSON: a command, or ``null`` and a
``fix_reason`` in words.  An acknowledged finding says when it was acknowledged, from
the comment ``sitewarden acknowledge`` wrote above its line.  The install advice fits
how the guard is deployed (the Debian package, ``sudo``, full paths).  On ``check``'s
path: ``os`` and ``sys`` only.
"""

from __future__ import annotations

import os
import sys

from ..facts.records import SHOWN
from ..facts.startup_records import (
    ACKNOWLEDGEABLE,
    ACKNOWLEDGEABLE_SHADOWS,
    UNPINNABLE,
    Acknowledgement,
)
from .deployed import shell_quote
from .errors import EXIT_ATTENTION, EXIT_OK, FAIL_ON
from .state import Verdict

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

    from ..facts.records import CheckReport, Finding
    from .targets import Target

#: Severities, highest first, as the verdict counts them.
SEVERITIES = ("high", "medium", "low", "info")
#: The marker's state, which the ``PEP 668`` line of ``check`` and ``status`` say: not a
#: finding to count or list twice.
MARKER_KINDS = ("externally-managed", "not-externally-managed", "virtualenv")
#: What opens the comment ``sitewarden acknowledge`` writes above each line it adds.
COMMENT = "# sitewarden acknowledge "
#: The directories of sudo's ``secure_path`` (Debian's): a command elsewhere needs its
#: full path under sudo.
SECURE_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
#: The widest ``next`` command the verdict line names in full: the line stays one line
#: (its counts and gate take some 80 of the 160 columns).
NEXT_WIDTH = 76
#: Where the Debian package puts the runtime.
DEBIAN_SITE = "/usr/lib/python3/dist-packages"

#: Why a finding has no command, by kind (what else is said in its message).
REASONS = {
    "externally-managed": "nothing to fix: the PEP 668 marker applies",
    "not-externally-managed": "nothing to fix: without a marker PEP 668 does not apply",
    "virtualenv": "nothing to fix: a virtual environment",
    "guard-disabled-here": "nothing to fix: SITEWARDEN_DISABLE turns the guard off here; "
                           "unset it to turn it on",
    "marker-unreadable": "the marker's own package is to correct it; installs are refused "
                         "meanwhile",
    "untrusted-interpreter": "make the interpreter and every directory above it root's alone "
                             "(chown root, chmod go-w), or remove it",
    "shadowed-module": "remove the local copy the message names, or acknowledge the shadow",
    "hidden-namespace": "remove the regular package that hides the namespace package, or "
                        "acknowledge it",
    "requirement-violated": "remove or replace the local copy that breaks it (its "
                            "shadowed-module finding)",
    "stale-metadata": "remove the metadata left without its modules (the message names it)",
    "stdlib-shadowed": "rename or remove the module that shadows the standard library, or "
                       "take its directory off sys.path",
    "foreign-entry": "take the other interpreter's directory off sys.path where it is added",
    "distro-before-local": "put the install scheme's directory back ahead of the distro's "
                           "where the order is changed",
    "inserted-ahead-of-stdlib": "take the entry off sys.path, or uninstall what adds it",
    "duplicate-entry": "remove the second entry where it is added",
    "symlinked-entry": "remove the second entry where it is added",
    "missing-entry": "create the directory, or remove the entry where it is added",
    "missing-pth-directory": "nothing to fix: site skips it (remove the line to be rid of it)",
    "distribution-startup-code": "nothing to fix: its distribution's code, as installed",
    "startup-line-fails": "correct or remove the line: the message names its file and owner",
    "startup-file-special": "remove it, or replace it with a regular file",
    "startup-file-undecodable": "correct its encoding, or remove it",
    "startup-file-too-large": "find out what it holds, then remove or shorten it",
    "startup-file-odd-name": "find out who put it there, then remove it",
    "unowned-startup-code": "find out what it does: remove it, or acknowledge it as it is",
    "unread-startup-code": "find out what it runs (the message names what was not read)",
    "dangerous-startup-code": "remove it (the message says how), then find out what it did",
}


class About:
    """What the CLI reads of a finding's details (a dict per kind: docs/check-schema.md),
    read in one place."""

    def __init__(self, finding: Finding) -> None:
        get = finding.details.get
        self.file, self.module, self.path = get("file"), get("module"), get("path")
        self.entry, self.source = get("entry"), get("source")
        self.pin, self.command, self.fix = get("pin"), get("command"), get("fix")
        self.capabilities = get("capabilities") or ()
        self.acknowledged = bool(get("acknowledged"))
        self.acknowledged_by = get("acknowledged_by") if self.acknowledged else None
        self.acknowledged_at = get("acknowledged_at")
        self.acknowledgement = get("acknowledgement")
        self.scope, self.mode = get("scope"), get("mode")
        owner = get("owner") or {}
        self.owner = (owner.get("package") or owner.get("distribution"), owner.get("version"))


def acknowledgements(report: dict[str, Any] | None) -> list[Acknowledgement] | None:
    """The acknowledgements of startup code and their state in the target, from the
    ``startup`` section of ``check``'s report as the probe sent it (None: no section)."""
    section = (report or {}).get("startup")
    if not isinstance(section, dict):
        return None
    return [Acknowledgement.from_json(a) for a in section.get("acknowledgements") or ()]


def _writable_fix(f: Finding, about: About) -> str | None:
    """The command that makes the place others may change its owner's alone, as the
    message words it."""
    if f.kind == "writable-path-entry":
        return "chmod go-w %s" % shell_quote(about.entry) if about.entry else None
    path = about.path or about.file
    if not path:
        return None
    if about.scope == "others" and not int(about.mode or "0", 8) & 0o002:
        return "chown %d %s" % (os.geteuid(), shell_quote(path))
    return "chmod go-w %s" % shell_quote(path)


def fix_of(f: Finding) -> tuple[str | None, str | None]:
    """``(fix, fix_reason)`` of ``f``: its command, or None and why there is none."""
    about = About(f)
    if about.acknowledged:
        return None, "acknowledged in %s: nothing to do" % about.acknowledged_by
    if about.command:
        return about.command, None
    if f.kind in ("writable-path-entry", "writable-startup-file", "writable-startup-module"):
        command = _writable_fix(f, about)
        if command:
            return command, None
    if f.kind == "unmatched-acknowledgement":
        if about.source and about.source != "SITEWARDEN_SILENCE":
            return "sitewarden acknowledge --remove %s" % shell_quote(
                "startup:" + (about.acknowledgement or "")), None
        return None, "take it out of SITEWARDEN_SILENCE"
    if f.severity == "info" and f.kind not in REASONS:
        return None, "nothing to fix: information"
    return None, REASONS.get(f.kind, "no single command: the message says what to do")


def acknowledgeable(f: Finding) -> bool:
    """May ``sitewarden acknowledge`` take ``f``?"""
    about = About(f)
    if f.kind in ACKNOWLEDGEABLE_SHADOWS:
        return bool(about.module)
    return f.kind in ACKNOWLEDGEABLE and UNPINNABLE not in about.capabilities


def complete(report: CheckReport, acks: list[Acknowledgement] | None) -> None:
    """Each finding of ``report`` (the CLI's copy): its ``id``, its ``fix`` (or why none),
    and, when acknowledged in a silence file, ``acknowledged_at``: when (the comment
    ``sitewarden acknowledge`` wrote above the line; ``acks``: the acknowledgements of
    startup code, :func:`acknowledgements`)."""
    report.identify()
    texts: dict[str, list[str]] = {}
    for f in report.findings:
        fix, reason = fix_of(f)
        f.details.update(fix=fix, **({"fix_reason": reason} if fix is None else {}))
        about = About(f)
        source = about.acknowledged_by
        if source and source != "SITEWARDEN_SILENCE":
            words = ["startup:" + a.word for a in acks or () if a.source == source
                     and a.file == about.file and a.word]
            when = acknowledged_at(_lines(texts, source), words, about.module)
            if when:
                f.details.update(acknowledged_at=when)


def _lines(texts: dict[str, list[str]], path: str) -> list[str]:
    if path not in texts:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                texts[path] = fh.read(1 << 16).splitlines()
        except OSError:
            texts[path] = []
    return texts[path]


def acknowledged_at(lines: list[str], words: list[str], module: str | None) -> str | None:
    """When the acknowledgement among ``lines`` (a silence file's) that is one of
    ``words``, or names ``module`` (``shadow:NAME``), was written: the time in the
    comment ``sitewarden acknowledge`` wrote above it; None without one."""
    for n, line in enumerate(lines):
        word = line.strip()
        if word not in words and not (module and word.lower().startswith("shadow:") and
                                      module in word[7:].replace(",", " ").split()):
            continue
        k = n - 1
        while k >= 0 and lines[k].startswith("#"):
            if lines[k].startswith(COMMENT):
                head = lines[k][len(COMMENT):]
                stamp = head.partition(", ")[2].partition(" on ")[0]
                return stamp or None
            k -= 1
    return None


def counts(findings: list[Finding]) -> dict[str, int]:
    """``{severity: how many}`` of ``findings``, the marker's state aside."""
    out = dict.fromkeys(SEVERITIES, 0)
    for f in findings:
        if f.kind not in MARKER_KINDS and f.severity in out:
            out[f.severity] += 1
    return out


def gate(findings: list[Finding], fail_on: str) -> int:
    """``check``'s exit status for ``findings`` with ``--fail-on fail_on``."""
    least = FAIL_ON.index(fail_on)
    return EXIT_ATTENTION if any(f.severity in FAIL_ON and FAIL_ON.index(f.severity) >= least
                                 for f in findings) else EXIT_OK


def failing(findings: list[Finding], fail_on: str) -> list[Finding]:
    return [f for f in findings if gate([f], fail_on)]


def check_next(findings: list[Finding], fail_on: str, python: str) -> str | None:
    """The command to run next after ``check`` of ``python``: None when its gate passes."""
    due = failing(findings, fail_on)
    if not due:
        return None
    ackable = [f for f in due if acknowledgeable(f)]
    # acknowledge writes the machine's silence file: root's
    ack = "%s%s acknowledge %%s --python %s" % (_sudo(None), cli_command(), shell_quote(python))
    if len(due) == 1:
        f = due[0]
        fix = About(f).fix
        said = [fix] if fix else []
        if ackable and f.id:
            said.append(ack % f.id[:SHOWN])
        full = " or ".join(said) or "its fix above"
        if len(full) <= NEXT_WIDTH:
            return full
        return ("its fix above, or sitewarden acknowledge %s" % f.id[:SHOWN] if ackable
                and f.id else "its fix above")
    # Short: the line stays one line; the findings above say the rest.  The fix first:
    # acknowledging is for code the administrator trusts as it is.
    return ("the fix of each finding above, or sitewarden acknowledge ID for one you accept as "
            "it is" if ackable else "the fix of each finding above")


def make(findings: list[Finding], fail_on: str, next_command: str | None) -> Verdict:
    """The verdict on ``findings``: their ``counts``, the gate ``fail_on``, its ``exit``
    status and the ``next`` command (or None)."""
    return Verdict.make(counts=counts(findings), fail_on=fail_on,
                        exit=gate(findings, fail_on), next=next_command)


def counted(numbers: dict[str, int]) -> str:
    """``2 high, 1 medium, 3 info`` (``no findings``)."""
    said = ["%d %s" % (numbers[s], s) for s in SEVERITIES if numbers.get(s)]
    return ", ".join(said) or "no findings"


def text(verdict: Verdict, label: str = "", style: Any = None) -> str:
    """The verdict line: ``verdict: 2 high, 1 medium; --fail-on medium: FAIL (exit 1);
    next: ...`` (``label``: whose gate, ``check `` for ``status``; ``verdict``: its JSON
    form too, as a report read back holds it)."""
    if isinstance(verdict, dict):
        verdict = Verdict.from_json(verdict)
    fails = verdict.exit != EXIT_OK
    decided = "FAIL" if fails else "pass"
    if style is not None:
        decided = style.bad(decided) if fails else style.good(decided)
    line = "verdict: %s; %s--fail-on %s: %s (exit %d)" % (
        counted(verdict.counts), label, verdict.fail_on, decided, verdict.exit)
    if verdict.guard:  # the command's own state, when it decides the exit status
        line += "; %s (exit %d)" % (verdict.guard, verdict.status)
    if verdict.next:
        line += "; next: %s" % verdict.next
    return line


# ---------------------------------------------------------------- advice fitted to the machine


def from_debian_package() -> bool:
    """Does this CLI run from the Debian package (``/usr/bin/sitewarden``)?"""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.dirname(here) == DEBIAN_SITE


def debian_machine() -> bool:
    return os.path.exists("/etc/debian_version")


def cli_command() -> str:
    """This command as sudo finds it: ``sitewarden`` where sudo's path has it, else its
    full path (pipx's ``~/.local/bin``, a venv's ``bin``), or ``PYTHON -m sitewarden``."""
    if from_debian_package():
        return "sitewarden"
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if os.path.basename(argv0) == "sitewarden":
        path = os.path.abspath(argv0) if os.sep in argv0 else _on_path(argv0)
        return "sitewarden" if path is None or os.path.dirname(path) in SECURE_PATH \
            else shell_quote(path)
    if argv0.endswith("__main__.py"):  # python -m sitewarden
        return "%s -m sitewarden" % shell_quote(sys.executable or "python3")
    return "sitewarden"


def _on_path(name: str) -> str | None:
    """Where ``PATH`` finds the command ``name`` (``shutil.which`` would cost ``check``
    the import of ``re``)."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(d or os.curdir, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    return None


def _sudo(target: Target | None) -> str:
    """``sudo `` for a user other than root who may not write the target's site
    directory; root needs none (and a container or a minimal Debian has no ``sudo``:
    the printed command must run there as printed)."""
    if os.geteuid() == 0:
        return ""
    purelib = getattr(target, "purelib", None) if target is not None else None
    return "" if purelib and os.access(purelib, os.W_OK) else "sudo "


def _debian_guards(target: Target | None, python: str) -> bool:
    """Would the Debian package's ``.pth`` guard ``python`` (a python3.X up to 3.17 that
    reads the package's directory)?"""
    if target is None:
        return python.startswith("/usr/bin/python3")
    version = tuple(getattr(target, "version", (0, 0)))
    return DEBIAN_SITE in (getattr(target, "site_dirs", None) or ()) and (3, 8) <= version < (
        3, 18)


def install_advice(python: str, target: Target | None = None) -> tuple[str, str]:
    """``(command, words)``: how to guard ``python`` (its full path), fitted to how the
    guard is deployed here: the Debian package reinstalled where it should load it, else
    ``sitewarden install`` with ``sudo`` and the command's full path, and, on Debian, the
    package that guards every python3.X of the machine."""
    sudo = _sudo(target)
    quoted = shell_quote(python)
    if from_debian_package() and _debian_guards(target, python):
        command = "%sapt-get install --reinstall -y sitewarden" % sudo
        return command, "the Debian package sitewarden guards it but a start does not load " \
            "it: reinstall the package (%s)" % command
    command = "%s%s install --python %s" % (sudo, cli_command(), quoted)
    words = "deploy it with `%s`" % command
    if debian_machine() and not from_debian_package() and _debian_guards(target, python):
        words += " (or the Debian package sitewarden: it guards every python3.X here)"
    return command, words
