"""Hostile startup files never stop ``check``: it reads each once, never blocks, never raises.

Planted at once beside a dangerous ``.pth`` (``import os; 0 and os.system(...)``) in the
site directory of every target (hermetic CPython 3.8-3.13, Debian 12's python, the roots'
3.13, 3.14 and 3.15), each a case that crashed or hung ``check``'s probe or forged its
text report:

- a NUL byte in a path line (``site`` skips the line: ``os.path.exists()`` says False;
  3.15 prints that it does not exist) and in an import line (the line fails at every
  start);
- a ``.pth`` linked to ``/proc/self/environ`` (its size says empty, a read returns the
  reading process's environment: a pseudo file, its lines not shown);
- a FIFO and a directory named ``*.pth``;
- names holding a newline (made to forge a finding's line) and a byte that is not UTF-8;
- a symbolic link loop and a broken link named ``*.pth`` (``site`` cannot open them).

``check --json`` answers within seconds (the probe's own limit is 120 s), exits 1 (a
finding), not 2 (no report), still reports the dangerous ``.pth`` and names each hostile
file in a finding; the text report shows the names escaped, no forged line.  Without the
FIFO (a normal start would hang on it), the emulated start is the real one: ``check``'s
report is the live probe's (``GuardedPython.check``), the line after a NUL path line
added to ``sys.path`` as ``site`` adds it.
"""

from __future__ import annotations

import json
import time

#: The newline name: what follows its newline would read as a finding of its own.
FORGED = "swr-nl\n  high   swr-forged finding.pth"
UNDECODABLE = "swr-bad\udcffname.pth"  # the byte 0xff, as os.listdir() names it
DANGER = b"import os; 0 and os.system('true')\n"


def _plant(t) -> dict:
    """The hostile files and the dangerous one in the target's site directory:
    ``{name: the finding kind expected for it}``."""
    local = t.local_dir
    files = {
        "swr-danger.pth": ("file", DANGER),
        "swr-nul-path.pth": ("file", b"/swr-no-such-dir\n/swr\x00dir\n"),
        "swr-nul-import.pth": ("file", b"import os\x00; os.getcwd()\n"),
        "swr-environ.pth": ("symlink", b"/proc/self/environ"),
        "swr-dir.pth": ("dir", b""),
        FORGED: ("file", DANGER),
        UNDECODABLE: ("file", b"/swr-no-such-dir\n"),
        "swr-loop.pth": ("symlink", b"swr-loop.pth"),
        "swr-broken.pth": ("symlink", b"/swr-no-such-file"),
        "swr-nul.start": ("file", b"swr\x00mod:main\n"),  # 3.15+: an entry point
        "swr-fifo.pth": ("fifo", b""),  # last: from here on, a start of the target hangs
    }
    for name, (kind, data) in files.items():
        t.put(local / name, kind=kind, data=data)
    return {"swr-danger.pth": "dangerous-startup-code",
            "swr-nul-path.pth": "missing-pth-directory",
            "swr-nul-import.pth": "startup-line-fails",
            "swr-environ.pth": "startup-file-special",
            "swr-dir.pth": "startup-file-special",
            "swr-fifo.pth": "startup-file-special",
            "swr-loop.pth": "startup-file-special",
            "swr-broken.pth": "startup-file-special",
            FORGED: "startup-file-odd-name",
            UNDECODABLE: "startup-file-odd-name"}


def _check(t, *args: str):
    began = time.monotonic()
    proc = t.run([*t.cli_argv, "check", "--python", t.executable, *args], timeout=60)
    assert time.monotonic() - began < 30, "check took %.1f s" % (time.monotonic() - began)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    return proc.stdout


def test_hostile_startup_files_are_named_never_fatal(bare_target):
    t = bare_target
    expected = _plant(t)
    report = json.loads(_check(t, "--json"))
    found = {}
    for f in report["findings"]:
        found.setdefault(f.get("file"), set()).add(f["kind"])
    pep829 = report["startup"]["pep829"]
    if pep829:
        expected["swr-nul.start"] = "startup-line-fails"
    for name, kind in expected.items():
        path = str(t.local_dir / name)
        assert kind in found.get(path, ()), (name, found.get(path), sorted(found, key=str))
    special = {f["file"]: f["file_type"] for f in report["findings"]
               if f["kind"] == "startup-file-special"}
    assert special == {str(t.local_dir / n): kind for n, kind in (
        ("swr-environ.pth", "pseudo file"), ("swr-dir.pth", "directory"),
        ("swr-loop.pth", "symlink loop"), ("swr-broken.pth", "broken symlink"),
        ("swr-fifo.pth", "fifo"))}, special
    files = {f["path"]: f for f in report["startup"]["files"]}
    nul = [line for line in files[str(t.local_dir / "swr-nul-path.pth")]["lines"]
           if "\x00" in line["text"]]
    assert len(nul) == 1 and nul[0]["exists"] is False and "NUL" in nul[0]["note"], nul
    assert files[str(t.local_dir / "swr-environ.pth")]["lines"] == []  # not this check's
    assert files[str(t.local_dir / FORGED)]["lines"][0]["text"] == DANGER.decode().strip()

    text = _check(t)
    assert "swr-nl\\n  high   swr-forged finding.pth" in text, text
    assert "swr-bad\\xffname.pth" in text, text
    assert not [line for line in text.splitlines() if line.startswith("  high   swr-forged")]
    assert not [c for c in text if ord(c) < 32 and c not in "\n\t"], text


def test_emulated_start_reads_hostile_files_as_site_does(bare_target):
    """The same files but the FIFO: the static report is the live probe's, on every target."""
    t = bare_target
    after = t.tmp / "swr-after-nul"
    t.put(after, kind="dir")
    local = t.local_dir
    t.put(local / "swr-danger.pth", data=DANGER)
    t.put(local / "swr-nul-path.pth", data=b"/swr\x00dir\n%s\n" % str(after).encode())
    t.put(local / "swr-nul-import.pth", data=b"import os\x00; os.getcwd()\n")
    t.put(local / "swr-environ.pth", kind="symlink", data=b"/proc/self/environ")
    t.put(local / "swr-dir.pth", kind="dir")
    t.put(local / "swr-loop.pth", kind="symlink", data=b"swr-loop.pth")
    t.put(local / FORGED, data=DANGER)
    report = t.check()  # asserts it is the live probe's report
    entries = [e["path"] for e in report["layout"]["entries"]]
    assert str(after) in entries, entries
    kinds = {(f["kind"], f.get("file")) for f in report["findings"]}
    for name, kind in (("swr-danger.pth", "dangerous-startup-code"),
                       ("swr-nul-import.pth", "startup-line-fails"),
                       ("swr-environ.pth", "startup-file-special"),
                       ("swr-loop.pth", "startup-file-special"),
                       (FORGED, "startup-file-odd-name")):
        assert (kind, str(local / name)) in kinds, (name, sorted(kinds, key=str))
