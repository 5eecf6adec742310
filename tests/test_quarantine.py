"""A fix never runs what it fixes: every printed fix for startup code or a shadow, run
exactly as printed with no terminal and stdin closed (``harness.printed``), removes
it, and the payload runs zero more times; ``sitewarden quarantine --restore`` puts it
back byte for byte.

On every target (the hermetic CPythons 3.8-3.13, Debian 12's python in a namespace,
Debian 13's and sid's in their roots):

- a planted payload: a distribution whose ``.pth`` imports its module, which appends a
  line to a counter file each time it runs (and could start a process: high); the fix
  ``check`` prints (text and JSON, the same) is ``sitewarden quarantine ID --python
  EXE``: it moves the ``.pth``, its module and the whole distribution (its RECORD
  vouches for each file) into the quarantine without starting the interpreter; the
  counter stays as it was, the next ``check`` has no such file; ``--restore`` puts
  every byte and mode back, and ``check`` finds the payload again, with the same id;
- a shadow (a local ``six`` 1.15.0 under a distro ``httplib2`` requiring ``six>=1.16``)
  is one finding with one id, the broken requirement inside it (``breaks``), and one
  fix, the same in ``check``, its JSON and the runtime warning; acknowledging
  ``shadow:six`` acknowledges what it breaks (``check`` exits 0, and says so); the fix,
  run as printed, removes the local copy and leaves the distro's untouched.

On Debian's pythons (12 in a namespace, 13, sid's 3.14 and 3.15 in their roots): the
install-time report of a pip install of that payload names the same fix, which works as
printed and runs nothing.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from harness.dists import make_dist
from harness.guarded import joined_warnings
from harness.printed import runs_as_printed
from harness.spread import target_params
from harness.wheels import pip_dir, pip_versions_for
from sitewarden.facts.text import unwrap_lines
from test_blocking_debian import can_install
from test_install_startup_report import build_wheel

#: The payload's module: one line in the counter file at each run; a process it could
#: start (never: a function no one calls) makes its .pth high.
MODULE = ("import subprocess\nwith open(%r, 'a') as counter:\n    counter.write('ran\\n')\n\n\n"
          "def _never():\n    subprocess.Popen(['true'])\n")
PTH = "swq_payload.pth"
FIX = re.compile(r"sitewarden quarantine ([0-9a-f]{12}) --python (\S+)")


def _counter(t) -> Path:
    return t.tmp / "swq-counter"


def _runs(t) -> int:
    """How many times the payload ran."""
    path = _counter(t)
    return len(path.read_text().splitlines()) if path.exists() else 0


def _quarantine_env(t) -> dict:
    """Where the tests keep quarantines: the target's staging directory (on the host,
    so never /var/lib/sitewarden of the machine running the tests)."""
    return {"SITEWARDEN_QUARANTINE_DIR": str(t.tmp / "quarantine")}


def _check(t, *args, env=None):
    proc = t.cli("check", "--python", t.executable, *args, env=env)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc


def _report(t, env=None) -> dict:
    return json.loads(_check(t, "--json", env=env).stdout)


def _about(report, **details):
    return [f for f in report["findings"]
            if all(f.get(k) == v for k, v in details.items())]


def plant(t) -> None:
    """``swq-payload 1.0`` in the target's local directory, as pip leaves it."""
    def build(stage):
        make_dist(stage, "swq-payload", "1.0", {
            "swq_payload/__init__.py": MODULE % str(_counter(t)),
            PTH: "import swq_payload\n"}, installer="pip")
    t.copy_in(build, t.local_dir)


