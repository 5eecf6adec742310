"""The ``sitewarden`` commands: install, uninstall, status, check, acknowledge (run by
:mod:`.main`)."""

from __future__ import annotations

import os
import sys

from .. import __version__, settings
from ..facts.records import CheckReport, Finding, MarkerState, RefusedSilenceFile
from ..facts.startup_records import Acknowledgement
from ..probe.jsonout import dumps
from . import deployed, environment, judgement, targets, verdict
from .errors import (
    CHECK_FAIL_ON,
    DEFAULT_FAIL_ON,
    EXIT_ATTENTION,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    FAIL_ON,
    UsageError,
)
from .render import Style, render_check, render_check_all, render_status, render_status_all
from .state import DeploymentState, Setting, StartupState, Status, TargetFailure, Verdict

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn

EXAMPLES = """\
examples:
  sudo sitewarden install --python /usr/bin/python3     guard Debian's system python
  sitewarden install --python python3.12 --user          guard it for this user only
  sitewarden status --python /usr/bin/python3 --json     where is it deployed, is it active
  sitewarden check --python /usr/bin/python3             the interpreter's whole state
  sudo sitewarden acknowledge ID --python /usr/bin/python3  accept finding ID as it is
  sudo sitewarden quarantine ID --python /usr/bin/python3   remove what finding ID names
  sudo sitewarden acknowledge --remove ID                 take an acknowledgement back
  sudo sitewarden uninstall --python /usr/bin/python3    remove it, exactly

environment:
  SITEWARDEN_DISABLE=1                the guard does nothing in that process (escape hatch;
                                      %s; any other value leaves it on)
  SITEWARDEN_SILENCE=shadow,path      silence warnings (all, 1: every kind); never lifts a block
  SITEWARDEN_SILENCE=shadow:yaml,six  acknowledge those shadows (check lists them as such)
  /etc/sitewarden/silence             shadow:NAME lines: acknowledged in every process;
                                      startup:PATH@sha256:... (sitewarden acknowledge ID)
  PYTHONWARNINGS=ignore:::sitewarden  silence them with Python's filter (-W ignore:::sitewarden)

exit status (one rule for every command; with --all, the highest over the interpreters):
  0    done; every target guarded and clean (status: the guard loads at startup where
       the PEP 668 marker applies, no orphaned hook or incomplete deployment; check: no
       finding at or above --fail-on, "medium" by default; install: a start would load
       the guard; uninstall: removed)
  1    done, but something needs attention: a finding at or above --fail-on (check);
       a target not guarded or damaged (status: the guard's findings at low or above),
       or a finding that fails check's default gate, --fail-on medium (status: its
       verdict line then names sitewarden check); a guard deployed that a start would
       not load (install); no acknowledgement matched (acknowledge --remove)
  2    usage or operational error, one line on stderr: bad options, a target that
       cannot be probed, an install refused, nothing to uninstall
  130  interrupted (Ctrl-C)
  141  stdout closed early (`sitewarden check | head -1`): the output stops quietly,
       as a closed pipe ends a command (128 + SIGPIPE)
""" % (environment.TRUE_WORDS,)


def _add_target_options(p: argparse.ArgumentParser, where: bool) -> None:
    p.add_argument("--python", metavar="EXE",
                   help="the target interpreter (path or command; default: this one)")
    if where:
        g = p.add_mutually_exclusive_group()
        g.add_argument("--user", action="store_true",
                       help="the target's user site directory instead of its default scheme")
        g.add_argument("--site-dir", metavar="DIR",
                       help="a specific site directory of the target")


def _add_all_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--all", action="store_true",
                   help="every python3 interpreter of the machine (%s), each once; one "
                   "that a user other than root may change is listed, never run"
                   % ", ".join(d + "/python3*" for d in targets.INTERPRETER_DIRS))


