"""``status`` and ``check`` share one judgement of a target, and it is what a start does.

Over the same states of every kind of interpreter (hermetic CPythons, Debian 12's python in
a namespace, the roots' pythons; each state on a third of them, in rotation): not guarded,
guarded, a damaged deployment (a runtime file gone), an orphaned hook (the runtime gone,
its ``.pth`` left), a guard disabled in the environment, no PEP 668 marker, a venv's
python, and the CLI run from a venv (as pipx installs it) without ``--python``.  Both
commands must say the same of "virtual environment", "marker applies", "guard loaded" and
"installs refused", exit by the same guard findings, and never say installs are refused
unless a real install into the target is refused.  Both read the startup files and run
none of them; ``status --live``, which starts the target, must say the same.
"""

from __future__ import annotations

import json

import pytest

from harness.guarded import make_guarded
from harness.roots import _LAUNCH, RootTarget
from harness.spread import DEBIAN, ROTATED, spread
from sitewarden.facts.text import unwrap_lines

STATES = ("unguarded", "guarded", "damaged", "orphaned", "disabled", "no-marker", "venv",
          "pipx-venv")
#: The findings about the guard itself (``commands.guard_findings``): ``status`` exits
#: by these alone, ``check`` by these and the rest.
GUARD_KINDS = {"incomplete-deployment", "orphaned-hook", "guard-disabled-here",
               "guard-not-active"}
REFUSED = "installs are refused"


def _hermetic(param) -> bool:
    return not isinstance(param, RootTarget) and param != DEBIAN


def _cli_in_venv(t, venv_python: str) -> list:
    """The CLI of this checkout run by a venv's python, as a pipx install runs it (with
    ``site``): its default target is that python."""
    argv = list(t.cli_argv)
    if "-c" in argv and argv[argv.index("-c") + 1] == _LAUNCH:  # a root's: src, lib after it
        paths = argv[argv.index("-c") + 2:]
        options = [a for a in argv[1:argv.index("-c")] if a not in ("-I", "-S")]
        return [venv_python, *options, "-c", _LAUNCH, *paths]
    import sitewarden

    src = sitewarden.__file__.rsplit("/", 2)[0]
    return [venv_python, "-c", _LAUNCH, src, src]


def _run(t, argv, env):
    proc = t.run(argv, env=env or None)
    assert proc.returncode in (0, 1), (argv, proc.stdout, proc.stderr)
    return proc


@pytest.mark.parametrize("python, state", spread(ROTATED, list(STATES)))
def test_status_and_check_agree_and_tell_the_truth(python, state, tmp_path):
    deploy = state not in ("unguarded",)
    t = make_guarded(python, deploy=("copy" if _hermetic(python) else True) if deploy else False,
                     dest=tmp_path / "py" if _hermetic(python) else None)
    try:
        env = {}
        target = ["--python", t.executable]
        cli = list(t.cli_argv)
        runtime = t.local_dir / "sitewarden"
        if state == "damaged":
            t.put(runtime / "guard" / "policy.py", "absent")
            t.root("import glob, os, sys\nfor p in glob.glob(sys.argv[1]): os.unlink(p)",
                   str(runtime / "guard" / "__pycache__" / "policy.*"))
        elif state == "orphaned":
            t.put(runtime, "absent")
        elif state == "disabled":
            env = {"SITEWARDEN_DISABLE": "1"}
        elif state == "no-marker":
            t.put(t.marker, "absent")
        elif state in ("venv", "pipx-venv"):
            venv = tmp_path / "venv"
            made = t.run([t.executable, "-m", "venv", "--without-pip", str(venv)])
            assert made.returncode == 0, made.stdout + made.stderr
            if state == "venv":
                target = ["--python", str(venv / "bin" / "python")]
            else:
                target, cli = [], _cli_in_venv(t, str(venv / "bin" / "python"))

        status = json.loads(_run(t, [*cli, "status", *target, "--json"], env).stdout)
        live = json.loads(_run(t, [*cli, "status", "--live", *target, "--json"], env).stdout)
        assert (status["startup_probe"], live["startup_probe"]) == ("static", "live")
        check_proc = _run(t, [*cli, "check", *target, "--json", "--fail-on", "low"], env)
        check = json.loads(check_proc.stdout)
        texts = {command: unwrap_lines(_run(t, [*cli, command, *target], env).stdout)
                 for command in ("status", "check")}
        guard = check["guard"]

        # One judgement.
        seen = (status["virtualenv"], status["marker"]["applies"], status["active"],
                status["installs_refused"])
        assert seen == (check["marker"]["virtualenv"], check["marker"]["applies"],
                        guard["active"], guard["installs_refused"]), (status, check)
        assert seen == (live["virtualenv"], live["marker"]["applies"], live["active"],
                        live["installs_refused"]), (status, live)
        assert (status["active_module"], status["active_version"]) == (
            live["active_module"], live["active_version"]), (status, live)
        kinds = sorted((f["kind"], f["severity"]) for f in check["findings"]
                       if f["kind"] in GUARD_KINDS)
        status_rc = _run(t, [*cli, "status", *target], env).returncode
        # status: 1 for a guard finding at low or above, or when check's default gate
        # (--fail-on medium) fails; its JSON verdict is check's.
        gate = any(f["severity"] in ("medium", "high") for f in check["findings"])
        assert status_rc == int(any(severity != "info" for _, severity in kinds) or gate), (
            kinds, check["findings"])
        assert status["verdict"]["exit"] == int(gate), status["verdict"]
        assert check_proc.returncode >= status_rc  # status counts what check --fail-on low

        # ... which is what a start of the target does.
        virtualenv, applies, active, refused = seen
        expected = {
            "unguarded": (False, True, False, False),
            "guarded": (False, True, True, True),
            "damaged": (False, True, True, True),
            "orphaned": (False, True, False, False),
            "disabled": (False, True, True, True),  # a start without the variable
            "no-marker": (False, False, True, False),
            "venv": (True, False, False, False),
            "pipx-venv": (True, False, False, False),
        }[state]
        assert seen == expected, (state, status)
        if state == "damaged":
            assert ("incomplete-deployment", "medium") in kinds
        if state == "orphaned":
            assert [k for k, _ in kinds].count("orphaned-hook") == 1, kinds
        for command, text in texts.items():
            assert (REFUSED in text) == (state == "damaged"), (command, text)
        if refused:
            proc = t.python("-m", "ensurepip")  # a start of the target, as users start it
            assert proc.returncode == 1 and (
                "externally-managed-environment" in proc.stderr or REFUSED in proc.stderr), (
                    proc.stdout + proc.stderr)
    finally:
        t.close()
