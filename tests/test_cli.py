"""The command line's own surface: help, version, colour only on a terminal, NO_COLOR."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import sitewarden
from harness.cli import CLI
from sitewarden.facts.text import unwrap_lines


def test_help_has_examples_and_version():
    proc = subprocess.run([*CLI, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "examples:" in proc.stdout and "sitewarden install --python" in proc.stdout
    assert "SITEWARDEN_DISABLE" in proc.stdout
    proc = subprocess.run([*CLI, "--version"], capture_output=True, text=True)
    assert proc.stdout.strip() == "sitewarden " + sitewarden.__version__ and proc.returncode == 0
    # ... as argparse would print it, without loading argparse and the commands (a start)
    proc = subprocess.run([sys.executable, "-c", "import sys\nfrom sitewarden.cli import main\n"
                           "rc = main.main(['--version'])\nprint(rc, sorted(m for m in sys.modules"
                           " if m in ('argparse', 'sitewarden.cli.commands')))"],
                          capture_output=True, text=True)
    assert proc.stdout.splitlines() == ["sitewarden " + sitewarden.__version__, "0 []"], proc


def _on_a_terminal(env):
    """Run `sitewarden status` with stdout on a pseudo-terminal; return what it wrote."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([*CLI, "status", "--python", sys.executable], stdout=secondary,
                            stderr=subprocess.DEVNULL, env=env)
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(primary)
    return b"".join(chunks).decode()


def test_colour_only_on_a_terminal_and_never_with_no_color():
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm"
    assert "\033[" in _on_a_terminal(env)
    assert "\033[" not in _on_a_terminal(dict(env, NO_COLOR="1"))
    piped = subprocess.run([*CLI, "status", "--python", sys.executable], capture_output=True,
                           text=True, env=env)
    assert piped.returncode == 0 and "\033[" not in piped.stdout


def test_exit_status_stands_with_stdout_or_stderr_closed(tmp_path):
    """The command ends with os._exit once its output is flushed: started with stderr
    (or stdout) closed, it still exits with the command's own status."""
    argv = " ".join([*CLI, "status", "--python", sys.executable])
    statuses = []
    for redirect in (">/dev/null 2>/dev/null", ">/dev/null 2>&-", "2>/dev/null >&-"):
        proc = subprocess.run(["sh", "-c", "%s %s; echo $?" % (argv, redirect)],
                              capture_output=True, text=True)
        statuses.append(proc.stdout.strip())
    assert statuses[0] in ("0", "1") and statuses == [statuses[0]] * 3, statuses


def test_a_started_probe_is_stopped_when_the_command_ends_first(tmp_path):
    """``check`` starts its probe before the rest of the CLI loads; if the command ends
    before reading it (Ctrl-C meanwhile), the probe is killed and reaped, not orphaned."""
    from sitewarden.cli import targets

    slow = tmp_path / "python3"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    pending = targets.PendingCheck(str(slow))
    pid = pending._spawned.pid
    os.kill(pid, 0)  # running
    pending.cancel()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError("the probe %d still runs" % pid)


def test_usage_errors_are_one_line_with_status_2():
    """A usage error, like every other error, is one ``sitewarden: error: ...`` line."""
    for args in (["check", "--bogus"], [], ["install", "--hook", "nope"], ["status", "-x"]):
        proc = subprocess.run([*CLI, *args], capture_output=True, text=True)
        assert proc.returncode == 2 and proc.stdout == "", (args, proc)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("sitewarden: error: "), (args, lines)
        assert "--help`" in lines[0], lines


def test_true_words_have_one_source():
    """``--help``, ``status``'s meaning of a value and ``settings`` list the same true
    words (the docs and the man page are held to them by test_docs_text)."""
    from sitewarden import settings
    from sitewarden.cli import environment

    words = environment.TRUE_WORDS
    assert sorted(words.split(", ")) == sorted(settings.TRUE_VALUES), words
    assert sorted(environment.FALSE_WORDS.split(", ")) == sorted(
        w for w in settings.FALSE_VALUES if w)
    proc = subprocess.run([*CLI, "--help"], capture_output=True, text=True)
    assert " ".join(proc.stdout.split()).count(words) == 1, proc.stdout
    env = dict(os.environ, SITEWARDEN_DISABLE="maybe", SITEWARDEN_SILENCE="loud")
    proc = subprocess.run([*CLI, "status", "--python", sys.executable, "--verbose"],
                          capture_output=True, text=True, env=env)
    proc.stdout = unwrap_lines(proc.stdout)
    assert "accepted: %s (any case) turn the guard off" % words in proc.stdout, proc.stdout
    assert "all (or %s)" % words in proc.stdout, proc.stdout


def test_fail_on_sets_which_findings_make_check_exit_1(make_hermetic):
    """An unguarded python (``guard-not-active``: low) with code nobody installed in a
    ``.pth`` (``unowned-startup-code``: medium): ``--fail-on`` gates as lintian's does,
    in the plain form and in argparse's, for one target and with the default."""
    from harness.interpreters import pyenv_interpreters

    t = make_hermetic(pyenv_interpreters()[-1])
    (t.local_dir / "swr-unowned.pth").write_text("import os\n")
    python = str(t.executable)
    expected = {"info": 1, "low": 1, "medium": 1, "high": 0, "none": 0}
    for level, status in expected.items():
        for argv in (["check", "--fail-on", level, "--python", python],  # main.plain_args
                     ["check", "--python=" + python, "--fail-on", level]):  # argparse
            proc = subprocess.run([*CLI, *argv], capture_output=True, text=True, env=t.env())
            assert proc.returncode == status, (argv, proc.stdout, proc.stderr)
    proc = subprocess.run([*CLI, "check", "--python", python, "--json"], capture_output=True,
                          text=True, env=t.env())
    assert proc.returncode == 1
    t.put(t.local_dir / "swr-unowned.pth", "absent")
    proc = subprocess.run([*CLI, "check", "--fail-on", "medium", "--python", python],
                          capture_output=True, text=True, env=t.env())
    assert proc.returncode == 0, proc.stdout  # guard-not-active alone is low


def test_which_hook_a_start_of_each_version_loads():
    """The Debian package's ``.pth`` copy guards a python3.X only while ``.pth`` import
    lines run: ``install`` deploys a ``.start`` hook for 3.18+ instead of answering
    "already guarded" (cli.change)."""
    from sitewarden.cli import deploy, deployed

    assert [deployed.hook_loads("pth", (3, m)) for m in (8, 15, 17, 18, 19)] == \
        [True, True, True, False, False]
    assert [deployed.hook_loads("start", (3, m)) for m in (8, 14, 15, 18)] == \
        [False, False, True, True]
    assert deployed.hook_loads("sitecustomize", (3, 8)) and not deployed.hook_loads(None, (3, 8))
    assert [deploy.default_hook((3, m)) for m in (17, 18)] == ["pth", "start"]