def build_parser() -> argparse.ArgumentParser:
    import argparse  # not for the plain forms of `check` and `status` (see main.plain_args)

    class Parser(argparse.ArgumentParser):
        """Usage errors as every other error: one line on stderr, exit status 2."""

        def error(self, message: str) -> NoReturn:
            self.exit(EXIT_ERROR, "sitewarden: error: %s (see `%s --help`)\n"
                      % (message, self.prog))

    parser = Parser(
        prog="sitewarden",
        description="A PEP 668 guard inside the interpreter: blocks installs into externally "
        "managed Pythons, keeps installers out of distro directories, and warns when local "
        "packages shadow distro packages.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version="sitewarden " + __version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("install", help="deploy the guard into an interpreter",
                       description="Deploy the guard so that every start of the target loads it.",
                       epilog="example:\n  sudo sitewarden install --python /usr/bin/python3",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_target_options(p, where=True)
    p.add_argument("--hook", choices=deployed.HOOKS, default=None,
                   help="how the guard is loaded: by default a .pth file (Python < 3.18) or "
                   "a PEP 829 .start file (3.18+, where .pth import lines no longer run); "
                   "'start' forces the .start file on 3.15-3.17 (it costs every start the "
                   "import of pkgutil, re, enum...); 'sitecustomize': a block in sitecustomize")

    p = sub.add_parser("uninstall", help="remove the guard from an interpreter",
                       description="Remove exactly what install wrote.",
                       epilog="example:\n  sudo sitewarden uninstall --python /usr/bin/python3",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_target_options(p, where=True)
    p.add_argument("--hook", choices=deployed.HOOKS, default=None,
                   help="accepted as install took it; whatever hook was deployed is removed")

    _add_audit_parsers(sub, argparse.RawDescriptionHelpFormatter)
    _add_acknowledge_parser(sub, argparse.RawDescriptionHelpFormatter)
    _add_quarantine_parser(sub, argparse.RawDescriptionHelpFormatter)
    return parser


def _add_quarantine_parser(sub: Any, formatter: Any) -> None:
    p = sub.add_parser(
        "quarantine", help="take startup code or a shadowing copy out of every start",
        description="Take what one of check's findings is about out of every start of the\n"
        "target, without starting it (check's -I -S probe alone): a startup file, the\n"
        "modules only it runs, and the distribution that installed it (or, for a shadowed\n"
        "module, the local copy's distribution), whole, as its RECORD vouches for its\n"
        "files. They move into a directory only root may enter, with a record of each\n"
        "file (%s/TIME-ID; another user's:\n"
        "~/.local/state/sitewarden/quarantine; SITEWARDEN_QUARANTINE_DIR: another);\n"
        "--restore puts them back byte for byte. No pip runs, nothing asks.\n"
        "exit status: 0 done, 1 nothing to do, 2 refused or usage error." % (
            "/var/lib/sitewarden/quarantine"),
        epilog="example:\n  sudo sitewarden quarantine 3f09c2a1d4e5 --python /usr/bin/python3",
        formatter_class=formatter)
    p.add_argument("id", metavar="FINDING-ID", nargs="?",
                   help="the finding's id, as check gives it (or its first 8+ digits)")
    _add_target_options(p, where=False)
    p.add_argument("--restore", metavar="DIR|ID",
                   help="put a quarantine's files back (its directory, or the finding's id: "
                   "its newest quarantine); refused if a file changed since")
    p.add_argument("--list", action="store_true", help="list the quarantines")


def _add_acknowledge_parser(sub: Any, formatter: Any) -> None:
    p = sub.add_parser("acknowledge", help="accept one of check's findings as it is",
                       description="Accept one of check's findings, by its id (check --json), "
                       "in every process of\nthe machine: the line that acknowledges it goes "
                       "into %s.\nStartup code is pinned: its file, its owner and every byte "
                       "its code runs;\nany change brings the finding back. A shadowed module "
                       "is acknowledged by\nname. Other findings (a file changed since "
                       "installed, code that cannot be\nread, a place others may change) are "
                       "refused: they have a fix instead.\nLike check, it runs nothing of the "
                       "target." % settings.SYSTEM_FILE,
                       epilog="example:\n  sudo sitewarden acknowledge 3f09c2a1d4e5 "
                       "--python /usr/bin/python3\n  sudo sitewarden acknowledge --remove "
                       "3f09c2a1d4e5\n  sudo sitewarden acknowledge --remove "
                       "/usr/local/lib/python3.11/dist-packages/x.pth\n\n"
                       "exit status: 0 done; 1 --remove found no such acknowledgement; 2 "
                       "an id shorter than 8 digits, no such finding, or one that cannot be "
                       "acknowledged", formatter_class=formatter)
    p.add_argument("id", metavar="FINDING-ID",
                   help="the finding's id, as check shows it (its first 8 digits or more); "
                   "with --remove also a startup file's path")
    _add_target_options(p, where=False)
    p.add_argument("--remove", action="store_true",
                   help="take the acknowledgement of FINDING-ID (or of the startup file "
                   "FILE) out of the silence file that holds it")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--deployment", action="store_true",
                   help="write the guard deployment's silence file of the target "
                   "(%s beside its sitewarden package) instead: that interpreter only; "
                   "shadows only (startup code is acknowledged only in %s)"
                   % (settings.SITE_FILE, settings.SYSTEM_FILE))
    g.add_argument("--print", action="store_true",
                   help="write nothing: print the line (for a configuration manager, or "
                   "SITEWARDEN_SILENCE)")


def _add_audit_parsers(sub: Any, formatter: Any) -> None:
    """``status`` and ``check``: the commands that read a target and run nothing of it."""
    p = sub.add_parser("status", help="where the guard is deployed and whether it is active",
                       description="Where the guard is deployed for the target, whether a start "
                       "loads it\nand refuses installs. It runs none of the target's startup "
                       "code: as check,\nit starts the target isolated, without site (-I -S), "
                       "and reads what a normal\nstart would run (.pth import lines, .start "
                       "entry points, sitecustomize,\nusercustomize). It ends with check's "
                       "verdict line (--fail-on medium), naming\nsitewarden check when that "
                       "gate fails.",
                       epilog="example:\n  sitewarden status --all\n\nexit status: 0 "
                       "guarded and check's gate passes; 1 the guard needs attention\n(a "
                       "finding about it at low or above) or check --fail-on medium fails; "
                       "2 error",
                       formatter_class=formatter)
    _add_target_options(p, where=False)
    _add_all_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--verbose", action="store_true",
                   help="also what each setting means (the JSON holds it all)")
    p.add_argument("--live", action="store_true",
                   help="instead, start the target normally (python -c <a script that asks "
                   "whether the guard is loaded>, in /, in this environment) and report "
                   "what that start loaded and printed: every .pth import line, .start "
                   "entry point, sitecustomize and usercustomize of the target RUNS, as "
                   "this user (root under sudo)")

    p = sub.add_parser("check", help="report an interpreter's PEP 668, path and shadowing state",
                       description="The target's PEP 668 marker, sys.path, shadowed modules, "
                       "broken requirements,\nstartup files and guard, each finding with a "
                       "severity.\nIt never runs the target's startup code (.pth import lines, "
                       ".start entry\npoints, sitecustomize, usercustomize): the target starts "
                       "isolated, without site\n(-I -S: nothing of PYTHONPATH or the working "
                       "directory runs either), and check\nreads what a normal start in this "
                       "environment would run.",
                       epilog="example:\n  sitewarden check --python /usr/bin/python3 --json",
                       formatter_class=formatter)
    _add_target_options(p, where=False)
    _add_all_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--verbose", action="store_true",
                   help="also every line of each startup file and what each setting means "
                   "(the JSON holds it all)")
    p.add_argument("--fail-on", choices=FAIL_ON, default=CHECK_FAIL_ON, metavar="SEVERITY",
                   help="exit 1 when a finding is at or above SEVERITY (%s; default: %s: "
                   "what needs attention; low: also an interpreter the guard does not load)"
                   % (", ".join(FAIL_ON), CHECK_FAIL_ON))


