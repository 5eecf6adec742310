"""``sitewarden acknowledge FINDING-ID``: one finding accepted as it is, machine-wide.

In a Debian root (its whole tree overlaid: ``/etc/sitewarden/silence`` is the machine's
file), with the guard deployed: a startup file nobody installed imports a module of its
own.  Acknowledging the finding by its id (a prefix of it) writes a pinned line under a
comment saying what was acknowledged; ``check`` then lists it as acknowledged and exits
0; a change to the module brings it back, saying so, and acknowledging it again
replaces the old line; a removed file leaves an acknowledgement that matches
nothing, reported; a shadow is acknowledged by name; a file others may change, and an
unknown id, and code that runs what it does not show (no pin covers it), are refused
with the reason; a silence file others may change acknowledges nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.spread import target_params
from sitewarden import settings

SILENCE = Path(settings.SYSTEM_FILE)
ROOTS = [p for p in target_params("roots") if p.id.startswith("trixie")]


def findings(t, kind=None, file=None):
    report = json.loads(t.cli("check", "--python", t.executable, "--json").stdout)
    return [f for f in report["findings"] if (kind is None or f["kind"] == kind)
            and (file is None or f.get("file") == file)]


@pytest.mark.parametrize("guarded_target", ROOTS, indirect=True)
def test_acknowledge_pins_one_finding_machine_wide(guarded_target):
    t = guarded_target
    local = t.local_dir
    pth, module = local / "zz-swr-ack.pth", local / "zz_swr_ack.py"
    t.put(module, data=b"import os\nHOME = os.environ.get('HOME')\n")
    t.put(pth, data=b"import zz_swr_ack\n")
    (found,) = findings(t, "unowned-startup-code", str(pth))
    assert found["severity"] == "medium", found
    assert t.cli("check", "--python", t.executable).returncode == 1

    proc = t.cli("acknowledge", found["id"][:9], "--python", t.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "acknowledged %s (unowned-startup-code, medium): %s" % (found["id"], pth) \
        in proc.stdout, proc.stdout
    text = t.read_bytes(SILENCE).decode()
    lines = text.splitlines()
    assert lines[0].startswith("# sitewarden acknowledge %s, " % found["id"]), text
    assert lines[1] == "#   %s, no package's record lists it" % pth, text
    assert lines[2].startswith("startup:%s@sha256:" % pth) and len(lines) == 3, text
    (after,) = findings(t, "unowned-startup-code", str(pth))
    assert after["id"] == found["id"] and after["severity"] == "info", after
    assert after["acknowledged_by"] == str(SILENCE), after
    assert t.cli("check", "--python", t.executable).returncode == 0
    proc = t.cli("acknowledge", found["id"], "--python", t.executable)
    assert proc.returncode == 0 and "is acknowledged already" in proc.stdout, proc.stdout
    assert t.read_bytes(SILENCE).decode() == text
    # A silence file others may change acknowledges nothing.
    t.chmod(SILENCE, 0o666)
    (open_file,) = findings(t, "unowned-startup-code", str(pth))
    assert open_file["severity"] == "medium", open_file
    (untrusted,) = findings(t, "unmatched-acknowledgement")
    assert untrusted["state"] == "untrusted-source", untrusted
    t.chmod(SILENCE, 0o644)

    # What it runs changes: the finding is back (its id is the startup file's: the same
    # here); acknowledging it again replaces the line.
    t.put(module, data=b"import os\nHOME = os.environ.get('HOME')\nX = 2\n")
    (back,) = findings(t, "unowned-startup-code", str(pth))
    assert back["severity"] == "medium" and back["id"] == found["id"], back
    assert back["acknowledgement_changed"] == str(SILENCE), back
    proc = t.cli("status", "--python", t.executable, "--verbose")
    assert "whose path, owner or code changed since: its findings stand" in proc.stdout, \
        proc.stdout
    proc = t.cli("acknowledge", back["id"], "--python", t.executable)
    assert "in place of the earlier acknowledgement of this file" in proc.stdout, proc.stdout
    new = t.read_bytes(SILENCE).decode()
    assert new.count("startup:") == 1 and lines[2] not in new, new
    assert new.count("# sitewarden acknowledge ") == 1, new

    # A shadow, by name.
    t.add_shadowed(["swrackshadow"])
    (shadow,) = findings(t, "shadowed-module")
    proc = t.cli("acknowledge", shadow["id"], "--python", t.executable)
    assert proc.returncode == 0 and "wrote shadow:swrackshadow" in proc.stdout, proc.stdout
    (shadow,) = findings(t, "shadowed-module")
    assert shadow["acknowledged"] is True, shadow

    # Refused: a startup file others may change; an unknown id.
    t.chmod(pth, 0o666)
    (writable,) = findings(t, "writable-startup-file", str(pth))
    proc = t.cli("acknowledge", writable["id"], "--python", t.executable)
    assert proc.returncode == 2 and "is a writable-startup-file finding, which cannot be " \
        "acknowledged (a file others may change)" in proc.stderr, proc.stderr
    assert "fix it: chmod go-w %s" % pth in proc.stderr, proc.stderr
    hidden = local / "zz-swr-hidden.pth"
    t.put(hidden, data=b"import os; exec(open(os.devnull).read())\n")
    (runs,) = findings(t, "dangerous-startup-code", str(hidden))
    proc = t.cli("acknowledge", runs["id"], "--python", t.executable)
    assert proc.returncode == 2 and "its code runs what it does not show (runs-hidden-code)" \
        in proc.stderr, proc.stderr
    proc = t.cli("acknowledge", "0123456789abcdef", "--python", t.executable)
    assert proc.returncode == 2 and "no finding 0123456789abcdef" in proc.stderr, proc.stderr

    # The file goes: its acknowledgement matches nothing, and says so.
    t.root("import os, sys; os.unlink(sys.argv[1])", str(pth))
    (gone,) = findings(t, "unmatched-acknowledgement")
    assert gone["state"] == "no-such-file" and gone["source"] == str(SILENCE), gone
    assert "matches nothing: %s does not exist" % pth in gone["message"], gone