def test_startup_fix_runs_as_printed_and_restores(bare_target):
    t = bare_target
    plant(t)
    pth = "%s/%s" % (t.local_dir, PTH)
    assert _runs(t) == 0
    proc = t.python("-c", "pass")  # a normal start runs it: it is live
    assert proc.returncode == 0 and _runs(t) == 1, proc.stderr
    before = t.tree_digest(t.local_dir)

    report = _report(t)
    (finding,) = _about(report, kind="dangerous-startup-code", file=pth)
    command = finding["command"]
    assert command == "sitewarden quarantine %s --python %s" % (finding["id"][:12],
                                                               t.executable), finding
    assert command in finding["message"], finding
    text = _check(t).stdout
    assert command in text, text
    assert "-m pip" not in text and "\x00" not in text, text

    proc = runs_as_printed(t, command, _quarantine_env(t))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _runs(t) == 1, "the fix ran the payload"
    assert "swq-payload 1.0 is uninstalled" in proc.stdout, proc.stdout
    assert not t.exists(pth) and not t.exists(t.local_dir / "swq_payload-1.0.dist-info")
    assert not t.exists(t.local_dir / "swq_payload"), proc.stdout  # emptied, removed
    assert not _about(_report(t), file=pth)
    where = Path(re.search(r"undo: sitewarden quarantine --restore (\S+)", proc.stdout)
                 .group(1))
    assert stat.S_IMODE(os.lstat(where).st_mode) == 0o700, where
    record = json.loads((where / "record.json").read_text())
    assert record["finding"]["id"] == finding["id"] and record["interpreter"] == \
        t.executable, record
    assert {f["path"] for f in record["files"]} >= {pth}, record
    assert all(f["state"] == "moved" and len(f["sha256"] or "") == 64
               for f in record["files"]), record

    # The undo, as printed: byte for byte, modes too; check finds it again, same id.
    undo = re.search(r"undo: (.+)", proc.stdout).group(1)
    proc = runs_as_printed(t, undo, _quarantine_env(t))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert t.tree_digest(t.local_dir) == before
    assert not where.exists()
    (again,) = _about(_report(t), kind="dangerous-startup-code", file=pth)
    assert again["id"] == finding["id"], again
    assert _runs(t) == 1
    proc = runs_as_printed(t, "sitewarden quarantine --list", _quarantine_env(t))
    assert proc.returncode == 1 and "no quarantine in" in proc.stdout, proc.stdout


def _shadow(t) -> None:
    def distro(stage):
        make_dist(stage, "six", "1.16.0", {"six.py": "X = 16\n"})
        make_dist(stage, "httplib2", "0.20.4", {"httplib2/__init__.py": ""},
                  requires=["six>=1.16"])

    def local(stage):
        make_dist(stage, "six", "1.15.0", {"six.py": "X = 15\n"}, installer="pip")
    t.copy_in(distro, t.distro_dir)
    t.copy_in(local, t.local_dir)


def test_a_shadow_is_one_finding_with_its_fix(guarded_target):
    t = guarded_target
    _shadow(t)
    status, report, text = t.cli_check()
    assert status == 1, text
    (finding,) = _about(report, module="six")
    assert finding["kind"] == "shadowed-module" and finding["severity"] == "high", finding
    assert finding["breaks"] == [{
        "consumer": "httplib2", "consumer_version": "0.20.4", "consumer_class": "distro",
        "requirement": "six>=1.16", "installed": "1.15.0", "status": "violated"}], finding
    assert not _about(report, kind="requirement-violated"), report["findings"]
    command = finding["command"]
    assert command == "sitewarden quarantine %s --python %s" % (finding["id"][:12],
                                                               t.executable)
    assert command in text and "httplib2 0.20.4 (distro) requires 'six>=1.16'" in text, text
    # The runtime warning names the same command.
    proc = t.python("-c", "import six")
    assert "consider removing it (%s)" % command in joined_warnings(proc.stderr), proc.stderr
    local = t.tree_digest(t.local_dir)  # six's bytecode too, now

    # Acknowledged by name: the one finding is info, with what it breaks; exit 0.
    env = {"SITEWARDEN_SILENCE": "shadow:six"}
    status, report, text = t.cli_check(env=env)
    assert status == 0, text
    (acked,) = _about(report, module="six")
    assert acked["id"] == finding["id"] and acked["severity"] == "info", acked
    assert acked["acknowledged"] is True and acked["unacknowledged_severity"] == "high"
    assert "the requirement it breaks is acknowledged with it" in acked["message"], acked
    assert command not in acked["message"], acked
    assert not [f for f in report["findings"] if f["severity"] != "info"
                and f["kind"] not in ("guard-not-active",)], report["findings"]

    # The fix, as printed: the local copy goes whole, the distro's stays as it was.
    distro = t.tree_digest(t.distro_dir)
    proc = runs_as_printed(t, command, _quarantine_env(t))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not t.exists(t.local_dir / "six.py")
    assert not t.exists(t.local_dir / "six-1.15.0.dist-info")
    assert t.tree_digest(t.distro_dir) == distro
    assert not _about(_report(t), module="six")
    proc = runs_as_printed(t, "sitewarden quarantine --restore %s" % finding["id"][:12],
                           _quarantine_env(t))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert t.tree_digest(t.local_dir) == local