def exit_status(findings: list[Finding], fail_on: str = DEFAULT_FAIL_ON) -> int:
    """The rule for a target's findings: 1 when any is at or above ``fail_on`` (by default:
    above ``info``), else 0."""
    return verdict.gate(findings, fail_on)


def guard_findings(status: Status, target: targets.Target | None = None) -> list[Finding]:
    """``check``'s findings about the guard itself, from :func:`status_data` (``target``:
    to name the exact repair command); ``status`` exits by the same ones."""
    applies = bool(status.marker.applies)
    out = []
    orphaned = {o.site_dir for o in status.orphans}
    for dep in status.deployments:
        missing = dep.missing
        # A hook without its runtime is an orphaned hook (below); staging leftovers
        # alone (a killed first install) load nothing and refuse nothing.
        if not missing or dep.site_dir in orphaned:
            continue
        if dep.installer == deployed.DPKG:
            fix = "apt install --reinstall sitewarden"
        elif target is not None:
            fix = deployed.change_command("install", target, dep.site_dir)
        else:
            fix = "sitewarden install --python %s" % deployed.shell_quote(status.python)
        out.append(Finding(
            "incomplete-deployment", "medium",
            "the sitewarden deployment in %s is incomplete (missing %s): %s" % (
                dep.site_dir, ", ".join(missing),
                judgement.incomplete_effect(status.active, status.marker, fix)),
            site_dir=dep.site_dir, missing=missing, command=fix))
    for orphan in status.orphans:
        loud = orphan.kind == "start" and orphan.effect.startswith("every start")
        out.append(Finding(
            "orphaned-hook", "high" if loud else "low",
            "orphaned sitewarden hook %s: %s; %s.\nRemove it: %s\n(or: %s)" % (
                orphan.hook, orphan.problem, orphan.effect, orphan.remove, orphan.uninstall),
            hook=orphan.hook, command=orphan.remove))
    if status.disabled_by:
        out.append(Finding(
            "guard-disabled-here", "info",
            "SITEWARDEN_DISABLE=%s in this environment: the guard is off in every process "
            "started from it" % status.disabled_value))
    if not status.active:
        command, advice = verdict.install_advice(status.python, target)
        out.append(Finding(
            "guard-not-active", "low" if applies else "info",
            "the sitewarden guard is not loaded at startup of %s%s" % (
                status.python,
                ": only pip 23+ refuses installs here by itself (older pips, setuptools and "
                "installer do not), nothing keeps installers out of the distribution's "
                "directories, and shadowing goes unreported; %s" % advice
                if applies else ""), **({"command": command} if applies else {})))
    return out


