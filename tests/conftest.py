"""Shared fixtures: the CLI under test, run as a real subprocess; the wheelhouse.

The guarded interpreters (``guarded_target``, ``bare_target``, ``guarded``) and the
namespaces are fixtures of ``harness.fixtures``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.cli import run_cli

pytest_plugins = ["harness.fixtures", "harness.fast"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cli():
    """The CLI of this checkout on the host: ``cli(*args, env=, cwd=, user=)`` (see
    ``harness.cli.run_cli``)."""
    return run_cli


#: Wheels the install tests use, from PyPI (cached), served with --no-index --find-links.
WHEELHOUSE = [("six", "1.17.0"), ("six", "1.16.0"), ("pyparsing", "3.1.4"),
              ("iniconfig", "2.0.0")]  # iniconfig: in no distro directory


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    """A local index of the wheels the installs need: no test reaches the network."""
    import shutil

    from harness import wheel

    d = tmp_path_factory.mktemp("wheelhouse")
    for name, version in WHEELHOUSE:
        shutil.copy(wheel(name, version), d)
    return d


def tree_state(root: Path) -> dict[str, object]:
    """Everything under ``root``: relative path -> (mode, bytes or link target)."""
    out: dict[str, object] = {}
    if not os.path.lexists(root):
        return out
    for dirpath, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = p.lstat()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir", oct(st.st_mode & 0o7777))
            else:
                out[rel] = ("file", oct(st.st_mode & 0o7777), p.read_bytes())
    return out
