"""``--all`` runs no interpreter that a user other than root may change.

In Debian's pythons' namespaces (Debian 12's, the roots'; never the real system), three
copies of the target's own interpreter are planted as ``python3*`` in ``/usr/local/bin``:
one writable by everyone, one owned by ``nobody``, and a link to one in a directory
everyone may write.  Each would leave a trace if it ever started (a ``pyvenv.cfg`` beside
it points it at a standard library whose ``encodings`` writes one at interpreter start,
whatever ``-E -S -c`` says).  ``check --all`` and ``status --all`` (text and JSON) list each
with a high ``untrusted-interpreter`` finding, exit 1, and leave no trace; started
directly, each leaves its trace, so the plants are live.
"""

from __future__ import annotations

import json

ENCODINGS = ("import posix\n"
             "posix.close(posix.open(%r, posix.O_WRONLY | posix.O_CREAT, 0o644))\n")


def _plant(t) -> dict:
    """``{name in /usr/local/bin: its trace}``."""
    real = t.root("import os, sys; sys.stdout.write(os.path.realpath(sys.argv[1]))",
                  t.executable).stdout.decode()
    home = t.tmp / "swr-home"  # what the copies' pyvenv.cfg points them at
    lib = home / "lib" / ("python%d.%d" % t.version[:2])
    shared = t.tmp / "swr-ww"
    t.root("import os, sys\nfor d in sys.argv[1:]: os.makedirs(d, exist_ok=True)",
           str(shared), str(lib / "encodings"), str(home / "bin"))
    t.chmod(shared, 0o777)
    t.put(lib / "os.py", data=b"")  # the landmark: its standard library is lib
    trace = str(t.tmp / "swr-all-trace")
    t.put(lib / "encodings" / "__init__.py", data=(ENCODINGS % trace).encode())
    for d in ("/usr/local/bin", str(shared)):
        t.put("%s/pyvenv.cfg" % d, data=("home = %s\n" % (home / "bin")).encode())
    copy = "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])"
    t.root(copy, real, "/usr/local/bin/python3.99")
    t.chmod("/usr/local/bin/python3.99", 0o777)
    t.root(copy, real, "/usr/local/bin/python3.98")
    t.root("import os; os.chown('/usr/local/bin/python3.98', 65534, 65534)")
    t.root(copy, real, str(shared / "python3.97"))
    t.chmod(shared / "python3.97", 0o755)
    t.put("/usr/local/bin/python3.97", "symlink", data=str(shared / "python3.97").encode())
    return {"python3.99": trace, "python3.98": trace, "python3.97": trace}


def test_all_never_runs_an_untrusted_interpreter(debian_any):
    t = debian_any
    planted = _plant(t)
    trace = next(iter(planted.values()))
    names = {"/usr/local/bin/" + n for n in planted}
    for command in ("check", "status"):
        for form in (["--json"], []):
            proc = t.cli(command, "--all", *form)
            assert proc.returncode == 1, (command, form, proc.stdout[-3000:], proc.stderr)
            assert not t.exists(trace), (command, form, proc.stdout[-3000:])
            if form:
                items = {i.get("python") or i["interpreter"]["executable"]: i
                         for i in json.loads(proc.stdout)["interpreters"]}
                for name in names:
                    item = items[name]
                    assert item["untrusted"] is True, item
                    (f,) = item["findings"]
                    assert (f["kind"], f["severity"]) == ("untrusted-interpreter", "high"), f
                    assert "was not run" in f["message"], f
                assert [i for i in items.values() if not i.get("untrusted")], items
            else:
                for name in names:
                    assert "%s: NOT RUN (untrusted)" % name in proc.stdout.replace(
                        name + " NOT RUN", name + ": NOT RUN"), (name, proc.stdout)
    # The plants are live: each starts its encodings.
    for name in sorted(names):
        t.put(trace, "absent")
        t.run([name, "-E", "-S", "-c", "pass"])
        assert t.exists(trace), name
