"""The security posture the README states, tested (issue #6, property 6).

- The CLI runs no code from its working directory in target interpreters.
- The probe's private cache (``~/.cache/sitewarden/runtime``) is used only when the
  current user owns it and nobody else can write to it.
- ``--hook sitecustomize`` refuses to edit a sitecustomize that is not a ``.py`` file.
- Deployed files are not writable by other users, whatever the umask.
- No code is executed from the marker, metadata or environment: they are data.

Each runs on every CPython 3.8+ (hermetic) and Debian's python (namespace) where the
target matters; the cache is the CLI's own and is tested once.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

import sitewarden
from guarded_targets import CLI
from harness import build_hermetic, pyenv_interpreters
from harness.figures import record
from harness.nobody import NOBODY

NEWEST = pyenv_interpreters()[-1]


# ------------------------------------------------------------------ the working directory


def _booby_trapped(directory: Path, canary: Path, names) -> None:
    """Modules in ``directory`` that the CLI's subprocesses would import if the current
    directory were on their ``sys.path``: each leaves ``canary``."""
    for name in names:
        (directory / (name + ".py")).write_text(
            "open(%r, 'a').write(%r)\n" % (str(canary), name + "\n"))


def test_install_compiles_without_the_working_directory(bare_target):
    """``install`` compiles the runtime with the target itself: a ``py_compile.py`` in the
    directory the CLI runs in (as root, maybe /tmp) must not run."""
    t = bare_target
    cwd = t.tmp / "cwd"
    cwd.mkdir()
    canary = t.tmp / "CANARY-cwd"
    # Only a module the compile step imports and the probe does not (the probe's own
    # exposure is test_probe_runs_no_code_from_the_working_directory).
    _booby_trapped(cwd, canary, ["py_compile"])
    proc = t.cli("install", "--python", t.executable, cwd=str(cwd))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = canary.read_text().split() if canary.exists() else []
    record("security: no code run from the working directory (install)", t.label, 1, len(ran))
    assert ran == []


@pytest.mark.xfail(strict=True, reason=(
    "targets._run_payload runs the probe (-E -S -c BOOTSTRAP) in the CLI's working "
    "directory, so '' is on the target's sys.path while the probe imports site and "
    "sysconfig: a sysconfig.py there runs in the target, as root under sudo (targets.py "
    "and probe.py are on the performance branch; reported in issue #6)"))
def test_probe_runs_no_code_from_the_working_directory(tmp_path):
    hp = build_hermetic(NEWEST, tmp_path / "h")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    canary = tmp_path / "CANARY-probe"
    _booby_trapped(cwd, canary, ["sysconfig", "site", "json"])
    subprocess.run([*CLI, "status", "--python", str(hp.executable)], cwd=str(cwd),
                   env=hp.env(), capture_output=True, text=True, timeout=300)
    assert not canary.exists(), canary.read_text()


# ------------------------------------------------------------------ the probe's cache


def _cache_root(base: Path) -> Path:
    return base / "sitewarden" / "runtime"


@pytest.mark.parametrize("case", [
    "fresh", "group-writable", "world-writable", "parent world-writable", "other owner",
    "a symbolic link", "parent a symbolic link", "not a directory"])
def test_probe_cache_used_only_when_private(tmp_path, monkeypatch, case):
    from sitewarden import payload

    base = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    root = _cache_root(base)
    if case != "fresh":
        assert payload._private_cache_root() == root
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if case == "group-writable":
        root.chmod(0o770)
    elif case == "world-writable":
        root.chmod(0o777)
    elif case == "parent world-writable":
        root.parent.chmod(0o777)
    elif case == "other owner":
        if os.geteuid() != 0:
            pytest.skip("needs root to give the directory away")
        os.chown(root, NOBODY, NOBODY)
    elif case == "a symbolic link":
        root.rmdir()
        root.symlink_to(elsewhere)
    elif case == "parent a symbolic link":
        root.rmdir()
        root.parent.rmdir()
        (elsewhere / "runtime").mkdir(mode=0o700)
        root.parent.symlink_to(elsewhere)
    elif case == "not a directory":
        root.rmdir()
        root.write_text("")
    found = payload._private_cache_root()
    if case == "fresh":
        st = os.lstat(root)
        assert found == root and stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
        assert stat.S_IMODE(st.st_mode) == 0o700
    else:
        assert found is None
    # Whatever the cache, the payload the probe runs is this user's, and only theirs to write.
    used = payload.probe_payload()
    st = os.lstat(used)
    assert st.st_uid == os.geteuid() and not st.st_mode & 0o022
    assert (found is not None) == (used.parent == root)


def _plant(base: Path, canary: Path) -> Path:
    """A runtime in the cache, under the key the CLI will look for, that leaves ``canary``."""
    from sitewarden import payload

    key = "%s-%s" % (sitewarden.__version__, payload.digest(payload.runtime_files()))
    planted = _cache_root(base) / key / "sitewarden"
    planted.mkdir(parents=True)
    (planted / "__init__.py").write_text("open(%r, 'w').write('planted')\n" % str(canary))
    return planted


@pytest.mark.parametrize("unsafe", ["world-writable", "other owner"])
def test_cli_never_runs_a_runtime_from_an_unsafe_cache(tmp_path, unsafe):
    """A runtime planted in a cache someone else could write to is never run by the
    probe (and the fallback temporary copy is removed when the CLI exits); planted in a
    private cache, it would be (the control)."""
    hp = build_hermetic(NEWEST, tmp_path / "h")
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    tried = 0
    for safe in (True, False):
        base = tmp_path / ("cache-safe" if safe else "cache-unsafe")
        canary = tmp_path / ("CANARY-safe" if safe else "CANARY-unsafe")
        _plant(base, canary)
        for d in (base / "sitewarden", _cache_root(base)):
            d.chmod(0o700)
        if not safe:
            if unsafe == "world-writable":
                _cache_root(base).chmod(0o777)
            else:
                os.chown(_cache_root(base), NOBODY, NOBODY)
        proc = subprocess.run([*CLI, "status", "--python", str(hp.executable), "--json"],
                              env=hp.env({"XDG_CACHE_HOME": str(base),
                                          "TMPDIR": str(private_tmp)}),
                              capture_output=True, text=True, timeout=300, cwd="/")
        tried += 1
        if safe:
            assert canary.exists(), "control: a private cache is used, planted code and all"
        else:
            assert not canary.exists(), "code planted in an unsafe cache was run"
            assert proc.returncode == 0, proc.stderr
            json.loads(proc.stdout)
            assert list(private_tmp.iterdir()) == [], "the temporary runtime was left behind"
    record("security: probe cache only when private", "cli", tried, 0, cache=unsafe)
