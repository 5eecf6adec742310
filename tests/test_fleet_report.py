"""What a person and a fleet read from ``check``, on Debian 12's python (``host``, in a
private mount namespace, guard not deployed):

- an untouched machine's ``check`` fits a screen, findings first, the marker's 15-line
  message once between ``status`` and ``check``; ``--fail-on medium`` exits 0 there;
- a distribution's dangerous ``.pth`` in /usr/local (``fastjsonx 1.0``, its RECORD
  verifying it): labelled by what was checked ("matches its RECORD"), never a bare
  "verified"; its printed fix (text and JSON: ``sitewarden quarantine ID``) works as
  printed there, with no terminal, and removes the file and its distribution (on Debian
  13 and sid too); no credentials advice without ``reads-credentials`` evidence;
- fleet JSON: ``host`` and ``time``, a structured ``owner``, a stable ``id`` per finding
  (the same on the next run and in another namespace, a new one once the file changes),
  ``writable-startup-file`` without the same path twice;
- startup lines say ``line N:``; ``check --all`` has a summary line.
"""

from __future__ import annotations

import json
import re

from harness.dists import make_dist
from harness.guarded import make_guarded
from harness.printed import runs_as_printed
from harness.spread import DEBIAN
from sitewarden.cli.render import Style, render_check_all
from sitewarden.cli.state import GuardState, Setting, TargetFailure
from sitewarden.facts.records import CheckReport

LOCAL = "/usr/local/lib/python3.11/dist-packages"
#: A payload that is harmless when a start runs it (check never does): the decoded code
#: only defines a function that would start a process.
PAYLOAD = ("import base64;exec(base64.b64decode('%s'))" % __import__("base64").b64encode(
    b"def _never():\n    import subprocess\n    subprocess.Popen(['true'])\n").decode())
PTH = LOCAL + "/fastjsonx_init.pth"
#: A line of Debian's EXTERNALLY-MANAGED message.
DEBIAN_MESSAGE = "it may be easiest to use pipx install xyz"


