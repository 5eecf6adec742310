"""Blocks as a new user meets them (issue 12): each class of hole is a scenario here.

Every test runs on each CPython 3.8+ found (hermetic Debian-shaped copies) and on
Debian's own ``/usr/bin/python3`` (in a private mount namespace, where Debian's
own pip 23.0.1 is tried too), through the guarded targets of ``harness.guarded``.
Installs never reach the network (``--no-index --find-links`` a local wheelhouse).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pytest

from harness import pip_dir, unpacked, wheel
from harness.environ import FAIL_OPEN
from harness.inputs import per_input_python
from harness.spread import ROTATED, rotated, spread, turn

#: A pip that starts and installs on every CPython 3.8-3.13 (and has PEP 668 itself).
NEW_PIP = "24.0"
#: pip 23.0: PEP 668 without the override.
PIP_23_0 = "23.0"
#: The newest pip without PEP 668 of its own.
OLD_PIP = "22.3.1"
#: Debian's own pip (python3-pip, in /usr/lib/python3/dist-packages), on Debian only.
DISTRO_PIP = "distro"

#: Shadowing warnings are silenced (pip and setuptools run from PYTHONPATH shadow Debian's
#: copies); silencing never lifts a block.
PIP_ENV = {"PIP_NO_CACHE_DIR": "1", "PIP_NO_WARN_SCRIPT_LOCATION": "1",
           "SITEWARDEN_SILENCE": "all"}


def can_install(target, version: str) -> bool:
    """pips before 23.2 start on 3.12+ but cannot install there (pkgutil.ImpImporter)."""
    if version == DISTRO_PIP:
        return True
    pip = tuple(int(x) for x in version.split(".")[:2])
    return target.interp.version[:2] < (3, 12) or pip >= (23, 2)


def newest_pip(target, version: str) -> str:
    """``NEW_PIP``, or on Pythons it does not run on (3.14+), the newest pip that does."""
    if version == NEW_PIP and target.interp.version[:2] >= (3, 14):
        from harness import pip_versions_for

        return pip_versions_for(target.interp.version)[-1]
    return version


def pips(target, *versions: str):
    """``versions`` that can install on ``target``, plus Debian's own pip on Debian."""
    out = [newest_pip(target, v) for v in versions if can_install(target, v)]
    if target.interp.is_debian_system:
        out.append(DISTRO_PIP)
    return out


def pip(target, version: str, *args: str, env: Optional[dict] = None):
    version = newest_pip(target, version)
    extra = dict(PIP_ENV)
    if version != DISTRO_PIP:
        extra["PYTHONPATH"] = str(pip_dir(version))
    extra.update(env or {})
    return target.run([target.executable, "-m", "pip", *args], env=extra)


def offline(wheelhouse, *args: str):
    """Install from the wheelhouse only; ``--ignore-installed``: Debian's own six and
    pyparsing already satisfy a plain requirement."""
    return ("--no-index", "--find-links", str(wheelhouse), "--no-deps", "--ignore-installed",
            *args)


def refused(proc, *phrases: str) -> Optional[str]:
    """Why ``proc`` is not one clean PEP 668 refusal showing ``phrases``, or None."""
    out = proc.stdout + proc.stderr
    if proc.returncode != 1:
        return "exit status %d: %s" % (proc.returncode, out[-3000:])
    if out.count("externally-managed-environment") != 1 or "Traceback" in out:
        return "not one clean refusal: " + out[-3000:]
    if "Successfully installed" in out:
        return "installed, then refused: " + out[-3000:]
    for phrase in phrases:
        if phrase not in out:
            return "lacks %r: %s" % (phrase, out[-3000:])
    return None


def ok(proc) -> Optional[str]:
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 or "Traceback" in out or "externally-managed" in out:
        return "exit status %d: %s" % (proc.returncode, out[-3000:])
    return None


def local_names(target):
    return sorted(n for n in target.digest(target.local_dir, skip_pycache=True)
                  if n.startswith("six") and "/" not in n)


def check(failures):
    assert not failures, "%d failures; first: %s" % (len(failures), failures[:2])


# ------------------------------------------------------------------ 1. pip 23.0


