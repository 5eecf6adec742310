"""How the reports read: one screen, ids a person can use, one verdict, each fact once.

On Debian 12's python (in its namespace) and the roots' pythons, with the guard deployed
and findings of every sort planted (a high payload, a shadow that breaks a distro
requirement, an unowned ``.pth``, a sys.path directory every user may change): ``check``,
``status``, ``check --all``, ``status --all``, their ``--verbose``, an install-time report
and a runtime warning print no line wider than 160 characters; the ids ``check`` shows are
the JSON's; ``check`` and ``status`` end with the same verdict line, ``status`` pointing to
``check``; every JSON has its host and time, no directory twice in ``layout``, a ``fix``
on every finding.  A marker a Debian package ships and someone removed is a medium
finding naming the package and the command that restores it, and ``status`` says "NOT
guarded"; a diverted one (the opt-out) is not.  In the roots (rotated: /etc is the
test's there), ``acknowledge`` refuses a short prefix and the kinds it cannot take,
naming the fix;
an acknowledged finding says where and when only; a pin that stops holding names the
id to acknowledge again; ``--remove`` takes the line and its comment out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.dists import make_dist
from harness.guarded import joined_warnings, make_guarded
from harness.printed import runs_as_printed
from harness.roots import RootTarget
from harness.spread import EVERY, ROTATED, spread
from harness.wheels import pip_dir, pip_versions_for
from sitewarden.facts.text import WIDTH, unwrap_lines
from test_blocking_debian import can_install
from test_install_startup_report import build_wheel

#: A payload check rates high (it starts processes); it never does, whoever starts the
#: interpreter: ``0 and``.
PAYLOAD = b"import subprocess; 0 and subprocess.Popen(['true'])\n"
MARKER_KINDS = ("externally-managed", "not-externally-managed", "virtualenv")
FINDING_LINE = re.compile(r"^  (high|medium|low|info) +([0-9a-f]{12}) ")
SEVERITIES = ("high", "medium", "low", "info")


def plant(t) -> None:
    """Findings of every sort in ``t``: a high payload, a shadow breaking a distro
    requirement, an unowned ``.pth``, a sys.path directory every user may change."""
    local = t.local_dir
    t.put(local / "swr_wide_payload.pth", data=PAYLOAD)
    t.put(local / "swr_wide_mod.py", data=b"X = 1\n")
    t.put(local / "swr_wide_unowned.pth", data=b"import swr_wide_mod\n")
    wide_open = t.tmp / "swr-wide-open"
    t.put(wide_open, "dir")
    t.chmod(wide_open, 0o777)
    t.put(local / "swr_wide_path.pth", data=("%s\n" % wide_open).encode())
    t.add_shadowed(["swr_wide_shadow"])
    t.copy_in(lambda stage: make_dist(stage, "swr-wide-consumer", "1.0",
                                      {"swr_wide_consumer.py": ""},
                                      requires=["swr-wide-shadow<2"]), t.distro_dir)


def too_wide(text: str) -> list:
    return [line for line in text.splitlines() if len(line) > WIDTH]


def counted(counts: dict) -> str:
    return ", ".join("%d %s" % (counts[s], s) for s in SEVERITIES if counts.get(s))


def cli(t, *args: str, rc=(0, 1)):
    proc = t.cli(*args)
    assert proc.returncode in ((rc,) if isinstance(rc, int) else rc), (
        args, proc.stdout[-3000:], proc.stderr)
    return proc


def has_when(data: dict) -> bool:
    return bool(data.get("host")) and bool(re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", data.get("time") or ""))


@pytest.mark.parametrize("python", spread(EVERY, targets="debian"))
def test_a_machine_with_findings_fits_one_screen(python, tmp_path):
    t = make_guarded(python, deploy=True)
    try:
        plant(t)
        exe = t.executable
        one = ["--python", exe]
        texts = {" ".join(argv): cli(t, *argv, *([] if "--all" in argv else one), rc=1).stdout
                 for argv in (["check"], ["status"], ["check", "--all"], ["status", "--all"],
                              ["check", "--verbose"], ["status", "--verbose"])}
        report = json.loads(cli(t, "check", *one, "--json", rc=1).stdout)
        status = json.loads(cli(t, "status", *one, "--json", rc=1).stdout)
        alls = {c: json.loads(cli(t, c, "--all", "--json", rc=1).stdout)
                for c in ("check", "status")}

        # An install-time report and a runtime warning, on the same machine.
        pips = [v for v in pip_versions_for(t.version) if can_install(v, t.version)]
        whl = build_wheel(tmp_path, "swr-wide-install", "1.0", {
            "swr_wide_install/__init__.py": "", "swr_wide_install_init.pth": PAYLOAD.decode()})
        tmp_path.chmod(0o755)
        proc = t.python("-m", "pip", "install", "--no-index", "--no-deps",
                        "--break-system-packages", str(whl),
                        env={"PYTHONPATH": str(pip_dir(pips[-1])), "PIP_ROOT_USER_ACTION":
                             "ignore", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        assert proc.returncode == 0 and "warning: dangerous-startup-code" in proc.stderr, (
            proc.stdout + proc.stderr)
        texts["install report"] = proc.stderr
        proc = t.python("-c", "import swr_wide_shadow")
        assert "ShadowWarning: 'swr_wide_shadow'" in proc.stderr, proc.stderr
        texts["runtime warning"] = proc.stderr
        assert "swr-wide-consumer 1.0 requires" in joined_warnings(proc.stderr), proc.stderr

        # One screen: no line over 160 characters, anywhere.
        wide = {name: too_wide(text) for name, text in texts.items()}
        assert not any(wide.values()), wide

        # Ids: what the text shows is the JSON's, 12 digits of it.
        check = texts["check"]
        shown = [m.group(2) for m in map(FINDING_LINE.match, check.splitlines()) if m]
        findings = [f for f in report["findings"] if f["kind"] not in MARKER_KINDS]
        assert sorted(shown) == sorted(f["id"][:12] for f in findings), check
        assert {"dangerous-startup-code", "shadowed-module", "unowned-startup-code",
                "writable-path-entry"} <= {f["kind"] for f in findings}  # the shadow: one,
        # with the requirement it breaks
        # Each fact once: a startup file with a finding names it; its lines are --verbose's.
        payload = "%s/swr_wide_payload.pth" % t.local_dir
        (danger,) = [f for f in findings if f["kind"] == "dangerous-startup-code"
                     and f["file"] == payload]
        assert "%s [owned by nobody] (finding %s)" % (payload, danger["id"][:12]) in check, check
        assert "does: starts-processes" not in check, check
        assert "does: starts-processes" in texts["check --verbose"]
        assert "FINDING-ID" not in "".join(texts.values())

        # One verdict line, last; the same in status, which points to check.
        lines = check.splitlines()
        assert [x for x in lines if x.startswith("verdict:")] == [lines[-1]], check
        verdict = report["verdict"]
        assert verdict["exit"] == 1 and verdict["fail_on"] == "medium", verdict
        assert verdict["counts"] == {s: len([f for f in findings if f["severity"] == s])
                                     for s in SEVERITIES}, verdict
        assert lines[-1].startswith("verdict: %s; --fail-on medium: FAIL (exit 1); next: " % (
            counted(verdict["counts"]))), lines[-1]
        assert status["verdict"]["counts"] == verdict["counts"], status["verdict"]
        assert status["verdict"]["next"] == "sitewarden check --python %s" % exe
        assert unwrap_lines(texts["status"]).splitlines()[-1] == (
            "verdict: %s; check --fail-on medium: FAIL (exit 1); next: sitewarden check "
            "--python %s" % (counted(verdict["counts"]), exe)), texts["status"]

        # Every JSON: where and when; no directory twice; a fix on every finding.
        for data in (report, status, *alls.values(), *alls["check"]["interpreters"],
                     *alls["status"]["interpreters"]):
            assert has_when(data), sorted(data)
        layout = report["layout"]
        for key in ("stdlib", "local", "system", "distro"):
            assert len(set(layout[key])) == len(layout[key]), (key, layout[key])
        for f in report["findings"]:
            assert "fix" in f and (f["fix"] or f["fix_reason"]), f
        (path_entry,) = [f for f in findings if f["kind"] == "writable-path-entry"]
        assert path_entry["fix"] == "chmod go-w %s" % (t.tmp / "swr-wide-open"), path_entry
    finally:
        t.close()


def _package_of(t, path: str) -> str:
    proc = t.run(["dpkg", "-S", path])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split(":")[0].strip()


@pytest.mark.parametrize("python", spread(EVERY, targets="debian"))
def test_a_removed_marker_is_a_finding(python):
    """A real dpkg database (Debian 12's, the roots'): the marker a package ships,
    removed with ``rm``, is a medium finding naming the package and the command that
    restores it; ``status`` says "NOT guarded"; ``acknowledge`` refuses it, naming its
    fix.  Unguarded, the advice says sudo and the Debian package.  In a root, the fix run
    as printed restores the marker, and a marker diverted with ``dpkg-divert`` (the
    opt-out) is no finding."""
    t = make_guarded(python, deploy=False)
    try:
        exe = t.executable
        report = json.loads(cli(t, "check", "--python", exe, "--json").stdout)
        (guard,) = [f for f in report["findings"] if f["kind"] == "guard-not-active"]
        # The full path of the interpreter, and the command as sudo finds it (the roots
        # run the CLI as `sitewarden`, the host as `PYTHON -m sitewarden`); root needs no
        # sudo (test_exit_statuses_on_the_host: another user's fix has it).
        assert re.fullmatch(r"(sitewarden|/\S+ -m sitewarden) install --python %s" % (
            re.escape(exe)), guard["fix"]), guard
        assert "Debian package sitewarden" in guard["message"], guard
        marker = report["marker"]["marker_path"]
        package = _package_of(t, marker)
        t.put(Path(marker), "absent")

        report = json.loads(cli(t, "check", "--python", exe, "--json", rc=1).stdout)
        kinds = [f["kind"] for f in report["findings"]]
        assert "not-externally-managed" not in kinds, kinds
        (removed,) = [f for f in report["findings"] if f["kind"] == "marker-removed"]
        assert removed["severity"] == "medium" and removed["package"] == package, removed
        assert removed["fix"] == "apt-get install --reinstall -y %s" % package, removed
        assert package in removed["message"] and report["marker"]["removed_from"] == package
        text = cli(t, "check", "--python", exe, rc=1).stdout
        assert "PEP 668: marker %s: removed (finding %s)" % (marker, removed["id"][:12]) in text
        status = cli(t, "status", "--python", exe, rc=1).stdout
        assert "NOT guarded: the marker was removed" in status, status
        assert "apt-get install --reinstall -y %s" % package in unwrap_lines(status), status
        everything = unwrap_lines(cli(t, "status", "--all", rc=1).stdout)
        (line,) = [x for x in everything.splitlines() if x.startswith("/") and re.search(
            r"(^| )%s[ ;)]" % re.escape(exe), x)]  # python3 is listed as python3.X's alias
        assert "NOT guarded: the marker was removed" in line and ": guarded" not in line, line
        proc = t.cli("acknowledge", removed["id"][:12], "--python", exe, "--print")
        assert proc.returncode == 2 and "marker-removed finding" in proc.stderr, proc.stderr
        assert "fix it: apt-get install --reinstall -y %s" % package in proc.stderr

        if isinstance(python, RootTarget):  # its own dpkg database: apt and dpkg may write
            # The fix, run as printed: apt fetches the package from Debian's mirror.  The
            # root's package lists are as old as the cached root: once its release has
            # moved on, the version they name is gone (404), as on a machine whose lists
            # are stale; then, as its administrator would, `apt-get update` and again.
            sbin = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"}
            proc = runs_as_printed(t, removed["fix"], sbin, shim=False)
            if proc.returncode and re.search(r"Failed to fetch|404", proc.stdout + proc.stderr):
                assert runs_as_printed(t, "apt-get update -qq", sbin, shim=False).returncode == 0
                proc = runs_as_printed(t, removed["fix"], sbin, shim=False)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            report = json.loads(cli(t, "check", "--python", exe, "--json").stdout)
            assert "marker-removed" not in [f["kind"] for f in report["findings"]], report
            assert report["marker"]["marker_path"] == marker and report["marker"].get(
                "applies"), report["marker"]
            proc = t.run(["dpkg-divert", "--local", "--rename", "--add", marker])
            assert proc.returncode == 0, proc.stdout + proc.stderr
            report = json.loads(cli(t, "check", "--python", exe, "--json").stdout)
            assert "marker-removed" not in [f["kind"] for f in report["findings"]], report
            assert "removed_from" not in report["marker"], report["marker"]
    finally:
        t.close()


# ------------------------------------------------------------------ acknowledge

SCENARIOS = ("acknowledged", "refused", "remove")


@pytest.mark.parametrize("python, scenario", spread(ROTATED, list(SCENARIOS),
                                                    targets="roots"))
def test_acknowledge_says_what_it_did(python, scenario):
    """In the roots (their /etc overlaid: the machine's silence file is the test's),
    each scenario on one of Debian 13's and sid's pythons."""
    t = make_guarded(python, deploy=True)
    try:
        plant(t)
        exe = t.executable
        silence = Path("/etc/sitewarden/silence")
        report = json.loads(cli(t, "check", "--python", exe, "--json").stdout)
        by_kind = {f["kind"]: f for f in report["findings"]}
        unowned = by_kind["unowned-startup-code"]

        if scenario == "refused":
            for short in (unowned["id"][:7], "xyz12345"):
                proc = t.cli("acknowledge", short, "--python", exe)
                assert proc.returncode == 2, proc.stdout + proc.stderr
                assert "a finding id needs 8 hex digits or more" in proc.stderr, proc.stderr
            entry = by_kind["writable-path-entry"]
            proc = t.cli("acknowledge", entry["id"][:8], "--python", exe)
            assert proc.returncode == 2 and not t.exists(silence), proc.stdout + proc.stderr
            assert "is a writable-path-entry finding, which cannot be acknowledged" in \
                proc.stderr and "fix it: %s" % entry["fix"] in proc.stderr, proc.stderr
            return

        proc = t.cli("acknowledge", unowned["id"][:8], "--python", exe)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        shadow = by_kind["shadowed-module"]
        proc = t.cli("acknowledge", shadow["id"][:12], "--python", exe)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        text = unwrap_lines(cli(t, "check", "--python", exe).stdout)
        stamp = r"on \d{4}-\d\d-\d\d \d\d:\d\d UTC"
        for f, what in ((unowned, unowned["file"]), (shadow, "swr_wide_shadow")):
            line = re.search(r"^  info   %s %s \(%s\): acknowledged in %s %s$" % (
                f["id"][:12], re.escape(what), f["kind"], re.escape(str(silence)), stamp),
                text, re.M)
            assert line, text  # only that: where and when, no advice
        settings = text[text.index("\nsettings:\n"):]
        assert "\n  %s: shadow:swr_wide_shadow acknowledged\n" % silence in settings, settings
        assert re.search(r"\n  %s: startup:%s@sha256:[0-9a-f]{12}\.\.\. acknowledged\n" % (
            re.escape(str(silence)), re.escape(unowned["file"])), settings), settings
        assert "not understood" not in settings, settings

        if scenario == "acknowledged":
            # What it runs changes: the pin no longer holds; the text names the id.
            t.put(t.local_dir / "swr_wide_mod.py", data=b"X = 2\n")
            report = json.loads(cli(t, "check", "--python", exe, "--json").stdout)
            (back,) = [f for f in report["findings"] if f["kind"] == "unowned-startup-code"]
            assert back["severity"] == "medium", back
            assert back["message"].endswith("(sitewarden acknowledge %s)" % back["id"][:12])
            text = cli(t, "check", "--python", exe).stdout
            assert "sitewarden acknowledge %s" % back["id"][:12] in text and \
                "FINDING-ID" not in text, text
            return

        proc = t.cli("acknowledge", "--remove", unowned["id"][:8], "--python", exe)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.startswith("removed from %s:\n  # sitewarden acknowledge %s, " % (
            silence, unowned["id"])), proc.stdout
        left = t.read_bytes(silence).decode()
        assert unowned["id"] not in left and unowned["file"] not in left, left
        assert left.splitlines()[-1] == "shadow:swr_wide_shadow", left
        proc = t.cli("acknowledge", "--remove", unowned["file"], "--python", exe)
        assert proc.returncode == 1 and "no acknowledgement of" in proc.stderr, proc.stderr
        proc = t.cli("acknowledge", "--remove", "shadow:swr_wide_shadow", "--python", exe)
        assert proc.returncode == 0 and t.read_bytes(silence).decode() == "", proc.stdout
    finally:
        t.close()
