"""Startup code is acknowledged by the administrator only, and sitewarden's own runtime is
trusted only when it is, byte for byte, the runtime of the sitewarden that checks it.

- A wheel can install a ``sitewarden.silence`` into a site directory (the deployment's
  silence file): its ``startup:`` word, though pinned to the payload's exact code,
  acknowledges nothing; the payload stays high, its finding says why, and the word's
  state is ``not-administrator``.  The same word in ``SITEWARDEN_SILENCE`` holds; in a
  Debian root, so does ``/etc/sitewarden/silence`` (root's, 0644), but not once a
  package's RECORD lists that file; ``acknowledge --deployment`` refuses startup code.
- A wheel can ship sitewarden's exact hook line with a ``sitewarden`` package of its own
  (and a deployment record: a file like any other): the payload is read and high.  So is
  a deployed runtime changed by one function (its record rewritten to match), and one
  whose source is intact but whose bytecode is not (a valid header, other code).

Every payload is harmless when run: its dangerous call sits in a function never called.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
from pathlib import Path
from typing import Dict

import pytest

from harness.spread import ROTATED, spread, target_params
from sitewarden import settings

RUN = "def _never():\n    import subprocess\n    subprocess.run(['true'])\n"
HOOK = ("import os; os.access(sitedir + '/sitewarden/__init__.py', 4) and "
        "__import__('sitewarden')\n")
TRIXIE = [p for p in target_params("roots") if p.id.startswith("trixie")]
#: Hermetic CPythons (an old and a new one among them) and Debian 13's python3 in its root.
TARGETS = [*spread(ROTATED, targets="hermetic", ways=3), *TRIXIE]


def _check(t, env=None) -> dict:
    proc = t.cli("check", "--python", t.executable, "--json", env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _about(report: dict, path: Path) -> Dict[str, dict]:
    return {f["kind"]: f for f in report["findings"] if f.get("file") == str(path)}


def _row(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _install_wheel(t, tmp: Path, site: Path, name: str, files: Dict[str, bytes],
                   record: bool = True) -> None:
    """A wheel of ``files`` (its RECORD listing each, unless not ``record``), built here,
    then unpacked into ``site`` as pip installs it, as root."""
    dist = "%s-1.0.dist-info" % name
    entries = dict(files)
    if record:
        entries[dist + "/METADATA"] = b"Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % (
            name.encode())
        entries[dist + "/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: setuptools (80.9.0)\n"
                                    b"Root-Is-Purelib: true\nTag: py3-none-any\n")
        entries[dist + "/INSTALLER"] = b"pip\n"
        rows = [_row(p, d) for p, d in entries.items()]
        entries[dist + "/RECORD"] = ("\n".join(rows + [dist + "/RECORD,,"]) + "\n").encode()
    whl = tmp / ("%s-1.0-py3-none-any.whl" % name)
    with zipfile.ZipFile(whl, "w") as z:
        for member, data in entries.items():
            z.writestr(member, data)
    with zipfile.ZipFile(whl) as z:
        for member in z.namelist():
            for d in reversed((site / member).parents):
                if len(d.parts) > len(site.parts) and not t.exists(d):
                    t.put(d, kind="dir", mode=0o755)
            t.put(site / member, data=z.read(member))


@pytest.mark.parametrize("guarded_target", TARGETS, indirect=True)
def test_startup_code_is_acknowledged_by_the_administrator_only(guarded_target, tmp_path):
    t = guarded_target
    local = t.local_dir
    pth = local / "zz-swr-payload.pth"
    payload = {"zz-swr-payload.pth": b"import zz_swr_payload\n",
               "zz_swr_payload.py": RUN.encode()}
    _install_wheel(t, tmp_path, local, "swr_payload", payload)
    (danger,) = [f for f in _check(t)["findings"]
                 if f["kind"] == "dangerous-startup-code" and f["file"] == str(pth)]
    assert danger["severity"] == "high", danger
    printed = t.cli("acknowledge", danger["id"], "--python", t.executable, "--print")
    assert printed.returncode == 0, printed.stderr
    word = printed.stdout.strip()
    assert word.startswith("startup:%s@sha256:" % pth), word

    # The wheel ships the deployment's silence file too, pinned to its exact payload.
    silence = local / settings.SITE_FILE
    _install_wheel(t, tmp_path, local, "swr_payload_ack",
                   {settings.SITE_FILE: ("%s\n" % word).encode()})
    report = _check(t)
    found = _about(report, pth)["dangerous-startup-code"]
    assert found["severity"] == "high" and not found.get("acknowledged"), found
    assert found["acknowledgement_refused"] == str(silence), found
    assert "NOT acknowledged: startup:%s@sha256:" % pth in found["message"], found
    assert "is in a site directory, where a package can put it: acknowledges no startup " \
        "code" in found["message"], found
    (ack,) = report["startup"]["acknowledgements"]
    assert ack["state"] == "not-administrator" and ack["source"] == str(silence), ack
    (unmatched,) = [f for f in report["findings"] if f["kind"] == "unmatched-acknowledgement"]
    assert unmatched["state"] == "not-administrator", unmatched
    proc = t.cli("check", "--python", t.executable, "--fail-on", "high")
    assert proc.returncode == 1, proc.stdout
    # status lists the word with its state (check's finding says what it means), and
    # exits as check's gate decides.
    status = t.cli("status", "--python", t.executable)
    assert "startup:%s@sha256:" % pth in status.stdout and "not administrator" in " ".join(
        status.stdout.split()) and status.returncode == 1, status.stdout

    # The same word from the environment holds.
    found = _about(_check(t, env={"SITEWARDEN_SILENCE": word}), pth)["dangerous-startup-code"]
    assert found["severity"] == "info" and found["acknowledged_by"] == "SITEWARDEN_SILENCE", \
        found

    # acknowledge --deployment writes no startup acknowledgement.
    proc = t.cli("acknowledge", danger["id"], "--python", t.executable, "--deployment")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "startup code is acknowledged only in %s" % settings.SYSTEM_FILE in proc.stderr, \
        proc.stderr
    assert t.read_bytes(silence) == ("%s\n" % word).encode()

    if not t.id.startswith("trixie"):
        return  # the machine's file is the host's: only a root's own is written
    # The administrator's file (root's, 0644) holds; once a package's RECORD lists it,
    # it acknowledges nothing either.
    system = Path(settings.SYSTEM_FILE)
    t.put(system.parent, kind="dir", mode=0o755)
    t.put(system, data=("%s\n" % word).encode(), mode=0o644)
    found = _about(_check(t), pth)["dangerous-startup-code"]
    assert found["severity"] == "info" and found["acknowledged_by"] == str(system), found
    rel = os.path.relpath(str(system), str(local))
    _install_wheel(t, tmp_path, local, "swr_ships_etc", {"swr_ships_etc.py": b"X = 1\n"})
    record = local / "swr_ships_etc-1.0.dist-info" / "RECORD"
    t.write_bytes(record, t.read_bytes(record) + ("%s,,\n" % rel).encode())
    report = _check(t)
    found = _about(report, pth)["dangerous-startup-code"]
    assert found["severity"] == "high" and found["acknowledgement_refused"] == str(system), \
        found
    assert "a package's record (dpkg's lists, a RECORD) names %s" % system in \
        found["message"], found


def _runtime_files(t) -> Dict[str, bytes]:
    """The deployed runtime's source files (relative to its site directory)."""
    top = t.local_dir / "sitewarden"
    proc = t.root("import os, sys\n"
                  "for d, dirs, names in os.walk(sys.argv[1]):\n"
                  "    dirs[:] = [x for x in dirs if x != '__pycache__']\n"
                  "    for n in names:\n"
                  "        print(os.path.join(d, n))\n", str(top))
    return {os.path.relpath(p, str(t.local_dir)): t.read_bytes(Path(p))
            for p in proc.stdout.decode().split()}


