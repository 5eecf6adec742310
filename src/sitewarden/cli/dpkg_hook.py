"""The apt hook's report (Debian package): local copies that shadow what a run changed.

Run by ``/usr/share/sitewarden/dpkg-hook post`` as root after every dpkg run: apt's
``DPkg::Post-Invoke``, or dpkg's own ``post-invoke`` for a run no apt frontend started.
It gets the ``/var/lib/dpkg/info/<package>.list`` files of the packages that run
installed, upgraded, reinstalled or configured (and that name files in
``/usr/lib/python3/dist-packages``: the shell script selects them), and with
``--changes FILE`` what apt said of each package (``name change old new`` lines,
written by ``dpkg-hook pkgs`` from apt's ``Pre-Install-Pkgs`` protocol).  Detection is
``check``'s own: the probe runs in every ``/usr/bin/python3.X`` at once (``-I``, guard
disabled, a time limit for all), as the user apt runs as (root) starts them: with that
user's own site, whose copies its Python programs import.  Only the findings that
involve those packages' files are printed: a shadowed copy they installed, or a
requirement of theirs that a local copy breaks.  Nothing is printed when there are
none; nothing here raises or waits for input.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

from .. import failopen
from ..facts.records import CheckReport, Copy, ShadowCase, Shadowing
from ..probe import runner
from . import payload, render_startup
from .targets import machine_interpreters, untrusted

DISTRO_DIR = "/usr/lib/python3/dist-packages"
#: Seconds the interpreters' checks may take, together (apt.conf bounds the whole hook too).
TIMEOUT = 10
#: Requirement statuses that mean broken (as ``shadowing.violated``).
BROKEN = ("violated", "other distribution")


def changed_paths(list_files: list[str]) -> dict[str, str]:
    """``{path under the distro directory: Debian package}`` from dpkg ``.list`` files."""
    out: dict[str, str] = {}
    for list_file in list_files:
        package = os.path.basename(list_file)[: -len(".list")].split(":")[0]
        try:
            with open(list_file, encoding="utf-8", errors="replace") as f:
                for line in f:
                    path = line.rstrip("\n")
                    if path.startswith(DISTRO_DIR + "/"):
                        out[os.path.normpath(path)] = package
        except OSError:
            continue
    return out


def read_changes(path: str) -> dict[str, str]:
    """``{package: what apt did}`` from ``dpkg-hook pkgs``'s file (``name change old new``
    lines, one per action; a package's unpacking wins over its configuring)."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split()
            if len(fields) != 4:
                continue
            name, change, old, new = fields
            name = name.split(":")[0]
            if change == "configured" and name in out:
                continue
            out[name] = {
                "new": "%s (new)" % new,
                "upgraded": "%s (upgraded from %s)" % (new, old),
                "downgraded": "%s (downgraded from %s)" % (new, old),
                "reinstalled": "%s (reinstalled)" % new,
                "configured": "%s (configured)" % new,
            }.get(change, "(%s)" % change)
    return out