@rotated()
def test_pip_23_0_takes_the_override(guarded_target, wheelhouse):
    """pip 23.0 has PEP 668 but not the override: the guard teaches it the flag, the
    variable and the configuration key, as on every pip from 9.0."""
    t = guarded_target
    failures = []
    installs = can_install(t, PIP_23_0)
    conf = t.tmp / "pip.conf"
    conf.write_text("[install]\nbreak-system-packages = true\n")
    conf.chmod(0o644)
    for how, args, env in (
        ("flag", ("--break-system-packages",), {}),
        ("variable", (), {"PIP_BREAK_SYSTEM_PACKAGES": "1"}),
        ("config", (), {"PIP_CONFIG_FILE": str(conf)}),
    ):
        proc = pip(t, PIP_23_0, "install", *args, *offline(wheelhouse, "six"), env=env)
        out = proc.stdout + proc.stderr
        if "no such option" in out or "externally-managed" in out:
            failures.append((how, "override not taken: " + out[-2000:]))
        elif installs and (proc.returncode != 0 or "six.py" not in local_names(t)):
            failures.append((how, "not installed: " + out[-2000:]))
        if installs:
            pip(t, PIP_23_0, "uninstall", "-y", "--break-system-packages", "six")
    problem = refused(pip(t, PIP_23_0, "install", *offline(wheelhouse, "six")), t.marker_phrase)
    if problem:
        failures.append(("no override", problem))
    check(failures)


# ------------------------------------------------------------------ 2. override lifetime

#: --ignore-installed: Debian ships six.
IN_PROCESS = r"""
import os, subprocess, sys
try:
    from pip._internal.cli.main import main
except ImportError:
    from pip._internal import main
wheelhouse = sys.argv[1]
args = ["--no-index", "--find-links", wheelhouse, "--no-deps", "--ignore-installed"]
status = main(["install", "--break-system-packages"] + args + ["six"])
print("in-process", status)
print("left in environ", os.environ.get("_SITEWARDEN_OVERRIDE"))
child = subprocess.run([sys.executable, "-m", "pip", "install", "--force-reinstall"] + args
                       + ["six"], capture_output=True, text=True)
print("child", child.returncode)
sys.stderr.write(child.stdout + child.stderr)
"""


@rotated()
def test_an_override_covers_one_command(guarded_target, wheelhouse):
    """After one in-process pip command with --break-system-packages, an installer
    the program starts later, without an override, is refused."""
    t = guarded_target
    failures = []
    for version in pips(t, NEW_PIP, OLD_PIP):
        env = dict(PIP_ENV)
        if version != DISTRO_PIP:
            env["PYTHONPATH"] = str(pip_dir(version))
        proc = t.run([t.executable, "-c", IN_PROCESS, str(wheelhouse)], env=env)
        lines = proc.stdout.splitlines()
        if "in-process 0" not in lines:
            failures.append((version, "the overridden command failed: " + proc.stdout
                             + proc.stderr[-2000:]))
        elif "left in environ None" not in lines:
            failures.append((version, "override left in os.environ: " + proc.stdout))
        elif "child 1" not in lines or "externally-managed-environment" not in proc.stderr:
            failures.append((version, "later child not refused: " + proc.stdout
                             + proc.stderr[-2000:]))
        pip(t, version, "uninstall", "-y", "--break-system-packages", "six")
    check(failures)


# ------------------------------------------------------------------ 3. destinations


def _setuptools_project(t) -> Path:
    project = t.tmp / "demo"
    if not project.exists():
        project.mkdir()
        (project / "demo.py").write_text("X = 1\n")
        (project / "setup.py").write_text(
            "from setuptools import setup\nsetup(name='demo', version='1.0', "
            "py_modules=['demo'])\n")
        for p in (project, project / "demo.py", project / "setup.py"):
            p.chmod(0o755 if p.is_dir() else 0o644)
    return project


def setup_py(t, *args: str, env: Optional[dict] = None):
    project = _setuptools_project(t)
    extra = {"PYTHONPATH": str(unpacked(wheel("setuptools", "69.5.1"))),
             "SITEWARDEN_SILENCE": "all", "PYTHONWARNINGS": "ignore", **(env or {})}
    # cd inside: in the Debian namespace, nsenter's --wd is the host's view of /tmp.
    return t.run(["sh", "-c", 'cd "$0" && exec "$@"', str(project), t.executable, "setup.py",
                  *args], env=extra)