def _deployment_record(files: Dict[str, bytes]) -> bytes:
    return ("\n".join(_row(p, d) for p, d in sorted(files.items())
                      if not p.endswith("_deployment.record"))
            + "\nsitewarden/_deployment.record,,\n").encode()


@pytest.mark.parametrize("bare_target", TARGETS, indirect=True)
def test_a_look_alike_sitewarden_behind_its_hook_is_read_and_high(bare_target, tmp_path):
    """sitewarden's exact hook line, its package a payload, with a RECORD and a deployment
    record of its own: read, high, never sitewarden's template."""
    t = bare_target
    local = t.local_dir
    files = {"sitewarden.pth": HOOK.encode(), "sitewarden/__init__.py": RUN.encode()}
    files["sitewarden/_deployment.json"] = b"{}\n"
    files["sitewarden/_deployment.record"] = _deployment_record(files)
    _install_wheel(t, tmp_path, local, "swr_lookalike", files)
    report = _check(t)
    hook = local / "sitewarden.pth"
    (f,) = [f for f in report["startup"]["files"] if f["path"] == str(hook)]
    assert f["template"] is None, f
    danger = _about(report, hook)["dangerous-startup-code"]
    assert danger["severity"] == "high" and "starts-processes" in danger["capabilities"], danger
    assert any(e.endswith("(in sitewarden)") for e in danger["evidence"]), danger

    # Without a RECORD, only the deployment record claims it: not verified, still high.
    t.put(local / "swr_lookalike-1.0.dist-info", kind="absent")
    report = _check(t)
    (f,) = [f for f in report["startup"]["files"] if f["path"] == str(hook)]
    assert f["owner"]["kind"] == "sitewarden" and f["owner"]["verified"] is None, f
    assert "is not byte for byte this sitewarden's runtime" in f["owner"]["mismatch"], f
    assert f["template"] is None, f
    assert _about(report, hook)["dangerous-startup-code"]["severity"] == "high"


