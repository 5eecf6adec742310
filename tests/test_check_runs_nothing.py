"""``check`` and ``status`` read startup code without running it: no payload leaves a trace.

Planted in each target (the hermetic CPythons, Debian 12's python in a namespace, the
roots' 3.13, 3.14 and 3.15), each writing a trace file of its own when it runs: a ``.pth``
import line in the local site directory, in the distribution's directory and in the user
site, ``sitecustomize``, ``usercustomize``, a module a ``.pth`` line imports and, on 3.15,
a ``.start`` entry point.  After ``check``, ``check --json``, ``status``, ``status --json``
(``make check`` runs ``status`` then ``check``), where the target is one of the machine's
interpreters ``check --all`` and ``status --all``, and ``install`` (which reads whether a
start would load the guard, as ``status`` does), no trace exists, and every file is listed
with the right line; a plain start (what ``status --live`` does) leaves every trace, so the
plants are live.  (The apt hook's probes: ``test_deb``.)
"""

from __future__ import annotations

import json

import pytest

from harness.roots import RootTarget
from harness.spread import DEBIAN, rotated, spread, turn

PLANTS = ("local", "distro", "user", "module", "sitecustomize", "usercustomize", "start")


def _plant(t) -> dict:
    """Plant every payload in ``t``; ``{kind: (startup file, its trace)}``."""
    traces = t.tmp / "swr-traces"
    user = t.user_site
    t.root("import os, sys; [os.makedirs(d, exist_ok=True) for d in sys.argv[1:]]",
           str(traces), str(user))

    def mark(kind: str) -> str:
        return "open(%r, 'a').close()" % str(traces / kind)

    planted = {
        "local": (t.local_dir / "swr-nt-local.pth", "import os; " + mark("local") + "\n"),
        "distro": (t.distro_dir / "swr-nt-distro.pth", "import os; " + mark("distro") + "\n"),
        "user": (user / "swr-nt-user.pth", "import os; " + mark("user") + "\n"),
        "module": (t.local_dir / "swr-nt-module.pth", "import swr_nt_module\n"),
        "sitecustomize": (t.stdlib / "sitecustomize.py", mark("sitecustomize") + "\n"),
        "usercustomize": (user / "usercustomize.py", mark("usercustomize") + "\n"),
    }
    if t.version[:2] >= (3, 15):
        planted["start"] = (t.local_dir / "swr-nt.start", "swr_nt_start:main\n")
        t.put(t.local_dir / "swr_nt_start.py",
              data=("def main():\n    pass\n" + mark("start") + "\n").encode())
    t.put(t.local_dir / "swr_nt_module.py", data=(mark("module") + "\n").encode())
    for path, text in planted.values():
        t.put(path, data=text.encode())
    return {kind: (str(path), str(traces / kind)) for kind, (path, _t) in planted.items()}


def _traces(t, planted: dict) -> list:
    return sorted(kind for kind, (_p, trace) in planted.items() if t.exists(trace))


@pytest.mark.parametrize("guarded_target", spread(), indirect=True)
def test_no_check_form_runs_startup_code(guarded_target):
    t = guarded_target
    planted = _plant(t)
    machine = isinstance(t.param, RootTarget) or t.param == DEBIAN
    # The text form runs the same probe as --json: on every other target.
    text = [[]] if turn(t.param) % 2 == 0 else []
    forms = [["--json"]] + text + ([["--all", "--json"]] if machine else [])
    everything = [(c, f) for c in ("check", "status") for f in forms]
    if machine and text:
        everything.append(("status", ["--all"]))
    for command, form in everything:
        proc = t.cli(command, *(form if "--all" in form else
                                ["--python", t.executable, *form]))
        assert proc.returncode in (0, 1), (command, form, proc.stderr)
        assert _traces(t, planted) == [], (command, form, proc.stdout[-2000:])
        if (command, form) == ("check", ["--json"]):
            report = json.loads(proc.stdout)
        if (command, form) == ("status", ["--json"]):
            status = json.loads(proc.stdout)
            assert status["active"] is True and status["startup_probe"] == "static", status
    # install (again: in place) says whether a start would load the guard without one.
    proc = t.cli("install", "--python", t.executable)
    assert proc.returncode == 0 and "active: yes" in proc.stdout, proc.stdout + proc.stderr
    assert _traces(t, planted) == [], ("install", proc.stdout[-2000:])
    files = {f["path"]: f for f in report["startup"]["files"]}
    for kind, (path, _trace) in planted.items():
        if kind in ("sitecustomize", "usercustomize"):
            (f,) = [f for f in files.values() if f["kind"] == kind]
            assert f["path"] == path or f["realpath"].endswith("/sitecustomize.py"), f
            continue
        assert path in files, (kind, sorted(files))
        lines = [x for x in files[path]["lines"] if x["kind"] in ("import", "entry-point")]
        assert lines and lines[0]["runs"] and not lines[0]["error"], lines

    proc = t.python("-c", "pass")  # a plain start runs them all: the plants are live
    assert proc.returncode == 0, proc.stderr
    assert _traces(t, planted) == sorted(planted), proc.stderr