def probe_env() -> dict[str, str]:
    """The checks' environment: a start as the user running the hook would get (root's,
    under apt), without PYTHON* variables (as ``-E``), HOME that user's home (``sudo``
    may have kept the caller's, and then its ``XDG_CACHE_HOME`` goes too): the user site
    the probe sees is the one that user's Python programs import, the cache the probes
    keep their files in is that user's (:func:`.payload.payload_dir`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["SITEWARDEN_DISABLE"] = "1"
    try:
        home = pwd.getpwuid(os.geteuid()).pw_dir
    except KeyError:
        home = None  # no passwd entry: HOME as given
    if home is not None and home != env.get("HOME"):
        env["HOME"] = home
        env.pop("XDG_CACHE_HOME", None)  # the caller's, kept by sudo
    return env


def run_checks(executables: list[str]) -> dict[str, CheckReport]:
    """``check``'s report from each interpreter (started in parallel), by executable;
    interpreters that fail or time out are left out.  Each starts isolated, without
    ``site`` (``-I -S``, ``probe.STATIC_BOOTSTRAP``; no ``PYTHON*`` variable either): its
    startup code never runs; the report is of a normal start with the user site of the user running
    the hook, emulated.  In an empty directory (``-c`` puts the working directory first
    on ``sys.path``).  Each report comes through a file of its own (the probe's report
    descriptor)."""
    env = probe_env()
    # The runtime the probes run, and where they keep what the next check reuses: a copy
    # in that user's cache (root's, under apt), as `sitewarden check` uses; never the
    # package's own directory, which the probes would write into.
    runtime = payload.payload_dir(env)
    try:
        cwd = tempfile.mkdtemp(prefix="sitewarden-hook-")
    except OSError:
        cwd = "/"  # no temp dir: the root directory, as before (no module there)
    procs = {}
    reports = {}
    try:
        for exe in executables:
            out = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
            try:
                procs[exe] = out, subprocess.Popen(
                    [exe, "-I", "-S", "-c", runner.STATIC_BOOTSTRAP, runtime, "static",
                     str(out.fileno())],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, cwd=cwd, env=env, pass_fds=(out.fileno(),))
            except OSError:
                out.close()
        deadline = time.monotonic() + TIMEOUT
        for exe, (out, proc) in procs.items():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                continue
            out.seek(0)
            text = out.read().decode("utf-8", "replace")
            if text.startswith(runner.REPORT_HEADER):
                try:
                    reports[exe] = CheckReport.from_json(
                        json.loads(text[len(runner.REPORT_HEADER):])["check"])
                except (ValueError, AttributeError, KeyError, TypeError):  # died half-way
                    continue
                reports[exe].identify()  # each finding's id, in its fix as check prints it
    finally:
        for out, _proc in procs.values():
            out.close()
        if cwd != "/":
            shutil.rmtree(cwd, ignore_errors=True)
    return reports


def _pkg(path: str | None, changed: dict[str, str]) -> str | None:
    return changed.get(os.path.normpath(path)) if path else None


def _fix(exe: str, winner: Copy, command: str | None) -> str:
    """The fix of one shadow: ``check``'s (``command``: ``sitewarden quarantine ID``,
    which removes the local copy's distribution unattended, starting nothing of the
    interpreter), else what removes the copy."""
    path = winner.path or ""
    if os.path.isfile(os.path.join(path, "_deployment.json")):
        return "sitewarden uninstall --python %s" % exe
    if command:
        return command
    if winner.cls == "pth":
        return "remove the .pth file that adds %s to sys.path" % winner.entry
    return "remove %s" % path


def _case_lines(name: str, case: ShadowCase, changed: dict[str, str],
                involved: set[str], shown: set) -> list[str]:
    """The lines of one shadow case that involves ``changed`` (none when it does not)."""
    hit = [_pkg(s.path, changed) or _pkg(s.metadata, changed) for s in case.shadowed]
    broken = [r for r in case.requirements or [] if r.status in BROKEN]
    hit += [_pkg(r.consumer_metadata, changed) for r in broken]
    if not any(hit):
        return []
    involved.update(p for p in hit if p)
    s = case.shadowed[0]
    package = _pkg(s.path, changed)
    lines = ["  %s: '%s' is imported from %s, which shadows %s%s" % (
        name, case.module, case.winner.text(), s.text(), " (%s)" % package if package else "")]
    for r in broken:
        shown.add((r.consumer_metadata, r.requirement))
        consumer = _pkg(r.consumer_metadata, changed)
        lines.append("    breaks %s %s%s: requires '%s'" % (
            r.consumer, r.consumer_version or "", " (%s)" % consumer if consumer else "",
            r.requirement))
    return lines


def report_lines(exe: str, report: CheckReport, changed: dict[str, str],
                 involved: set[str]) -> list[str]:
    """What to print for one interpreter: the findings involving ``changed`` (the
    packages involved are added to ``involved``)."""
    shadowing = report.shadowing or Shadowing.make(modules=[], hidden_namespaces=[],
                                                   distributions=[], violations=[])
    commands = {f.details.get("module"): f.details.get("command") for f in report.findings
                if f.kind == "shadowed-module"}
    name = os.path.basename(exe)
    lines: list[str] = []
    shown: set = set()
    for case in shadowing.modules or []:
        if case.severity == "info":
            continue
        more = _case_lines(name, case, changed, involved, shown)
        if more:
            lines += more + ["    fix: %s" % _fix(exe, case.winner, commands.get(case.module))]
    for v in shadowing.violations or []:
        package = _pkg(v.consumer_metadata, changed)
        if not package or (v.consumer_metadata, v.requirement) in shown:
            continue
        involved.add(package)
        lines.append("  %s: %s %s (%s) requires '%s', but %s %s is installed in %s" % (
            name, v.consumer, v.consumer_version or "", package, v.requirement,
            v.requires, v.installed, v.installed_location))
    return lines


def main(argv: list[str]) -> int:
    """Print the report for the packages whose ``.list`` files are given (after
    ``--changes FILE``: what apt said it does to them); always 0."""
    try:
        changes = None
        if argv[:1] == ["--changes"]:
            changes = read_changes(argv[1])
            argv = argv[2:]
        changed = changed_paths(argv)
        if not changed:
            return 0
        # root runs them: never one that another user may change (targets.untrusted)
        executables = [exe for exe, _aliases in machine_interpreters(("/usr/bin",))
                       if not untrusted(exe)]
        reports = run_checks(executables)
        lines: list[str] = []
        involved: set[str] = set()
        for exe in executables:
            if exe in reports:
                lines.extend(report_lines(exe, reports[exe], changed, involved))
        if lines:
            print(header(involved, changes))
            print("\n".join(lines))
        failing = [x for exe in executables if exe in reports
                   for x in render_startup.hook_lines(exe, reports[exe], changed)]
        if failing:
            print("\n".join([render_startup.hook_header(changes)] + failing))
        suspect = [x for exe in executables if exe in reports
                   for x in render_startup.hook_suspect_lines(exe, reports[exe], changed)]
        if suspect:
            print("\n".join([render_startup.suspect_header(changes)] + suspect))
        sys.stdout.flush()
    except Exception:
        failopen.swallowed("the apt hook's report")  # an apt hook never fails apt
    return 0


def header(involved: set[str], changes: dict[str, str] | None) -> str:
    """The report's first line: the packages involved, with what apt did to each when it
    said (``changes``), else as dpkg's run left them."""
    if changes is None:
        return ("sitewarden: local Python copies affect what this dpkg run installed (%s):"
                % ", ".join(sorted(involved)))
    return "sitewarden: local Python copies affect what this apt run installed: %s" % (
        ", ".join("%s %s" % (p, changes.get(p, "")) if changes.get(p) else p
                  for p in sorted(involved)))