@pytest.mark.parametrize("guarded_target", TARGETS, indirect=True)
def test_a_deployed_runtime_that_is_not_ours_byte_for_byte_is_read(guarded_target):
    """The real deployment, its hook the template; one function added to its package (the
    deployment record rewritten to match): high; the source put back and its bytecode
    replaced by other code under a valid header: high (bytecode not its source's)."""
    t = guarded_target
    local = t.local_dir
    hook = local / ("sitewarden.start" if t.exists(local / "sitewarden.start")
                    else "sitewarden.pth")
    report = _check(t)
    (f,) = [f for f in report["startup"]["files"] if f["path"] == str(hook)]
    assert f["template"] == "sitewarden" and not _about(report, hook), (f, _about(report, hook))

    init = local / "sitewarden" / "__init__.py"
    original = t.read_bytes(init)
    files = _runtime_files(t)
    files["sitewarden/__init__.py"] = original + b"\n\n" + RUN.encode()
    t.write_bytes(init, files["sitewarden/__init__.py"])
    t.write_bytes(local / "sitewarden" / "_deployment.record", _deployment_record(files))
    report = _check(t)
    (f,) = [f for f in report["startup"]["files"] if f["path"] == str(hook)]
    assert f["template"] is None, f
    danger = _about(report, hook)["dangerous-startup-code"]
    assert danger["severity"] == "high", danger

    # The source as deployed, its bytecode (valid for it) another code.
    t.write_bytes(init, original)
    t.run([t.executable, "-I", "-S", "-c", FORGE, str(init), RUN])
    report = _check(t)
    (f,) = [f for f in report["startup"]["files"] if f["path"] == str(hook)]
    assert f["template"] is None, f
    unread = _about(report, hook)["unread-startup-code"]
    assert unread["severity"] == "high" and any(
        "is not its source's" in u for u in unread["unread"]), unread


#: Run by the target: write the bytecode of argv[2]'s code as argv[1]'s, its header
#: valid for argv[1] (this interpreter's magic number, the source's time and size).
FORGE = """\
import importlib.util, marshal, os, sys
source, code = sys.argv[1], sys.argv[2]
st = os.stat(source)
data = (importlib.util.MAGIC_NUMBER + bytes(4)
        + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, 'little')
        + (st.st_size & 0xFFFFFFFF).to_bytes(4, 'little')
        + marshal.dumps(compile(code, source, 'exec')))
pyc = importlib.util.cache_from_source(source)
os.makedirs(os.path.dirname(pyc), exist_ok=True)
with open(pyc, 'wb') as f:
    f.write(data)
"""
