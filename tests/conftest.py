"""Shared fixtures: the CLI under test, run as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from guarded_targets import make_target, target_params

pytest_plugins = ["harness.fixtures"]

ROOT = Path(__file__).resolve().parent.parent


def sitewarden_cli(*args: str, env: dict[str, str] | None = None, cwd: str | None = None,
                   user: int | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m sitewarden`` (the CLI of this checkout) in a subprocess."""
    full_env = dict(os.environ)
    full_env.pop("SITEWARDEN_DISABLE", None)
    full_env.update(env or {})
    argv = [sys.executable, "-m", "sitewarden", *args]
    if user is not None:
        argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, env=full_env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=300)


@pytest.fixture
def cli():
    return sitewarden_cli


@pytest.fixture(params=target_params())
def guarded_target(request):
    """Each CPython 3.8+ (hermetic) and Debian's python (namespace), guard deployed."""
    target = make_target(request.param)
    yield target
    target.close()


@pytest.fixture(params=target_params())
def bare_target(request):
    """As ``guarded_target``, without the guard deployed."""
    target = make_target(request.param, deploy=False)
    yield target
    target.close()


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
