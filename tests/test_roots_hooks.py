"""PEP 829 ``.start`` files and a missing local site directory, on sid's real
``python3.15`` (and, for the refusal, Debian 13's 3.13 and sid's 3.14) in their roots.

The hook policy (docs/startup-hooks.md): the ``.pth`` file alone until 3.18, the
``.start`` file from 3.18, where ``.pth`` import lines no longer run.  No 3.18
exists yet, so the ``.start`` path is exercised on 3.15 with ``--hook start``.
"""

from __future__ import annotations

import json

import pytest

from harness.fixtures import open_root
from harness.roots import TARGETS
from sitewarden.cli.payload import hook_text

pytestmark = [pytest.mark.debian, pytest.mark.roots]

SID_315 = next(t for t in TARGETS if t.executable.endswith("3.15"))
SHOW = "import sys; print([getattr(f, '__name__', 0) for f in sys.meta_path])"


@pytest.fixture
def py315():
    ns = open_root(SID_315)
    yield ns
    ns.close()


def _hooks(ns):
    return sorted(n for n in ns.tree_digest(str(ns.local_dir)) if n.startswith("sitewarden.")
                  and n.endswith((".pth", ".start")))


def test_start_hook_on_315_and_its_orphan(py315):
    ns = py315
    before = ns.tree_digest(str(ns.local_dir))
    # An older sitewarden deployed the .pth and its .start twin: the default install
    # (upgrade) keeps only the .pth; the costly .start goes.
    proc = ns.run([*ns.cli, "install", "--python", ns.executable, "--hook", "start"])
    assert proc.returncode == 0 and "loaded by: sitewarden.start" in proc.stdout, proc.stdout
    assert _hooks(ns) == ["sitewarden.start"]
    ns.write_bytes(str(ns.local_dir / "sitewarden.pth"), hook_text("sitewarden.pth").encode())
    proc = ns.run([*ns.cli, "install", "--python", ns.executable])
    assert proc.returncode == 0 and "loaded by: sitewarden.pth" in proc.stdout, proc.stdout
    assert _hooks(ns) == ["sitewarden.pth"]

    # --hook start: the guard loads through the entry point, once.
    proc = ns.run([*ns.cli, "install", "--python", ns.executable, "--hook", "start"])
    assert proc.returncode == 0 and "active: yes" in proc.stdout, proc.stdout
    assert _hooks(ns) == ["sitewarden.start"]
    started = ns.run([ns.executable, "-c", SHOW])
    assert started.stderr == "" and eval(started.stdout).count("sitewarden") == 1, started

    # Its runtime deleted by hand: Python 3.15 itself prints an error at every start (an
    # entry point cannot be optional), so status and check say which file and how to go.
    runtime = ns.local_dir / "sitewarden"
    assert ns.run(["rm", "-rf", str(runtime)]).returncode == 0
    loud = ns.run([ns.executable, "-c", "pass"])
    assert "Error resolving entry point sitewarden:activate" in loud.stderr, loud.stderr
    hook = str(ns.local_dir / "sitewarden.start")
    text = ns.run([*ns.cli, "status", "--python", ns.executable]).stdout
    assert "orphaned hook: %s: its runtime %s is missing" % (hook, runtime) in text, text
    assert "every start of %s prints" % ns.executable in text
    assert "remove it: rm %s" % hook in text, text
    proc = ns.run([*ns.cli, "check", "--python", ns.executable, "--json"])
    found = [f for f in json.loads(proc.stdout)["findings"] if f["kind"] == "orphaned-hook"]
    assert proc.returncode == 1 and found and found[0]["severity"] == "high", proc.stdout
    assert found[0]["command"] == "rm " + hook
    human = ns.run([*ns.cli, "check", "--python", ns.executable]).stdout
    assert "Remove it: rm %s" % hook in human, human
    # The printed command does it: every start is silent again, the directory as before.
    assert ns.run(["sh", "-c", found[0]["command"]]).returncode == 0
    assert ns.run([ns.executable, "-c", "pass"]).stderr == ""
    assert ns.tree_digest(str(ns.local_dir)) == before

    # The other printed command, uninstall, removes an orphaned .start too.
    assert ns.run([*ns.cli, "install", "--python", ns.executable, "--hook", "start"]
                  ).returncode == 0
    assert ns.run(["rm", "-rf", str(runtime)]).returncode == 0
    proc = ns.run([*ns.cli, "uninstall", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    assert ns.run([ns.executable, "-c", "pass"]).stderr == ""
    assert ns.tree_digest(str(ns.local_dir)) == before


@pytest.mark.parametrize("target", [t for t in TARGETS if t is not SID_315], ids=lambda t: t.id)
def test_start_hook_refused_before_315(target):
    ns = open_root(target)
    try:
        proc = ns.run([*ns.cli, "install", "--python", ns.executable, "--hook", "start"])
        assert proc.returncode == 2 and "does not read .start files" in proc.stderr, proc.stderr
        assert _hooks(ns) == []
    finally:
        ns.close()


def test_missing_local_site_dir_created_and_removed(py315):
    """sid: /usr/local/lib/python3.15/dist-packages may not exist yet (Debian's postinst
    creates /usr/local/lib/python3.15 only where /usr/local is writable; a local install
    creates dist-packages).  Install creates what is missing; uninstall removes what it
    created, leaving /usr/local/lib as it was."""
    ns = py315
    parent = "/usr/local/lib/python%s" % ns.python.short_version
    assert ns.run(["rm", "-rf", parent]).returncode == 0
    before = ns.tree_digest("/usr/local/lib")
    proc = ns.run([*ns.cli, "install", "--python", ns.executable])
    assert proc.returncode == 0 and "active: yes" in proc.stdout, proc.stdout + proc.stderr
    assert ns.exists(str(ns.local_dir / "sitewarden.pth"))
    assert "sitewarden" in ns.run([ns.executable, "-c", SHOW]).stdout
    proc = ns.run([*ns.cli, "uninstall", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    assert not ns.exists(parent)
    assert ns.tree_digest("/usr/local/lib") == before
    # A directory the install did not create stays.
    assert ns.run(["mkdir", "-p", str(ns.local_dir)]).returncode == 0
    assert ns.run([*ns.cli, "install", "--python", ns.executable]).returncode == 0
    assert ns.run([*ns.cli, "uninstall", "--python", ns.executable]).returncode == 0
    assert ns.exists(str(ns.local_dir)) and ns.tree_digest(str(ns.local_dir)) == {}


def test_orphaned_start_with_another_runtime_importable(py315):
    """A ``.start`` whose runtime is gone, while another site directory holds a complete
    one (a ``--user`` deployment here; the Debian package's in the shared directory is
    the same case): the entry point resolves to that copy, so starts are silent, and
    status says so instead of predicting an error at every start."""
    ns = py315
    assert ns.run([*ns.cli, "install", "--python", ns.executable, "--hook", "start"]
                  ).returncode == 0
    proc = ns.run([*ns.cli, "install", "--python", ns.executable, "--user"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runtime = ns.local_dir / "sitewarden"
    assert ns.run(["rm", "-rf", str(runtime)]).returncode == 0
    started = ns.run([ns.executable, "-c", SHOW])
    assert started.stderr == "" and eval(started.stdout).count("sitewarden") == 1, started
    text = ns.run([*ns.cli, "status", "--python", ns.executable]).stdout
    hook = str(ns.local_dir / "sitewarden.start")
    assert "orphaned hook: %s: its runtime %s is missing" % (hook, runtime) in text, text
    assert "harmless while" in text and "every start of %s prints \"Error" % ns.executable \
        not in text, text
    proc = ns.run([*ns.cli, "check", "--python", ns.executable, "--json"])
    found = [f for f in json.loads(proc.stdout)["findings"] if f["kind"] == "orphaned-hook"]
    assert found and found[0]["severity"] == "low", proc.stdout