def status_exit(data: Status | TargetFailure) -> int:
    """``status``'s exit status for one target: 1 when a finding about the guard is low
    or above (``check --fail-on low`` on the guard's findings), or when ``check``'s default
    gate fails on its findings (``data.verdict``); an interpreter not run because
    another user may change it: its high finding."""
    if isinstance(data, TargetFailure):
        return EXIT_ATTENTION if data.untrusted else EXIT_ERROR
    gate = data.verdict.exit if data.verdict else EXIT_OK
    return max(exit_status(guard_findings(data)), gate)


def status_verdict(status: Status, report: CheckReport, target: targets.Target) -> None:
    """``status``'s verdict: ``check``'s with its default gate, pointing to ``check``
    when that fails, and the guard's own state when it decides ``status``'s exit."""
    findings = report.findings
    gate = exit_status(findings, CHECK_FAIL_ON)
    guard = [f for f in guard_findings(status, target) if exit_status([f])]
    command = "sitewarden check --python %s" % deployed.shell_quote(status.python)
    if gate:
        next_command = command
    elif guard:
        next_command = verdict.About(guard[0]).command or command
    else:
        next_command = None
    status.verdict = verdict.make(findings, CHECK_FAIL_ON, next_command)
    status.verdict.status = status_exit(status)
    if guard and not gate:
        status.verdict.guard = "the guard needs attention: %s" % guard[0].kind


acknowledgements = verdict.acknowledgements


def status_data(target: targets.Target, startup: StartupState | None = None,
                acks: list[Acknowledgement] | None = None,
                refused: list[RefusedSilenceFile] | None = None) -> Status:
    deployments = [DeploymentState.from_json(d.as_json())
                   for d in deployed.find_deployments(target)]
    if startup is None:
        startup = targets.startup_status(target)
    marker = MarkerState.from_json(target.marker)
    return Status.make(
        sitewarden=__version__,
        python=target.executable,
        python_version=target.version_string,
        virtualenv=target.virtualenv,
        deployments=deployments,
        orphans=deployed.find_orphans(target),
        active=bool(startup.active),
        active_module=startup.module_file,
        active_version=startup.version,
        # A start that gave no answer (it died): why, after what it wrote.
        startup_stderr=(startup.stderr or "") + (
            "(%s)\n" % startup.error if getattr(startup, "error", None) else ""),
        marker=marker,
        installs_refused=judgement.installs_refused(bool(startup.active), marker),
        # Set in the caller's environment, it turns the guard off in what it starts.
        disabled_by="SITEWARDEN_DISABLE" if _disabled_here() else None,
        disabled_value=_disabled_here(),
        # Every SITEWARDEN_* variable set here and every silence file: what each means.
        environment=[Setting.from_json(v) for v in environment.variables(acks=acks)],
        silence_files=[Setting.from_json(f) for f in environment.silence_files(
            [d.site_dir for d in deployments], acks, refused)],
    )