ENCODINGS = ("import posix\n"
             "posix.close(posix.open(%r, posix.O_WRONLY | posix.O_CREAT, 0o644))\n")


@rotated()
def test_pythonpath_runs_nothing_and_is_still_described(guarded_target):
    """An ``encodings`` package on ``PYTHONPATH`` (imported by a start before any code of
    ours, were ``PYTHONPATH`` acted on) runs in no form of ``check`` or ``status``: their
    probe starts isolated (``-I -S``) and rebuilds the user's ``sys.path`` from the
    variable's text, so the report still lists the entry, as ``pythonpath``, shadowing
    the standard library.  ``PYTHONNOUSERSITE`` and ``PYTHONSAFEPATH`` are heard the
    same way: the static report is the live one (``cli_check``)."""
    t = guarded_target
    planted = t.tmp / "swr-pp"
    t.root("import os, sys; os.makedirs(sys.argv[1], exist_ok=True)", str(planted / "encodings"))
    trace = str(t.tmp / "swr-pp-trace")
    t.put(planted / "encodings" / "__init__.py", data=(ENCODINGS % trace).encode())
    env = {"PYTHONPATH": str(planted)}
    # The CLI's own process must not act on it either (as documented: python3 -I).
    cli = [t.cli_argv[0], "-I", *t.cli_argv[1:]] if "-I" not in t.cli_argv else t.cli_argv
    for command in ("check", "status"):
        for form in (["--json"], []):
            proc = t.run([*cli, command, "--python", t.executable, *form], env=env)
            assert proc.returncode in (0, 1), (command, form, proc.stderr)
            assert not t.exists(trace), (command, form, proc.stdout[-2000:], proc.stderr)
            if (command, form) == ("check", ["--json"]):
                report = json.loads(proc.stdout)
    entries = [(e["path"], e["class"]) for e in report["layout"]["entries"]]
    assert (str(planted), "pythonpath") in entries, entries
    assert any(f["kind"] == "stdlib-shadowed" and "encodings" in f["message"]
               for f in report["findings"]), report["findings"]
    for extra in ({"PYTHONNOUSERSITE": "1"}, {"PYTHONSAFEPATH": "1"}):
        t.cli_check(env=extra)  # held to a live start's report
    proc = t.python("-c", "pass", env=env)  # a plain start runs it: the plant is live
    assert t.exists(trace), proc.stderr


def test_make_check_runs_nothing(make_hermetic):
    """``make check`` (the README's first command: ``status`` then ``check``) on a python
    with every payload planted leaves no trace."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from harness.interpreters import pyenv_interpreters

    hp = make_hermetic(pyenv_interpreters()[-1])
    planted = _plant(hp)
    venv = Path(sys.executable).parent.parent
    proc = subprocess.run(
        ["make", "-s", "-o", "%s/.installed" % venv, "check", "VENV=%s" % venv,
         "TARGET_PYTHON=%s" % hp.executable], cwd=str(Path(__file__).parent.parent),
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
        env=dict(hp.env(), PATH=os.environ.get("PATH", "/usr/bin:/bin")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sitewarden status for %s" % hp.executable in proc.stdout, proc.stdout
    assert _traces(hp, planted) == [], proc.stdout[-2000:]
    hp.python("-c", "pass")
    assert _traces(hp, planted) == sorted(planted)