def run_installer(t, *args: str, env: Optional[dict] = None):
    extra = {"PYTHONPATH": str(unpacked(wheel("installer", "0.7.0"))),
             "SITEWARDEN_SILENCE": "all", **(env or {})}
    return t.run([t.executable, "-m", "installer", *args, str(wheel("six", "1.17.0"))],
                  env=extra)


#: Prints the --prefix whose purelib is argv[1] (sysconfig's prefix scheme, as pip's).
PREFIX_OF = r"""
import os, sys, sysconfig
scheme = getattr(sysconfig, "get_preferred_scheme", lambda k: "posix_prefix")("prefix")
path = sys.argv[1]
for up in (3, 4):
    prefix = path
    for _ in range(up):
        prefix = os.path.dirname(prefix)
    if sysconfig.get_paths(scheme, vars={"base": prefix, "platbase": prefix})["purelib"] == path:
        print(prefix)
        break
"""


def landing_prefix(t) -> str:
    """The ``--prefix`` whose files land in the local directory (hermetic: its prefix;
    Debian 12: /usr, as /usr/local gives /usr/local/local/lib/python3.11/dist-packages)."""
    proc = t.python("-c", PREFIX_OF, str(t.local_dir))
    assert proc.stdout.strip(), proc.stderr
    return proc.stdout.strip()


def in_rotation(t, cases, versions):
    """``[(case, pip)]``: each of ``cases`` with one of ``versions`` (the upstream pips,
    in rotation by the target's turn, ``harness.spread.turn``: a Latin square over the
    interpreters, each interpreter runs every case and every pip, and every (case, pip)
    pair runs on some of them) and with Debian's own pip where it is one of them."""
    upstream = [v for v in versions if v != DISTRO_PIP]
    distro = [v for v in versions if v == DISTRO_PIP]
    turn_ = turn(t)
    return [(case, version) for index, case in enumerate(cases)
            for version in ([upstream[(index + turn_) % len(upstream)]] if upstream else [])
            + distro]


@rotated()
def test_destinations_that_resolve_into_the_interpreter(guarded_target, wheelhouse):
    """--target, --prefix and --root (pip), --root (setup.py, ensurepip) and --destdir
    (installer) are judged by where the files land: into the interpreter's own
    directories they are refused as a plain install is; elsewhere they are not.

    Each destination runs with one upstream pip, in rotation over the interpreters
    (:func:`in_rotation`), and with Debian's own; the override with every pip."""
    t = guarded_target
    prefix = landing_prefix(t)
    link = t.tmp / "link-to-site"
    link.symlink_to(t.local_dir)
    failures = []
    versions = pips(t, NEW_PIP, OLD_PIP)
    into = (("--target", str(t.local_dir)), ("--target", str(link)),
            ("--prefix", str(prefix)), ("--root", "/"))
    for args, version in in_rotation(t, into, versions):
        problem = refused(pip(t, version, "install", *args, *offline(wheelhouse, "six")),
                          t.marker_phrase)
        if problem:
            failures.append((version, args, problem))
        if local_names(t):
            failures.append((version, args, "written: %s" % local_names(t)))
    elsewhere = (("--target", str(t.tmp / "t")), ("--prefix", str(t.tmp / "p")),
                 ("--root", str(t.tmp / "r")))
    for args, version in in_rotation(t, elsewhere, versions):
        problem = ok(pip(t, version, "install", *args, *offline(wheelhouse, "six")))
        if problem:
            failures.append((version, args, problem))
    for version in versions:
        # With the override, the destination is the interpreter's and is allowed.
        proc = pip(t, version, "install", "--break-system-packages", "--target",
                   str(t.local_dir), *offline(wheelhouse, "six"))
        if ok(proc) or "six.py" not in local_names(t):
            failures.append((version, "--target with override", ok(proc)))
        t.put(t.local_dir / "six.py", "absent")
        for name in local_names(t):
            t.root("import shutil, sys; shutil.rmtree(sys.argv[1])", str(t.local_dir / name))
    for what, proc in (("setup.py install --root /", setup_py(t, "install", "--root", "/")),
                       ("ensurepip --root /", t.python("-m", "ensurepip", "--root", "/")),
                       ("installer --destdir /", run_installer(t, "--destdir", "/"))):
        problem = refused(proc, t.marker_phrase)
        if problem:
            failures.append((what, problem))
    check(failures)


# ------------------------------------------------------------------ 4. distro directories