def _all_interpreters(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    if args.python is not None:
        raise UsageError("--all and --python exclude each other")
    found = targets.machine_interpreters()
    if not found:
        raise UsageError("no python3 interpreter in %s" % ", ".join(targets.INTERPRETER_DIRS))
    return found


def _each(args: argparse.Namespace, collect: Any) -> list[Any]:
    """``collect(executable)`` for every interpreter of ``--all``; an interpreter that
    cannot be probed is reported as such, the others still are.  One that a user other
    than root may change is never run (``targets.untrusted``): listed, with its finding."""
    out = []
    for exe, aliases in _all_interpreters(args):
        why = targets.untrusted(exe)
        try:
            data = TargetFailure.not_run(exe, why) if why else collect(exe)
        except targets.TargetError as exc:
            data = TargetFailure(exe, str(exc))
        data.aliases = aliases
        for f in (data.findings or []) if isinstance(data, TargetFailure) else []:
            fix, reason = verdict.fix_of(f)  # a fix on every finding, this one's too
            f.details.update(fix=fix, fix_reason=reason)
        out.append(data)
    return out


def _disabled_here() -> str | None:
    """``SITEWARDEN_DISABLE``'s value when it disables the guard (as ``activate()`` reads it)."""
    value = os.environ.get("SITEWARDEN_DISABLE", "")
    return value if settings.disables(value) else None


def _default_target_note(args: argparse.Namespace) -> str | None:
    """Without ``--python`` in a venv (pipx's, ``python3 -m venv``), the target is the
    venv's own python: say so, and how to look at the system's."""
    if args.python is not None:
        return None
    from ..facts.marker import in_virtualenv  # only without --python

    if not in_virtualenv():
        return None
    system = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else (
        targets.base_interpreter_hint() or "python3")
    return ("note: no --python given: this is %s, the python of the virtual environment "
            "sitewarden runs in (%s), not a system interpreter; for the system's: sitewarden "
            "%s --python %s" % (sys.executable, sys.prefix, args.command, system))


def status_of(python: str | None, live: bool = False,
              pending: targets.PendingCheck | None = None) -> Status:
    """``status``'s report on one target: from ``check``'s probe (nothing of the target
    runs: whether a start loads the guard is read from its startup files), or with
    ``live`` whether a normal start of the target loads it (``targets.startup_status``:
    its startup code runs); with ``check``'s verdict either way."""
    data, report, target = audit(python, pending, live)
    data.startup_probe = "live" if live else "static"
    status_verdict(data, report, target)
    return data


def _when() -> tuple[str, str]:
    """``(host, time)`` as ``check``'s report gives them (``CheckReport.from_json``)."""
    import time  # reason: a JSON of several interpreters only

    return os.uname().nodename, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _all_verdict(items: list[Any], fail_on: str, status: bool) -> Verdict:
    """``--all``'s verdict: the findings of every interpreter counted, the highest gate
    (``exit``), the command's own exit status (``status``: not probed is 2; for
    ``status``, a guard that needs attention is 1) and why it differs (``guard``)."""
    numbers = dict.fromkeys(verdict.SEVERITIES, 0)
    gates, exits = [EXIT_OK], [EXIT_OK]
    for item in items:
        if not isinstance(item, TargetFailure):
            v = item.verdict
        elif item.untrusted:
            v = verdict.make(item.findings or [], fail_on, None)
        else:
            v = None
        if v is not None:
            for k, n in v.counts.items():
                numbers[k] += n
            gates.append(v.exit)
        exits.append(status_exit(item) if status else _check_status(item, fail_on))
    failed = len([i for i in items if isinstance(i, TargetFailure) and not i.untrusted])
    out = verdict.make([], fail_on, None)
    out.counts, out.exit, out.status = numbers, max(gates), max(exits)
    if out.exit:
        out.next = "sitewarden check --all" if status else "the fixes above"
    if failed:
        out.guard = "%d not probed" % failed
    elif out.status != out.exit:
        out.guard = "a guard needs attention"
    return out


def _print_all(args: argparse.Namespace, style: Style, items: list[Any], render: Any,
               status: bool) -> None:
    fail_on = CHECK_FAIL_ON if status else args.fail_on
    summary = _all_verdict(items, fail_on, status)
    if args.json:
        host, when = _when()
        print(dumps({"host": host, "time": when, "verdict": summary.as_json(),
                     "interpreters": [i.as_json() for i in items]}))
    else:
        print(render(items, style, summary, verbose=getattr(args, "verbose", False)))


def cmd_status(args: argparse.Namespace, style: Style,
               pending: targets.PendingCheck | None = None) -> int:
    live = bool(getattr(args, "live", False))
    if args.all:
        items = _each(args, lambda exe: status_of(exe, live))
        _print_all(args, style, items, render_status_all, status=True)
        return max(status_exit(i) for i in items)
    data = status_of(args.python, live, pending)
    _print_one(args, style, data, render_status)
    return status_exit(data)


def _print_one(args: argparse.Namespace, style: Style, data: Status | CheckReport,
               render: Any) -> None:
    """One target's status or check, as JSON or text, with the default-target note."""
    note = _default_target_note(args)
    if args.json:
        print(dumps(data.as_json()))
        if note:
            print("sitewarden: " + note, file=sys.stderr)
    else:
        print(render(data, style, verbose=getattr(args, "verbose", False)))
        if note:
            print(style.warn(note))


def audit(python: str | None, pending: targets.PendingCheck | None = None,
          live: bool = False) -> tuple[Status, CheckReport, targets.Target]:
    """``(status, check's report, target)`` of one target, from ``check``'s probe
    (``pending``: started already); with ``live``, whether the guard loads is learned
    from a normal start of the target (its startup code runs: ``status --live``)."""
    target, data, startup = (pending or targets.PendingCheck(python)).result()
    if live:
        startup = targets.startup_status(target)
    report = CheckReport.from_json(data)
    acks = acknowledgements(data)
    status = status_data(target, startup, acks, report.shadowing.refused_silence_files
                         if report.shadowing else None)
    status.marker.removed_from = report.marker.removed_from  # check's probe asks dpkg
    report.guard = status.guard()
    report.environment = status.environment
    report.silence_files = status.silence_files
    report.findings.extend(guard_findings(status, target))
    verdict.complete(report, acks)
    status.host, status.time = report.host, report.time
    return status, report, target


def check_data(python: str | None, pending: targets.PendingCheck | None = None,
               fail_on: str = CHECK_FAIL_ON) -> CheckReport:
    """``check``'s report on one target (``pending``: its probe, started already), with
    its verdict for ``--fail-on fail_on``."""
    report = audit(python, pending)[1]
    report.verdict = verdict.make(report.findings, fail_on, verdict.check_next(
        report.findings, fail_on, report.interpreter.executable))
    return report


def _check_status(report: CheckReport | TargetFailure, fail_on: str) -> int:
    if isinstance(report, TargetFailure):
        return exit_status(report.findings, fail_on) if report.untrusted else EXIT_ERROR
    return exit_status(report.findings, fail_on)


def cmd_check(args: argparse.Namespace, style: Style,
              pending: targets.PendingCheck | None = None) -> int:
    if args.all:
        items = _each(args, lambda exe: check_data(exe, None, args.fail_on))
        _print_all(args, style, items, render_check_all, status=False)
        return max(_check_status(r, args.fail_on) for r in items)
    report = check_data(args.python, pending, args.fail_on)
    _print_one(args, style, report, render_check)
    return _check_status(report, args.fail_on)


def cmd_acknowledge(args: argparse.Namespace, style: Style) -> int:
    """``acknowledge`` (:mod:`.acknowledge`)."""
    from .acknowledge import cmd_acknowledge  # reason: that command only

    return cmd_acknowledge(args, style, check_data)


def cmd_quarantine(args: argparse.Namespace, style: Style) -> int:
    """``quarantine`` (:mod:`.quarantine`)."""
    from .quarantine import cmd_quarantine  # reason: that command only

    return cmd_quarantine(args, style, check_data)


def cmd_change(args: argparse.Namespace, style: Style) -> int:
    """``install`` or ``uninstall`` (:mod:`.change`)."""
    from . import change  # install and uninstall only: deploy, pathlib, tempfile...

    return change.COMMANDS[args.command](args, style)


COMMANDS = {"install": cmd_change, "uninstall": cmd_change, "status": cmd_status,
            "check": cmd_check, "acknowledge": cmd_acknowledge, "quarantine": cmd_quarantine}


def run(argv: list[str], args: Any = None, pending: targets.PendingCheck | None = None) -> int:
    """Run the command of ``argv`` (``args``: its plain form, parsed already; ``pending``:
    the probe of ``check``'s one target, started already); its exit status."""
    args = args or build_parser().parse_args(argv)
    style = Style.for_stream(sys.stdout)
    try:
        if pending is not None:  # a plain check's or status's probe, started already
            return (cmd_status if args.command == "status" else cmd_check)(args, style,
                                                                            pending)
        return COMMANDS[args.command](args, style)
    except (UsageError, targets.TargetError, deployed.DeployError) as exc:
        print("sitewarden: error: %s" % exc, file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
