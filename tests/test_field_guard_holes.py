"""Two field holes of the installer guard, each a class of bug, on every target.

1. A user site that resolves into the standard library or a distro directory
   (``PYTHONUSERBASE=/usr``, a user site linked to ``/usr/lib/python3/dist-packages``)
   is the distro's, not the installer's: PEP 668's second rule judges every
   destination by its real path, the user site included, override or not.
2. ``pip uninstall --break-system-packages <a distro package>`` is refused by
   every pip (Debian's own, which says "Not uninstalling ... outside environment",
   and upstream ones, which say "No files were found to uninstall", both exiting
   0): one refusal naming the distro package to remove instead, printed before
   pip says anything about that uninstall, exit status 1.

Every test runs on each guarded target (``harness.guarded``): hermetic CPythons,
whose "distro" directories are the hermetic prefix's ``lib/python3/dist-packages``
and its standard library; Debian 12's python in a namespace and the roots' Debian
13, sid 3.14 and sid 3.15, with Debian's own pip.  Installs never reach the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

from harness import make_dist, pip_dir, pip_versions_for, unpacked, wheel
from harness.spread import rotated

#: Debian's own pip (python3-pip), run as ``python3 -m pip`` on the Debian targets.
DISTRO_PIP = "distro"
#: The upstream pip the install scenarios run on the hermetic pythons (3.8-3.13).
NEW_PIP = "24.0"

#: (Not PIP_NO_CACHE_DIR: pip 9 reads it as a cache directory named 1 and fails.)
PIP_ENV = {"PIP_NO_WARN_SCRIPT_LOCATION": "1", "SITEWARDEN_SILENCE": "all"}

#: What pip prints about an uninstall it goes on with: none of it may show once refused.
PIP_UNINSTALL_PHRASES = ("Found existing installation", "Not uninstalling",
                         "No files were found to uninstall", "Uninstalling six",
                         "Successfully uninstalled", "Can't uninstall", "Skipping six")


def is_debian(t) -> bool:
    return t.interp.is_debian_system or t.release is not None


def pip(t, version: str, *args: str, env: Optional[dict] = None, merged: bool = False):
    """``python -m pip args`` with Debian's pip or that upstream pip (from its wheel);
    ``merged``: stderr into stdout, in the order pip wrote them."""
    extra = dict(PIP_ENV)
    if version != DISTRO_PIP:
        extra["PYTHONPATH"] = str(pip_dir(version))
    extra.update(env or {})
    argv = [t.executable, "-m", "pip", *args]
    if merged:
        argv = ["sh", "-c", 'exec "$@" 2>&1', "sh", *argv]
    return t.run(argv, env=extra)


def offline(wheelhouse, *args: str):
    return ("--no-index", "--find-links", str(wheelhouse), "--no-deps", "--no-cache-dir", *args)


def refused_by_scheme_rule(proc, directory) -> Optional[str]:
    """Why ``proc`` is not one clean refusal by the scheme rule naming ``directory``."""
    out = proc.stdout + proc.stderr
    if proc.returncode != 1 or "Traceback" in out:
        return "exit status %d: %s" % (proc.returncode, out[-3000:])
    if out.count("externally-managed-environment") != 1:
        return "not one refusal: " + out[-3000:]
    if ("the files would land in %s" % directory) not in out or "with or without an " \
            "override" not in out:
        return "not the scheme rule's message for %s: %s" % (directory, out[-3000:])
    return None


def check(failures):
    assert not failures, "%d failures; first: %s" % (len(failures), failures[:2])


# ------------------------------------------------------------------ 1. user site


def stdlib_user_base(t) -> Path:
    """A ``PYTHONUSERBASE`` whose user site lies inside the standard library directory:
    ``/usr`` on Debian (user site ``/usr/lib/python3.X/site-packages``); on a hermetic
    python, whose ``<prefix>/lib/python3.X/site-packages`` is its own scheme directory
    (pip's target, legitimately the installer's), the standard library directory
    itself (user site ``<stdlib>/lib/python3.X/site-packages``)."""
    prefix = t.stdlib.parent.parent
    if prefix / "lib" / t.stdlib.name / "site-packages" != t.local_dir:
        return prefix
    return t.stdlib


#: Makes the directories above argv[1] and links it to argv[2].
LINK = "import os, sys; os.makedirs(os.path.dirname(sys.argv[1])); os.symlink(sys.argv[2], " \
       "sys.argv[1])"


def setup_py_user(t, env: dict):
    """``setup.py install --user`` of a one-module project, with setuptools 69.5.1."""
    project = t.tmp / "demo"
    project.mkdir()
    (project / "demo.py").write_text("X = 1\n")
    (project / "setup.py").write_text("from setuptools import setup\nsetup(name='demo', "
                                      "version='1.0', py_modules=['demo'])\n")
    for p in (project, project / "demo.py", project / "setup.py"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    # HOME: --user makes every path of its config_vars under ~ a directory, and pyenv's
    # interpreters live under /root.
    extra = {"PYTHONPATH": str(unpacked(wheel("setuptools", "69.5.1"))), "HOME": str(t.tmp),
             "SITEWARDEN_SILENCE": "all", "PYTHONWARNINGS": "ignore", **env}
    # cd inside: in the Debian namespace, nsenter's --wd is the host's view of /tmp.
    return t.run(["sh", "-c", 'cd "$0" && exec "$@"', str(project), t.executable, "setup.py",
                  "install", "--user"], env=extra)


@rotated()
def test_user_site_that_resolves_into_the_distro_or_stdlib_is_refused(guarded_target,
                                                                       wheelhouse):
    """``pip install --user --break-system-packages`` with a user base whose user site
    is inside the standard library directory, then with a user site linked to the
    distro directory (and ``setup.py install --user`` there, overridden by the
    variable): each refused by the scheme rule, naming the protected directory, and
    neither directory changes.  Debian's own pip on Debian, pip 24.0 elsewhere."""
    t = guarded_target
    version = DISTRO_PIP if is_debian(t) else NEW_PIP
    failures = []

    base = stdlib_user_base(t)
    before = t.digest(t.stdlib, skip_pycache=True)  # imports as root may write bytecode
    proc = pip(t, version, "install", "--user", "--break-system-packages",
               *offline(wheelhouse, "iniconfig"), env={"PYTHONUSERBASE": str(base)})
    problem = refused_by_scheme_rule(proc, t.stdlib)
    if problem:
        failures.append(("PYTHONUSERBASE=%s" % base, problem))
    if t.digest(t.stdlib, skip_pycache=True) != before:
        failures.append(("PYTHONUSERBASE=%s" % base, "the standard library changed"))

    t.root(LINK, str(t.user_site), str(t.distro_dir))
    before = t.digest(t.distro_dir, skip_pycache=True)
    proc = pip(t, version, "install", "--user", "--break-system-packages",
               *offline(wheelhouse, "iniconfig"))
    problem = refused_by_scheme_rule(proc, t.distro_dir)
    if problem:
        failures.append(("user site -> distro dir, pip", problem))
    proc = setup_py_user(t, {"PIP_BREAK_SYSTEM_PACKAGES": "1"})
    problem = refused_by_scheme_rule(proc, t.distro_dir)
    if problem:
        failures.append(("user site -> distro dir, setup.py", problem))
    if t.digest(t.distro_dir, skip_pycache=True) != before:
        failures.append(("user site -> distro dir", "the distro directory changed"))
    check(failures)