@pytest.mark.parametrize("guarded_target", target_params("debian"), indirect=True)
def test_the_install_reports_fix_runs_as_printed(guarded_target, tmp_path):
    """pip (the newest that installs there) installs the payload's wheel: the report's
    hint is check's fix, and it works as printed; the payload never runs."""
    t = guarded_target
    tmp_path.chmod(0o755)
    whl = build_wheel(tmp_path, "swq-payload", "1.0", {
        "swq_payload/__init__.py": MODULE % str(_counter(t)), PTH: "import swq_payload\n"})
    new = [v for v in pip_versions_for(t.version) if can_install(v, t.version)][-1]
    proc = t.python("-m", "pip", "install", "--no-index", "--no-deps",
                    "--break-system-packages", str(whl),
                    env={"PYTHONPATH": str(pip_dir(new))})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hint = re.search(r"hint: take it out of every start, without starting this "
                     r"interpreter:\n    (.+?)\n    \(sitewarden quarantine --restore ",
                     unwrap_lines(proc.stderr))  # the report's lines fit 160 columns
    assert hint, proc.stderr
    command = hint.group(1)
    pth = "%s/%s" % (t.local_dir, PTH)
    (finding,) = _about(_report(t), kind="dangerous-startup-code", file=pth)
    assert command == finding["command"], (command, finding)
    proc = runs_as_printed(t, command, _quarantine_env(t))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _runs(t) == 0, "the fix ran the payload"
    assert not t.exists(pth) and not t.exists(t.local_dir / "swq_payload-1.0.dist-info")
    assert not _about(_report(t), file=pth)


def test_quarantine_refuses_what_it_cannot_do_safely(make_hermetic):
    """Refused, exit 2, nothing moved: a finding no move fixes, a quarantine directory
    that is a link; ``--restore`` refused, nothing put back, when a quarantined copy
    changed or its place holds other content; ``--list`` names each quarantine."""
    from harness.interpreters import pyenv_interpreters

    t = make_hermetic(pyenv_interpreters()[-1])
    plant(t)
    pth = "%s/%s" % (t.local_dir, PTH)
    report = _report(t)
    (finding,) = _about(report, kind="dangerous-startup-code", file=pth)
    (unguarded,) = _about(report, kind="guard-not-active")
    env = _quarantine_env(t)

    proc = t.cli("quarantine", unguarded["id"], "--python", t.executable, env=env)
    assert proc.returncode == 2 and "not fixed by moving files" in proc.stderr, proc.stderr
    link = t.tmp / "elsewhere"
    link.mkdir(mode=0o700)
    (t.tmp / "linked").symlink_to(link)
    proc = t.cli("quarantine", finding["id"], "--python", t.executable,
                 env={"SITEWARDEN_QUARANTINE_DIR": str(t.tmp / "linked")})
    assert proc.returncode == 2 and "not a directory only this user may enter" in \
        proc.stderr, proc.stderr
    assert t.exists(pth) and not list(link.iterdir())

    proc = t.cli("quarantine", finding["id"][:8], "--python", t.executable, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = t.cli("quarantine", "--list", env=env)
    assert listed.returncode == 0 and "%s (dangerous-startup-code) of %s, " % (
        finding["id"][:12], t.executable) in listed.stdout and pth in listed.stdout, listed
    where = Path(re.search(r"undo: sitewarden quarantine --restore (\S+)", proc.stdout)
                 .group(1))
    record = json.loads((where / "record.json").read_text())
    (kept,) = [f for f in record["files"] if f["path"] == pth]
    stored = where / kept["stored"]
    data = stored.read_bytes()
    stored.write_bytes(data + b"# changed in the quarantine\n")
    proc = t.cli("quarantine", "--restore", str(where), env=env)
    assert proc.returncode == 2 and "is not what was moved" in proc.stderr, proc.stderr
    assert not t.exists(pth) and not t.exists(t.local_dir / "swq_payload")
    stored.write_bytes(data)
    t.put(Path(pth), data=b"import os\n")
    proc = t.cli("quarantine", "--restore", finding["id"][:8], env=env)
    assert proc.returncode == 2 and "exists now with other content" in proc.stderr, proc.stderr
    assert t.read_bytes(Path(pth)) == b"import os\n"
    t.put(Path(pth), kind="absent")
    proc = t.cli("quarantine", "--restore", finding["id"][:8], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert t.read_bytes(Path(pth)) == b"import swq_payload\n"