def _check(ns, *args):
    proc = ns.cli("check", "--python", ns.executable, *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc


def _plant(ns, payload=PAYLOAD):
    def build(stage):
        make_dist(stage, "fastjsonx", "1.0", {"fastjsonx/__init__.py": "",
                                              "fastjsonx_init.pth": payload + "\n"},
                  installer="pip")
        # Not the distribution's alone: a file of nobody's beside it stays.
        (stage / "other.txt").write_text("")
    ns.copy_in(build, ns.local_dir)


def _dangerous(report):
    return [f for f in report["findings"] if f["kind"] == "dangerous-startup-code"
            and f["file"] == PTH]


def test_an_untouched_debian_gets_a_short_answer(debian_ns):
    ns = debian_ns
    status = ns.cli("status", "--python", ns.executable)
    check = _check(ns)
    lines = check.stdout.splitlines()
    # One screen for `make check` (status, a blank line, check): about 45 lines, none
    # wider than 160 columns; the settings block (2 lines) is this suite's
    # SITEWARDEN_DEBUG, the last line of each is its verdict.
    assert len(lines) <= 30, check.stdout
    assert len(status.stdout.splitlines()) + 1 + len(lines) <= 52, status.stdout + check.stdout
    assert max(len(x) for x in (status.stdout + check.stdout).splitlines()) <= 160
    # The marker's message once, in status; check names the marker and its state.
    both = status.stdout + check.stdout
    assert both.count(DEBIAN_MESSAGE) == 1, both
    assert "To install Python packages system-wide" not in check.stdout
    # Findings first: the one low finding comes before the marker, sys.path, startup code.
    assert lines[2] == "Findings (1)" and re.match(
        r"  low    [0-9a-f]{12} the sitewarden guard", lines[3]), lines[3]
    assert lines[-1] == "verdict: 1 low; --fail-on medium: pass (exit 0)", lines[-1]
    assert "externally managed (marker" not in check.stdout  # said by the PEP 668 line
    assert "Shadowed modules: none" in lines
    assert "matches dpkg's md5sums" in check.stdout and ", verified" not in check.stdout
    # Unguarded alone is low: the default (--fail-on medium) exits 0, --fail-on low 1.
    assert check.returncode == 0
    assert _check(ns, "--fail-on", "low").returncode == 1


def test_dangerous_pth_labels_fix_and_ids(debian_ns, tmp_path):
    ns = debian_ns
    _plant(ns)
    first = json.loads(_check(ns, "--json").stdout)
    text = _check(ns).stdout
    # Labels: what was checked, never "verified" beside a finding.
    assert "[fastjsonx 1.0, matches its RECORD]" in text, text
    assert ", verified" not in text and "verified]" not in text, text
    (finding,) = _dangerous(first)
    assert finding["owner"] == {"kind": "distribution", "distribution": "fastjsonx",
                                "version": "1.0", "verified_against": "RECORD"}, finding
    assert "distribution" not in finding and "package" not in finding  # in owner, once
    files = {f["path"]: f for f in first["startup"]["files"]}
    assert files[PTH]["owner"]["checked"] == "matches its RECORD"
    # Advice follows evidence: no credential access shown, no credentials advice.
    assert "reads-credentials" not in finding["capabilities"]
    assert "rotate the credentials" not in finding["message"], finding["message"]
    # Fleet JSON: where and when, an id per finding.
    assert first["schema"] == 2 and first["host"] and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", first["time"]), first["time"]
    assert all(re.fullmatch("[0-9a-f]{16}", f["id"]) for f in first["findings"])
    assert len({f["id"] for f in first["findings"]}) == len(first["findings"])
    again = json.loads(_check(ns, "--json").stdout)
    assert [f["id"] for f in again["findings"]] == [f["id"] for f in first["findings"]]
    # The same finding in another namespace (another machine's same file): the same id.
    other = make_guarded(DEBIAN, deploy=False)
    try:
        _plant(other)
        (there,) = _dangerous(json.loads(_check(other, "--json").stdout))
        assert there["id"] == finding["id"], (there, finding)
    finally:
        other.close()
    # The file changed: a new id (and a RECORD that no longer matches).
    ns.write_bytes(PTH, (PAYLOAD + "  # changed\n").encode())
    changed = json.loads(_check(ns, "--json").stdout)
    ids = {f["id"] for f in changed["findings"] if f.get("file") == PTH}
    assert ids and finding["id"] not in ids, changed["findings"]
    ns.write_bytes(PTH, (PAYLOAD + "\n").encode())
    # writable-startup-file: the file once (``path`` only where a link leads elsewhere).
    ns.chmod(PTH, 0o666)
    writable = [f for f in json.loads(_check(ns, "--json").stdout)["findings"]
                if f["kind"] == "writable-startup-file"]
    assert writable and all("path" not in f for f in writable), writable
    ns.chmod(PTH, 0o644)

    # The printed command works as printed here, unattended, starting nothing of it.
    command = finding["command"]
    assert command == "sitewarden quarantine %s --python /usr/bin/python3" % finding["id"][:12]
    assert command in finding["message"] and command in text
    _runs_as_printed(ns, command)
    assert not ns.exists(PTH)
    assert not _dangerous(json.loads(_check(ns, "--json").stdout))


def _runs_as_printed(ns, command):
    proc = runs_as_printed(ns, command, {"SITEWARDEN_QUARANTINE_DIR": str(ns.tmp / "q")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fastjsonx 1.0 is uninstalled" in proc.stdout, proc.stdout


def test_credentials_advice_only_with_credential_evidence(debian_ns):
    ns = debian_ns
    _plant(ns, "import os, json; 0 and json.dumps(dict(os.environ))")
    (finding,) = _dangerous(json.loads(_check(ns, "--json").stdout))
    assert "reads-credentials" in finding["capabilities"], finding
    assert "rotate the credentials this user could read" in finding["message"]


def test_startup_lines_and_the_check_all_summary(debian_ns):
    ns = debian_ns
    _plant(ns, "import os")
    text = _check(ns, "--verbose").stdout
    assert "    line 1: runs import os" in text, text
    proc = ns.cli("check", "--all", "--json")
    items = []
    for i in json.loads(proc.stdout)["interpreters"]:
        if "error" in i:
            items.append(TargetFailure(i["python"], i["error"]))
            continue
        report = CheckReport.from_json(i)  # completed as the CLI completes it
        report.guard = GuardState.from_json(i["guard"])
        report.environment = [Setting.from_json(x) for x in i["environment"]]
        report.silence_files = [Setting.from_json(x) for x in i["silence_files"]]
        items.append(report)
    shown = render_check_all(items, Style(False)).splitlines()
    n = len(items)
    assert re.fullmatch(r"sitewarden check: %d python3 interpreters?: \d+ clean, \d+ with "
                        r"findings \(\d+ findings?\)" % n, shown[0]), shown[0]
    assert shown[2].startswith("sitewarden check: /usr/bin/python3"), shown[:3]


def test_the_printed_uninstall_works_as_printed_on_13_and_sid(root_ns):
    """Debian 13's and sid's pythons: the same fix, as printed, is taken there."""
    ns = root_ns
    _plant(ns)
    pth = "%s/fastjsonx_init.pth" % ns.local_dir
    report = json.loads(_check(ns, "--json").stdout)
    (finding,) = [f for f in report["findings"] if f["kind"] == "dangerous-startup-code"
                  and f["file"] == pth]
    command = finding["command"]
    assert command == "sitewarden quarantine %s --python %s" % (finding["id"][:12],
                                                               ns.executable)
    assert command in _check(ns).stdout
    _runs_as_printed(ns, command)
    assert not ns.exists(pth)
