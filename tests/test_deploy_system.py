"""Deploying into system interpreters: Debian's real /usr/bin/python3 (inside a
private mount namespace), the interpreters of the debootstrapped Debian 13 and sid
roots (``debian_any``: python3 3.13, 3.14 and python3.15) and a hermetic
Debian-shaped copy of every pyenv CPython.

These are the foundation's "done when" checks: install makes every later start
load the guard, SITEWARDEN_DISABLE keeps it out, installing twice leaves one
.pth, uninstall restores the directory exactly, the sitecustomize hook keeps
Debian's apport hook and is removed byte for byte, and status reports the
real marker.
"""

from __future__ import annotations

import ast
import configparser
import json
import subprocess

import pytest

from harness import pip_dir
from harness.spread import spread

#: Reports the state at the end of startup without importing anything (``sys``
#: is already loaded), so no import reaches the finder: what ``-c pass`` leaves.
SHOW = ("import sys; sys.stdout.write(repr({'finders': [getattr(f, '__name__', 0) for f in "
        "sys.meta_path], 'modules': sorted(sys.modules)}))")


def _started(run, python, env=None, *flags):
    proc = run([python, *flags, "-c", SHOW], env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return ast.literal_eval(proc.stdout)


def _guarded(run, python, env=None, *flags):
    return "sitewarden" in _started(run, python, env, *flags)["finders"]


# ------------------------------------------------------------------ Debian


def test_debian_install_activate_disable_uninstall(debian_any):
    ns = debian_any
    # Debian ships .pth files (setuptools' distutils-precedence.pth): the baseline has
    # paid for reading one, so what install adds is the guard's alone.
    distro_pths = [p for p in ns.tree_digest(str(ns.distro_dir)) if p.endswith(".pth")]
    assert distro_pths, "expected a .pth file in %s" % ns.distro_dir
    before = ns.tree_digest(str(ns.local_dir))
    baseline = _started(ns.run, ns.executable)["modules"]

    proc = ns.run([*ns.cli_argv, "install", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    assert "deployed sitewarden" in proc.stdout and "active: yes" in proc.stdout
    assert str(ns.local_dir) in proc.stdout

    started = _started(ns.run, ns.executable)
    assert started["finders"].count("sitewarden") == 1
    # Startup imports nothing beyond the baseline but sitewarden itself.
    assert sorted(set(started["modules"]) - set(baseline)) == ["sitewarden"]
    assert not _guarded(ns.run, ns.executable, {"SITEWARDEN_DISABLE": "1"})
    # -I and -E still load a system deployment; -S never does.
    assert _guarded(ns.run, ns.executable, None, "-I")
    assert _guarded(ns.run, ns.executable, None, "-E")
    assert _guarded(ns.run, ns.executable, None, "-s")
    assert not _guarded(ns.run, ns.executable, None, "-S")

    # Installing twice upgrades in place: one .pth, one finder.
    assert ns.run([*ns.cli_argv, "install", "--python", ns.executable]).returncode == 0
    digest = ns.tree_digest(str(ns.local_dir))
    pths_before = {p for p in before if p.endswith(".pth")}
    assert {p for p in digest if p.endswith(".pth")} - pths_before == {"sitewarden.pth"}
    assert _started(ns.run, ns.executable)["finders"].count("sitewarden") == 1

    proc = ns.run([*ns.cli_argv, "uninstall", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    assert ns.tree_digest(str(ns.local_dir)) == before
    assert not _guarded(ns.run, ns.executable)


def test_debian_refusals_and_orphaned_hook(debian_any, wheelhouse):
    """Guarded: an old pip run from its wheel and ``ensurepip --user`` are refused with
    the PEP 668 message and the marker's text.  Then the runtime is deleted by hand: every
    start stays silent, ``status`` and ``check`` name the hook left behind and the exact
    command that removes it, and ``uninstall`` leaves the site directory as it was."""
    ns = debian_any
    before = ns.tree_digest(str(ns.local_dir))
    assert ns.run([*ns.cli_argv, "install", "--python", ns.executable]).returncode == 0
    marker_text = "To install Python packages system-wide, try apt install"
    old_pip = {"PYTHONPATH": str(pip_dir("22.3.1"))}
    for argv, env in (([ns.executable, "-m", "pip", "install", "--no-index", "--find-links",
                        str(wheelhouse), "six"], old_pip),
                      ([ns.executable, "-m", "ensurepip", "--user"], None)):
        proc = ns.run(argv, env=env)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, out
        assert "externally-managed-environment" in out and marker_text in out, out
        assert "Traceback" not in out, out

    runtime = ns.local_dir / "sitewarden"
    assert ns.run(["rm", "-rf", str(runtime)]).returncode == 0
    for flags in ([], ["-I"], ["-c", "import json"]):
        proc = ns.run([ns.executable, *(flags if "-c" in flags else [*flags, "-c", "pass"])])
        assert proc.returncode == 0 and proc.stderr == "", (flags, proc.stderr)
    hook = str(ns.local_dir / "sitewarden.pth")
    status = json.loads(ns.cli("status", "--python", ns.executable, "--json").stdout)
    assert [(o["hook"], o["kind"]) for o in status["orphans"]] == [(hook, "pth")]
    assert status["orphans"][0]["remove"] == "rm " + hook
    text = ns.run([*ns.cli_argv, "status", "--python", ns.executable]).stdout
    assert "orphaned hook: %s: its runtime %s is missing" % (hook, runtime) in text, text
    assert "remove it: rm %s" % hook in text and "sitewarden uninstall --python %s" % (
        ns.executable) in text, text
    proc = ns.run([*ns.cli_argv, "check", "--python", ns.executable, "--json"])
    kinds = [f["kind"] for f in json.loads(proc.stdout)["findings"]]
    assert proc.returncode == 1 and "orphaned-hook" in kinds, proc.stdout
    proc = ns.run([*ns.cli_argv, "uninstall", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    assert ns.tree_digest(str(ns.local_dir)) == before


def test_debian_status_reports_real_marker(debian_any):
    ns = debian_any
    proc = ns.run([*ns.cli_argv, "status", "--python", ns.executable, "--json"])
    assert proc.returncode == 1, proc.stderr  # not guarded where the marker applies
    data = json.loads(proc.stdout)
    marker = data["marker"]
    assert marker["marker_path"] == "/usr/lib/python%s/EXTERNALLY-MANAGED" % (
        ns.interp.short_version)
    assert marker["applies"] is True and marker["problem"] is None
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(ns.read_bytes(str(ns.marker)).decode("utf-8"))
    assert marker["message"] == parser["externally-managed"]["Error"].strip("\n")
    assert marker["message"].startswith("To install Python packages system-wide, try apt")
    assert data["deployments"] == [] and data["active"] is False


def test_debian_sitecustomize_hook_keeps_apport(debian_any):
    ns = debian_any
    conffile = "/etc/python%s/sitecustomize.py" % ns.interp.short_version
    original = ns.read_bytes(conffile)
    assert b"apport_python_hook" in original
    local_before = ns.tree_digest(str(ns.local_dir))

    proc = ns.run([*ns.cli_argv, "install", "--python", ns.executable, "--hook", "sitecustomize"])
    assert proc.returncode == 0, proc.stderr
    edited = ns.read_bytes(conffile)
    assert edited.startswith(original), "existing content is kept, in place"
    assert b">>> sitewarden guard >>>" in edited[len(original):]
    assert not ns.exists(str(ns.local_dir / "sitewarden.pth"))
    assert _guarded(ns.run, ns.executable)
    # Debian's own hook still runs first: the stdlib link still points at the conffile.
    probe = ns.run([ns.executable, "-c", "import sitecustomize; print(sitecustomize.__file__)"])
    assert probe.stdout.strip() == "/usr/lib/python%s/sitecustomize.py" % ns.interp.short_version
    assert not _guarded(ns.run, ns.executable, {"SITEWARDEN_DISABLE": "1"})

    proc = ns.run([*ns.cli_argv, "uninstall", "--python", ns.executable])
    assert proc.returncode == 0, proc.stderr
    assert ns.read_bytes(conffile) == original
    assert ns.tree_digest(str(ns.local_dir)) == local_before


# ------------------------------------------------------------------ hermetic


@pytest.mark.parametrize("base", spread(targets="hermetic"))
def test_hermetic_system_install(base, make_hermetic, cli):
    hp = make_hermetic(base)
    env = hp.env()

    def run(argv, env=env):
        return subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True)

    # Real interpreters already read .pth files at startup (Debian ships several);
    # reading one costs modules of its own on 3.8/3.9 (_bootlocale, _locale).
    # The baseline pays that too, so the comparison is about the guard alone.
    (hp.distro_dir / "00-baseline.pth").write_text("# any .pth file\n")
    before = {p.name for p in hp.local_dir.iterdir()}
    baseline = _started(run, hp.executable)["modules"]
    proc = cli("install", "--python", hp.executable, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (hp.local_dir / "sitewarden.pth").is_file()
    started = _started(run, hp.executable)
    assert "sitewarden" in started["finders"]
    # Only the guard's own module: 3.13 imports linecache after site for -c, from
    # C; that is not the program's first import, so the path checks stay unloaded.
    assert sorted(set(started["modules"]) - set(baseline)) == ["sitewarden"]
    assert not _guarded(run, hp.executable, dict(env, SITEWARDEN_DISABLE="1"))

    # Never into the distro directory, chosen with --site-dir: exit 2, nothing written.
    assert cli("uninstall", "--python", hp.executable, env=env).returncode == 0
    assert {p.name for p in hp.local_dir.iterdir()} == before
    proc = cli("install", "--python", hp.executable, "--site-dir", str(hp.distro_dir),
               env=env)
    assert proc.returncode == 2 and "the distribution's site directory" in proc.stderr, (
        proc.stdout + proc.stderr)
    assert not _guarded(run, hp.executable)
    status = json.loads(cli("status", "--python", hp.executable, "--json", env=env).stdout)
    assert status["deployments"] == []
    assert status["marker"]["applies"] and "hermetic" in status["marker"]["message"]
    assert [p.name for p in hp.distro_dir.iterdir()] == ["00-baseline.pth"]


@pytest.mark.parametrize("base", spread(targets="hermetic")[-1:])
def test_hermetic_sitecustomize_created_and_removed(base, make_hermetic, cli):
    hp = make_hermetic(base)
    env = hp.env()
    assert not (hp.local_dir / "sitecustomize.py").exists()
    proc = cli("install", "--python", hp.executable, "--hook", "sitecustomize", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (hp.local_dir / "sitecustomize.py").is_file()
    assert _guarded(lambda argv, env=env: subprocess.run(
        [str(a) for a in argv], env=env, capture_output=True, text=True), hp.executable)
    assert cli("uninstall", "--python", hp.executable, env=env).returncode == 0
    assert list(hp.local_dir.iterdir()) == []
