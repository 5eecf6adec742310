"""The command line's own surface: help, version, colour only on a terminal, NO_COLOR."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import sitewarden
from harness.cli import CLI


def test_help_has_examples_and_version():
    proc = subprocess.run([*CLI, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "examples:" in proc.stdout and "sitewarden install --python" in proc.stdout
    assert "SITEWARDEN_DISABLE" in proc.stdout
    proc = subprocess.run([*CLI, "--version"], capture_output=True, text=True)
    assert proc.stdout.strip() == "sitewarden " + sitewarden.__version__


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