#: ``installer.install()`` of the wheel argv[2] with every scheme path argv[1], from code:
#: sitewarden's ExternallyManagedError carries the message; printed as pip prints its own.
INSTALLER_INTO = r"""
import sys, sitewarden
from installer import install
from installer.destinations import SchemeDictionaryDestination
from installer.sources import WheelFile
keys = ("purelib", "platlib", "headers", "scripts", "data")
dest = SchemeDictionaryDestination(dict.fromkeys(keys, sys.argv[1]), sys.executable, "posix")
with WheelFile.open(sys.argv[2]) as source:
    try:
        install(source, dest, {})
    except sitewarden.ExternallyManagedError as exc:
        sys.exit(str(exc))
"""


@rotated()
def test_distro_directory_refused_before_anything_is_written(guarded_target, wheelhouse):
    """An install whose files would land in a distro directory is refused up front,
    with the PEP 668 message naming the directory, override or not."""
    t = guarded_target
    before = t.digest(t.distro_dir, skip_pycache=True)  # imports as root may write bytecode
    failures = []
    for version in pips(t, NEW_PIP, OLD_PIP):
        for extra in ((), ("--break-system-packages",)):
            proc = pip(t, version, "install", *extra, "--target", str(t.distro_dir),
                       *offline(wheelhouse, "six"))
            problem = refused(proc, str(t.distro_dir), "package manager")
            if problem:
                failures.append((version, extra, problem))
    for env in ({}, {"PIP_BREAK_SYSTEM_PACKAGES": "1"}):
        proc = setup_py(t, "install", "--install-lib", str(t.distro_dir), env=env)
        problem = refused(proc, str(t.distro_dir), "package manager")
        if problem:
            failures.append(("setup.py", env, problem))
        proc = t.run([t.executable, "-c", INSTALLER_INTO, str(t.distro_dir),
                      str(wheel("six", "1.17.0"))],
                     env={"PYTHONPATH": str(unpacked(wheel("installer", "0.7.0"))), **env})
        problem = refused(proc, str(t.distro_dir), "package manager")
        if problem:
            failures.append(("installer.install()", env, problem))
    if t.digest(t.distro_dir, skip_pycache=True) != before:
        failures.append("the distro directory changed")
    check(failures)


# ------------------------------------------------------------------ 5. damaged marker

#: name -> (GuardedPython.put kind, data)
DAMAGED_MARKERS = {
    "directory": ("dir", b""),
    "dangling symlink": ("symlink", b"nowhere/EXTERNALLY-MANAGED"),
    "symlink loop": ("symlink", b"EXTERNALLY-MANAGED"),
}


@rotated()
def test_damaged_marker_fails_closed_for_every_pip(guarded_target, wheelhouse):
    """A marker that exists in any form blocks pip 23+ (upstream and Debian's) as it
    blocks older pips, though pip's own check would let the install through.

    Each interpreter runs every form and every upstream pip, paired in rotation
    (:func:`in_rotation`); Debian's own pip runs with every form."""
    t = guarded_target
    failures = []
    versions = pips(t, NEW_PIP, "23.0.1", OLD_PIP)
    for name, version in in_rotation(t, list(DAMAGED_MARKERS), versions):
        kind, data = DAMAGED_MARKERS[name]
        t.put(t.marker, kind, data)
        # (uninstall six, never pip: a regression would remove the shared pip on PYTHONPATH)
        for args in (("install", *offline(wheelhouse, "six")), ("uninstall", "-y", "six")):
            problem = refused(pip(t, version, *args), "could not read")
            if problem:
                failures.append((name, version, args[0], problem))
        if local_names(t):
            failures.append((name, version, "installed"))
    check(failures)


# ------------------------------------------------------------------ 6. damaged runtime

#: Runtime files deleted one at a time (paths inside the deployed ``sitewarden`` package).
DAMAGE = ["refusal.py", "patching.py", "pip_guard.py", "marker.py", "scheme_guard.py",
          "pathcheck.py", "_watch.py", "hooked.py", "_vendor/packaging/version.py"]

SCRIPT = "import random\nprint('script ran', random.X)\n"


def _runtime_file(t, rel: str) -> Optional[Path]:
    """``rel`` inside the deployed package, wherever the layout put it."""
    names = t.digest(t.local_dir / "sitewarden", skip_pycache=True)
    found = [n for n in names if n == rel or n.endswith("/" + rel)]
    return t.local_dir / "sitewarden" / found[0] if found else None