# ------------------------------------------------------------------ 2. uninstall


def uninstall_pips(t) -> List[str]:
    """Debian's own pip on Debian; elsewhere the oldest pip of the matrix that starts
    and installs on that python, and the newest."""
    if is_debian(t):
        return [DISTRO_PIP]
    usable = [v for v in pip_versions_for(t.interp.version)
              if t.interp.version[:2] < (3, 12) or tuple(map(int, v.split(".")[:2])) >= (23, 2)]
    return sorted({usable[0], usable[-1]}, key=usable.index)


#: What the refusal tells the user to run instead: dpkg's owner of six on Debian (the
#: host and the roots ship python3-six); on a hermetic python, whose "distro" six is no
#: package's, the guard's generic form for this machine (a Debian host): the same.
DISTRO_COMMAND = "apt remove python3-six"


@rotated()
def test_uninstalling_a_distro_package_is_refused_first_by_every_pip(guarded_target):
    """With the override, removing a local copy of six works; removing the distro's
    six is refused: exit status 1, one refusal naming the distro directory and the
    command to use instead, printed before pip says anything about that uninstall,
    and the distro directory unchanged."""
    t = guarded_target
    if not is_debian(t):
        t.copy_in(lambda stage: make_dist(stage, "six", "1.16.0", {"six.py": "X = 1\n"},
                                          kind="egg-info"), t.distro_dir)
    before = t.digest(t.distro_dir, skip_pycache=True)
    failures = []
    for version in uninstall_pips(t):
        # A local copy (what pip leaves, with a RECORD) is pip's to remove.
        t.copy_in(lambda stage: make_dist(stage, "six", "1.17.0", {"six.py": "X = 2\n"},
                                          installer="pip"), t.local_dir)
        proc = pip(t, version, "uninstall", "-y", "--break-system-packages", "six")
        out = proc.stdout + proc.stderr
        if proc.returncode != 0 or "Successfully uninstalled six" not in out or \
                "cannot uninstall" in out:
            failures.append((version, "local copy not removed", out[-3000:]))
        if any(n.startswith("six") for n in t.digest(t.local_dir) if "/" not in n):
            failures.append((version, "local copy left"))

        proc = pip(t, version, "uninstall", "-y", "--break-system-packages", "six", merged=True)
        out = proc.stdout
        lines = [ln for ln in out.splitlines() if "six" in ln]
        if proc.returncode != 1 or "Traceback" in out:
            failures.append((version, "exit status %d" % proc.returncode, out[-3000:]))
        elif out.count("cannot uninstall six") != 1 or not lines or \
                not lines[0].startswith("error: cannot uninstall six"):
            failures.append((version, "not one refusal first", out[-3000:]))
        elif str(t.distro_dir) not in lines[0] or "`%s`" % DISTRO_COMMAND not in out:
            failures.append((version, "refusal lacks the directory or the command", out))
        elif any(phrase in out for phrase in PIP_UNINSTALL_PHRASES):
            failures.append((version, "pip went on with the uninstall", out[-3000:]))
    if t.digest(t.distro_dir, skip_pycache=True) != before:
        failures.append("the distro directory changed")
    check(failures)
