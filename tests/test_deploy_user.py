"""Deploying into real interpreters: --user and --site-dir on every CPython 3.8+.

Each test deploys with the real CLI, then starts the real target interpreter
and looks at what it loaded.  PYTHONUSERBASE points at a temporary directory,
so nothing outside it is written.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import tree_state
from harness import pyenv_interpreters

PYTHONS = [pytest.param(i.executable, id=i.id) for i in pyenv_interpreters()]

SHOW = (
    "import json, sys; print(json.dumps({'finders': "
    "[getattr(f, '__name__', 0) for f in sys.meta_path], "
    "'sw': [m for m in sys.modules if m.startswith('sitewarden')]}))"
)


def run(python: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = dict(os.environ, **env)
    full.pop("SITEWARDEN_DISABLE", None) if "SITEWARDEN_DISABLE" not in env else None
    return subprocess.run([python, *args], capture_output=True, text=True, env=full,
                          stdin=subprocess.DEVNULL, timeout=120, cwd="/")


def finders(python: str, env: dict[str, str], *flags: str) -> list[str]:
    proc = run(python, *flags, "-c", SHOW, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return json.loads(proc.stdout)["finders"]


@pytest.fixture
def userbase(tmp_path):
    base = tmp_path / "userbase"
    return {"PYTHONUSERBASE": str(base)}, base


@pytest.mark.parametrize("python", PYTHONS)
def test_user_install_activates_and_uninstall_restores(python, cli, userbase):
    env, base = userbase
    assert not base.exists()
    proc = cli("install", "--python", python, "--user", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "active: yes" in proc.stdout

    # Every later start loads the guard (other .pth finders may be put ahead of it
    # during startup; it moves back to the front at the first import after startup).
    assert finders(python, env).count("sitewarden") == 1
    proc = run(python, "-c", "import json, sys; print(sys.meta_path[0].__name__)", env=env)
    assert proc.stdout.strip() == "sitewarden"
    # The kill switch keeps it out; -s and -I skip the user site, hence the guard.
    assert "sitewarden" not in finders(python, dict(env, SITEWARDEN_DISABLE="1"))
    assert "sitewarden" not in finders(python, env, "-s")
    assert "sitewarden" not in finders(python, env, "-I")
    assert "sitewarden" not in finders(python, env, "-S")
    # -E ignores PYTHON* variables (so PYTHONUSERBASE too): the default user
    # site is then used; the guard is not there.  Documented, not an error.

    site = next(base.rglob("site-packages"))
    pth = sorted(p.name for p in site.iterdir() if p.suffix in (".pth", ".start"))
    # The .pth file alone before 3.18 (see docs/startup-hooks.md).
    assert pth == ["sitewarden.pth"]
    for p in site.rglob("*"):
        mode = p.stat().st_mode & 0o777
        assert mode == (0o755 if p.is_dir() else 0o644), p

    # A repeated install upgrades in place: still exactly one .pth, still active.
    proc = cli("install", "--python", python, "--user", env=env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in site.iterdir() if p.suffix == ".pth") == ["sitewarden.pth"]
    assert finders(python, env).count("sitewarden") == 1

    proc = cli("uninstall", "--python", python, "--user", env=env)
    assert proc.returncode == 0, proc.stderr
    assert not base.exists(), "uninstall leaves the directories it created"
    assert "sitewarden" not in finders(python, env)


@pytest.mark.parametrize("python", PYTHONS)
def test_uninstall_restores_existing_directory_exactly(python, cli, userbase, tmp_path):
    env, base = userbase
    status = json.loads(cli("status", "--python", python, "--json", env=env).stdout)
    assert status["deployments"] == []
    probe = run(python, "-c", "import site; print(site.getusersitepackages())", env=env)
    site = Path(probe.stdout.strip())
    site.mkdir(parents=True)
    (site / "other.pth").write_text("# someone else's\n")
    (site / "keep.py").write_text("x = 1\n")
    before = tree_state(base)

    assert cli("install", "--python", python, "--user", env=env).returncode == 0
    # A process writes bytecode for the guard at runtime (an -O run).
    assert run(python, "-O", "-c", "import sitewarden.facts.marker", env=env).returncode == 0
    assert cli("uninstall", "--python", python, "--user", env=env).returncode == 0
    assert tree_state(base) == before


@pytest.mark.parametrize("python", PYTHONS)
def test_pth_processed_twice_installs_one_finder(python, cli, userbase):
    env, base = userbase
    assert cli("install", "--python", python, "--user", env=env).returncode == 0
    site = next(base.rglob("site-packages"))
    (site / "zz-again.pth").write_text((site / "sitewarden.pth").read_text())
    assert finders(python, env).count("sitewarden") == 1
    proc = run(python, "-c", "import sitewarden as s, sys; s.activate(); s.activate(); "
               "print(sum(getattr(f, '__name__', 0) == 'sitewarden' for f in sys.meta_path))",
               env=env)
    assert proc.stdout.strip() == "1"


@pytest.mark.parametrize("python", PYTHONS)
def test_orphaned_pth_is_silent(python, cli, userbase):
    """The runtime deleted (wholly, or its sources with the bytecode left, which
    makes ``sitewarden`` a namespace package), or a runtime without the entry point
    (an older one, before ``activate`` existed): the ``.pth`` does nothing, silently."""
    import shutil

    env, base = userbase
    for damage in ("runtime deleted", "sources deleted", "no entry point"):
        assert cli("install", "--python", python, "--user", env=env).returncode == 0
        site = next(base.rglob("site-packages"))
        package = site / "sitewarden"
        if damage == "runtime deleted":
            shutil.rmtree(package)
        elif damage == "sources deleted":
            for source in package.rglob("*.py"):
                source.unlink()
        else:
            (package / "__init__.py").write_text('__version__ = "0.1.0"\n')
            shutil.rmtree(package / "__pycache__")
        proc = run(python, "-c", "pass", env=env)
        assert proc.returncode == 0 and proc.stderr == "", (damage, proc.stderr)
        assert "sitewarden" not in finders(python, env)
        shutil.rmtree(package, ignore_errors=True)


@pytest.mark.parametrize("python", PYTHONS)
def test_frozen_process_is_left_alone(python, cli, userbase):
    env, _ = userbase
    assert cli("install", "--python", python, "--user", env=env).returncode == 0
    proc = run(python, "-c", "import sys; sys.frozen = True; import sitewarden as s; "
               "s.deactivate(); print(s.activate(), "
               "[getattr(f, '__name__', 0) for f in sys.meta_path])",
               env=env)
    assert proc.stdout.startswith("None") and "sitewarden" not in proc.stdout


def test_site_dir_must_be_a_site_directory(cli, tmp_path):
    python = PYTHONS[0].values[0]
    proc = cli("install", "--python", python, "--site-dir", str(tmp_path))
    assert proc.returncode == 2
    assert "is not a site directory" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--python", "/etc/passwd"], "not an executable Python interpreter"),
        (["--python", "/bin/true"], "not a CPython 3.8+ interpreter"),
        (["--python", "/no/such/python"], "no such file"),
        (["--python", "no-such-command-anywhere"], "no such command"),
    ],
)
def test_not_an_interpreter(cli, argv, message):
    proc = cli("install", *argv)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_old_interpreters_are_refused(cli, tmp_path):
    from harness import old_interpreters

    olds = old_interpreters()
    if not olds:
        pytest.skip("no Python < 3.8 on this machine")
    for python in olds:
        proc = cli("install", "--python", python, "--user",
                   env={"PYTHONUSERBASE": str(tmp_path)})
        assert proc.returncode == 2
        assert "supports CPython 3.8 and newer" in proc.stderr
        assert list(tmp_path.iterdir()) == []


def test_unwritable_target_is_refused_cleanly():
    """As an unprivileged user, into a root-owned site directory: one line, exit 2.

    The checkout (and its .venv) may sit in a directory that user cannot read, so
    the CLI runs from a world-readable copy of the package, on /usr/bin/python3."""
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"):
        pytest.skip("needs root (to switch users) and a world-readable interpreter")
    import shutil
    import tempfile

    from sitewarden.cli import payload

    top = Path(tempfile.mkdtemp(prefix="sitewarden-unwritable-"))
    try:
        os.chmod(top, 0o755)
        cli_copy = top / "cli"
        payload.write_tree(cli_copy, payload.runtime_files())
        shutil.copytree(payload.hooks_dir(), cli_copy / "sitewarden" / "_hooks")
        for p in [cli_copy, *cli_copy.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        site_env = {"PYTHONUSERBASE": str(top / "base")}
        python = "/usr/bin/python3"
        probe = run(python, "-c", "import site; print(site.getusersitepackages())", env=site_env)
        site = Path(probe.stdout.strip())
        site.mkdir(parents=True)
        for d in [site, *site.parents]:
            if d == top.parent:
                break
            os.chmod(d, 0o755)
        env = dict(os.environ, PYTHONPATH=str(cli_copy), HOME=str(top), **site_env)
        env.pop("SITEWARDEN_DISABLE", None)
        proc = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-m",
             "sitewarden", "install", "--python", python, "--user"],
            capture_output=True, text=True, env=env, cwd=str(top), stdin=subprocess.DEVNULL)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "not writable" in proc.stderr and len(proc.stderr.splitlines()) == 1
        assert list(site.iterdir()) == []
    finally:
        shutil.rmtree(top)


def test_cli_in_a_venv_names_the_base_interpreter(tmp_path):
    import sys

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    src = Path(__file__).resolve().parent.parent / "src"
    env = dict(os.environ, PYTHONPATH=str(src))
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "sitewarden", "install"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert "virtual environment" in proc.stderr and "--python /" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def _counting_wrapper(tmp_path, python):
    """A stand-in for ``python`` that logs every start (its first argument) and execs it."""
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text('#!/bin/sh\necho "$1" >> %s\nexec %s "$@"\n' % (log, python))
    wrapper.chmod(0o755)
    return wrapper, log


def test_check_starts_the_target_once_and_sees_the_guard(cli, userbase, tmp_path):
    """`check` learns the facts, the report and whether a start would load the guard from
    one start of the target, isolated and without site (-I -S); the probe's bytecode lands
    in the private cache even with PYTHONDONTWRITEBYTECODE=1, and nowhere else."""
    env, base = userbase
    python = PYTHONS[-1].values[0]
    assert cli("install", "--python", python, "--user", env=env).returncode == 0
    wrapper, log = _counting_wrapper(tmp_path, python)
    env = dict(env, PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    before = {p: p.stat().st_mtime_ns for p in base.rglob("*")}
    proc = cli("check", "--python", str(wrapper), "--json", env=env)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["guard"]["active"] is True
    assert [d["site_dir"] for d in report["guard"]["deployments"]] == [
        str(next(base.glob("lib/python3.*/site-packages")))]
    assert log.read_text().split() == ["-I"]  # one start, isolated (-I -S: without site)
    tag = subprocess.run([python, "-c", "import sys; print(sys.implementation.cache_tag)"],
                         capture_output=True, text=True).stdout.strip()
    cached = list((tmp_path / "cache").glob("sitewarden/runtime/*/sitewarden/**/__pycache__/*.pyc"))
    assert {p.name for p in cached} >= {"check.%s.pyc" % tag, "shadowing.%s.pyc" % tag}
    assert {p: p.stat().st_mtime_ns for p in base.rglob("*")} == before


def test_check_survives_a_start_that_dies(cli, userbase, tmp_path):
    """A ``.pth`` that kills every start: ``check`` never runs it (its probe starts without
    site) and lists it; ``status --live``, which starts the target, says the start died."""
    env, base = userbase
    python = PYTHONS[-1].values[0]
    assert cli("install", "--python", python, "--user", env=env).returncode == 0
    site = next(base.glob("lib/python3.*/site-packages"))
    killer = site / "aaa-killer.pth"
    killer.write_text("import os; os._exit(3)\n")
    proc = cli("check", "--python", python, "--json", env=env)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["layout"]["entries"]
    (f,) = [f for f in report["startup"]["files"] if f["path"] == str(killer)]
    assert [(x["text"], x["runs"]) for x in f["lines"]] == [("import os; os._exit(3)", True)]
    proc = cli("status", "--live", "--python", python, "--json", env=env)
    data = json.loads(proc.stdout)
    assert data["active"] is False and "exit status 3" in data["startup_stderr"] + str(
        data.get("error")), data


@pytest.mark.parametrize("python", PYTHONS)
def test_imports_while_site_runs_do_not_start_the_watch(python, cli, userbase):
    """Imports made by .pth files and usercustomize happen while ``site`` still
    initialises: the watch starts at the program's first import, after everything
    ``site`` does to ``sys.path``."""
    env, base = userbase
    assert cli("install", "--python", python, "--user", env=env).returncode == 0
    site = next(base.glob("lib/python3.*/site-packages"))
    (site / "usercustomize.py").write_text(
        "import colorsys, sys, sitewarden\n"
        "sys.stderr.write('usercustomize: started=%s\\n' % sitewarden._started)\n")
    (site / "zz-late.pth").write_text("import json\n")
    proc = run(python, "-c", "import sitewarden; print(sitewarden._started); import email; "
               "print(sitewarden._started)", env=env)
    assert proc.stderr == "usercustomize: started=False\n"
    assert proc.stdout.split() == ["False", "True"]


def test_uninstall_removes_what_a_killed_first_install_left(cli, userbase):
    """A first install killed before its swap leaves only a hidden staging directory:
    status reports it, and uninstall removes it (the directory is as before)."""
    python = pyenv_interpreters()[-1].executable
    env, base = userbase
    probe = run(python, "-c", "import site; print(site.getusersitepackages())", env=env)
    site = Path(probe.stdout.strip())
    site.mkdir(parents=True)
    (site / "other.pth").write_text("# someone else's\n")
    before = tree_state(base)
    staging = site / ".sitewarden-killed" / "sitewarden"
    staging.mkdir(parents=True)
    (staging / "__init__.py").write_text("")
    status = json.loads(cli("status", "--python", python, "--json", env=env).stdout)
    assert [d["complete"] for d in status["deployments"]] == [False]
    proc = cli("uninstall", "--python", python, "--user", env=env)
    assert proc.returncode == 0, proc.stderr
    assert tree_state(base) == before


def test_a_cli_missing_its_hooks_deploys_nothing(cli, userbase, tmp_path):
    """A partial copy of sitewarden (its package without the hooks a wheel or the
    checkout carries) refuses before writing anything, naming the fix: no runtime is
    left behind without its hook."""
    import shutil

    import sitewarden

    env, base = userbase
    lib = tmp_path / "partial"
    shutil.copytree(os.path.dirname(sitewarden.__file__), lib / "sitewarden",
                    ignore=shutil.ignore_patterns("__pycache__", "_hooks"))
    python = PYTHONS[-1].values[0]
    proc = cli("install", "--python", python, "--user", env=dict(env, PYTHONPATH=str(lib)),
               cwd=str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "incomplete" in proc.stderr and "reinstall sitewarden" in proc.stderr, proc.stderr
    assert not list(base.rglob("sitewarden*")), list(base.rglob("*"))