def _scripts(t) -> None:
    """A script and a stdlib-named local module beside it, in ``t.tmp/scripts``."""
    scripts = t.tmp / "scripts"
    scripts.mkdir()
    (scripts / "random.py").write_text("X = 1\n")  # a stdlib-named local module
    (scripts / "main.py").write_text(SCRIPT)
    for p in scripts.iterdir():
        p.chmod(0o644)
    scripts.chmod(0o755)
    os.chmod(t.tmp, 0o755)


#: One guarded python per interpreter, shared by its damaged-runtime tests (one xdist
#: group: each repairs the runtime before the next).
damaged_python = per_input_python(None, DAMAGE, prepare=_scripts)


#: Each file on a third of the interpreters, in rotation (each interpreter deletes three).
@pytest.mark.parametrize("python, rel", spread(ROTATED, DAMAGE, group="damaged-runtime"))
def test_damaged_runtime_keeps_programs_working_and_refuses_installs(damaged_python, python,
                                                                     rel, wheelhouse):
    """With one file of the deployed runtime missing, every program keeps working,
    installs are refused with one line naming the damage and the fix, and ``status``
    says the deployment is incomplete.  The files of ``DAMAGE`` one after another in one
    guarded python per interpreter, each test repairing the runtime at its end; each file
    on a third of the interpreters (``spread(ROTATED)``), each interpreter with three."""
    t = damaged_python.get(python)
    try:
        failures = _damaged_runtime(t, rel, wheelhouse)
    except BaseException:
        damaged_python.discard()  # the runtime may be left damaged: the next test starts anew
        raise
    check(failures)


def _damaged_runtime(t, rel: str, wheelhouse) -> list:
    """Delete ``rel`` from ``t``'s deployed runtime, try programs, installs and
    ``status``, repair (``sitewarden install``): the failures.  Programs run as users
    run them (``FAIL_OPEN``): the damage is on purpose, the strict mode would raise it."""
    scripts = t.tmp / "scripts"
    failures = []
    path = _runtime_file(t, rel)
    if path is None:
        return [(rel, "not in the deployed runtime")]
    t.put(path, "absent")
    cache = path.parent / "__pycache__"
    t.root("import glob, os, sys\nfor p in glob.glob(sys.argv[1]): os.unlink(p)",
           str(cache / (path.stem + ".*")))
    for version in pips(t, NEW_PIP):
        proc = pip(t, version, "list", env=FAIL_OPEN)
        if proc.returncode != 0 or "Traceback" in proc.stderr:
            failures.append((rel, version, "pip list", proc.stdout + proc.stderr))
        proc = pip(t, version, "install", *offline(wheelhouse, "six"), env=FAIL_OPEN)
        lines = [ln for ln in proc.stderr.splitlines() if "sitewarden" in ln]
        if (proc.returncode != 1 or "Traceback" in proc.stderr or len(lines) != 1
                or rel.rpartition("/")[2] not in lines[0]
                or "sitewarden install" not in lines[0] or local_names(t)):
            failures.append((rel, version, "pip install", proc.returncode, proc.stderr))
    proc = t.run([t.executable, str(scripts / "main.py")], env=FAIL_OPEN)
    if proc.returncode != 0 or "script ran 1" not in proc.stdout or "Traceback" in proc.stderr:
        failures.append((rel, "script", proc.stdout + proc.stderr))
    proc = t.python("-m", "ensurepip", env=FAIL_OPEN)
    if proc.returncode != 1 or "Traceback" in proc.stderr or "sitewarden install" not in \
            proc.stderr:
        failures.append((rel, "ensurepip", proc.returncode, proc.stderr[-2000:]))
    proc = t.cli("status", "--python", t.executable, env=FAIL_OPEN)
    if "incomplete" not in proc.stdout or rel not in proc.stdout:
        failures.append((rel, "status", proc.stdout + proc.stderr))
    t.install()  # the fix the message names
    proc = pip(t, NEW_PIP, "install", *offline(wheelhouse, "six"))
    if refused(proc, t.marker_phrase):
        failures.append((rel, "after repair", refused(proc, t.marker_phrase)))
    return failures


# ------------------------------------------------------------------ 7. venv as target


@rotated()
def test_install_into_a_venv_is_refused_naming_the_base(guarded_target):
    """``sitewarden install --python VENV/bin/python`` is refused (exit 2), naming the
    base interpreter; nothing is deployed."""
    t = guarded_target
    venv = t.tmp / "venv"
    proc = t.python("-m", "venv", "--without-pip", str(venv))
    assert proc.returncode == 0, proc.stderr
    before = t.digest(t.local_dir)
    failures = []
    for command in ("install", "uninstall"):
        proc = t.cli(command, "--python", str(venv / "bin" / "python"))
        if proc.returncode != 2 or "--python " + t.executable not in proc.stderr \
                or "Traceback" in proc.stderr:
            failures.append((command, proc.returncode, proc.stdout + proc.stderr))
    if t.digest(t.local_dir) != before:
        failures.append("the base's site directory changed")
    check(failures)


# ------------------------------------------------------------------ messages


@rotated()
def test_each_refusal_names_the_override_its_installer_accepts(guarded_target, wheelhouse):
    """pip's refusal names --break-system-packages; ensurepip, setup.py and installer,
    which reject that option, name PIP_BREAK_SYSTEM_PACKAGES=1 instead."""
    t = guarded_target
    failures = []
    for version in pips(t, OLD_PIP, NEW_PIP):
        proc = pip(t, version, "install", *offline(wheelhouse, "six"))
        if refused(proc, "--break-system-packages"):
            failures.append((version, refused(proc, "--break-system-packages")))
    for what, proc in (("ensurepip", t.python("-m", "ensurepip")),
                       ("setup.py", setup_py(t, "install")),
                       ("installer", run_installer(t))):
        problem = refused(proc, "PIP_BREAK_SYSTEM_PACKAGES=1")
        if problem or "--break-system-packages" in proc.stdout + proc.stderr:
            failures.append((what, problem or proc.stderr))
    check(failures)


def _distro_six(t):
    from harness import make_dist

    t.copy_in(lambda stage: make_dist(stage, "six", "1.16.0",
                                      {"six.py": "__version__ = '1.16.0'\n"},
                                      kind="egg-info", installer="debian"), t.distro_dir)


REPORT = "distro packages are now shadowed"


@rotated()
def test_install_report_is_about_this_install(guarded_target, wheelhouse):
    """The report after an install: quiet under -qq (a warning: pip's -q shows those),
    only what this install changed,
    and printed after overridden setup.py and installer installs too."""
    t = guarded_target
    _distro_six(t)
    failures = []
    override = {"PIP_BREAK_SYSTEM_PACKAGES": "1"}
    proc = pip(t, NEW_PIP, "install", "-qq", *offline(wheelhouse, "six==1.17.0"), env=override)
    if ok(proc) or REPORT in proc.stderr:
        failures.append(("-qq", ok(proc) or proc.stderr))
    # An unrelated install does not repeat the existing shadow.
    proc = pip(t, NEW_PIP, "install", *offline(wheelhouse, "iniconfig"), env=override)
    if ok(proc) or REPORT in proc.stderr:
        failures.append(("unrelated", ok(proc) or proc.stderr))
    proc = pip(t, NEW_PIP, "install", "--force-reinstall", *offline(wheelhouse, "six==1.17.0"),
               env=override)
    if ok(proc) or REPORT not in proc.stderr or "six 1.16.0" not in proc.stderr:
        failures.append(("reinstall", ok(proc) or proc.stderr))
    pip(t, NEW_PIP, "uninstall", "-y", "six", env=override)
    proc = run_installer(t, env=override)
    if ok(proc) or REPORT not in proc.stderr:
        failures.append(("installer", ok(proc) or proc.stderr))
    pip(t, NEW_PIP, "uninstall", "-y", "six", env=override)
    # setup.py install of a module the distro also ships.
    project = _setuptools_project(t)
    (project / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='six', version='9.0', py_modules=['six'])\n")
    (project / "six.py").write_text("X = 9\n")
    (project / "six.py").chmod(0o644)
    proc = setup_py(t, "install", "--single-version-externally-managed", "--record",
                    str(t.tmp / "record.txt"), env=override)
    if ok(proc) or REPORT not in proc.stderr:
        failures.append(("setup.py", ok(proc) or proc.stderr))
    check(failures)


@pytest.fixture(autouse=True)
def _readable_tmp(request):
    """The target's tmp directory holds what the target reads (as root, or nobody)."""
    if "guarded_target" in request.fixturenames:
        os.chmod(request.getfixturevalue("guarded_target").tmp, 0o755)
    yield

