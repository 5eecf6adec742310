"""A report never breaks an install, and speaks as loud as the installer does.

In guarded pythons (the targets in rotation), with the override: a wheel shipping a
``.pth`` holding a NUL byte beside a payload ``.pth`` installs with pip's exit status 0
and the payload reported; ``pip install -q`` and ``-qq`` still print the report of a
dangerous ``.pth`` (pip prints its errors there) in the warning layout (the install
succeeded: ``warning: dangerous-startup-code``, never ``error:``), ``-qqq`` prints
nothing.  A report whose child fails (a ``sitecustomize`` on ``PYTHONPATH`` replaces the
child's program by one that exits 3) leaves pip's, ``installer``'s, ``setup.py``'s and
``ensurepip``'s (where the target has it and no pip yet) exit status and installed files
as without it, and prints one line saying so and how to see why (``SITEWARDEN_DEBUG=1``).
"""

from __future__ import annotations

import pytest

from harness.environ import FAIL_OPEN
from harness.spread import rotated
from harness.wheels import pip_dir, pip_versions_for, unpacked, wheel
from test_blocking_debian import can_install
from test_install_startup_report import LITELLM, build_wheel, setuptools_project

WARN = "warning: dangerous-startup-code"
FAILED = "the report of what this install changed failed"
#: Replaces the report's child program: the child starts, prints nothing, exits 3.
BREAK_CHILD = ("import sitewarden.guard.startup_report as r\n"
               "r.STATIC_BOOTSTRAP = 'raise SystemExit(3)'\n")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("never-breaks")
    out.chmod(0o755)
    return {
        "nul": build_wheel(out, "swr-nulpth", "1.0", {
            "swr_nulpth/__init__.py": "", "swr_nul.pth": "swr\x00dir\nimport os\x00; x\n",
            "swr_nulpth_payload.pth": LITELLM}),
        "litellm": build_wheel(out, "swr-quiet", "1.0", {
            "swr_quiet/__init__.py": "", "swr_quiet_init.pth": LITELLM}),
        "plain": build_wheel(out, "swr-plainq", "1.0", {"swr_plainq.py": "X = 1\n"}),
    }


def _pip(t, *args, env=None, install=True):
    pips = [v for v in pip_versions_for(t.version) if can_install(v, t.version)]
    base = {"PYTHONPATH": str(pip_dir(pips[-1])), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    base.update(env or {})
    more = ("--no-index", "--no-deps") if install else ()
    return t.python("-m", "pip", *args, *more, "--break-system-packages", env=base)


def _uninstall(t, name):
    proc = _pip(t, "uninstall", "-y", name, install=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@rotated()
def test_nul_pth_beside_a_payload_is_reported(guarded_target, wheels):
    t = guarded_target
    proc = _pip(t, "install", str(wheels["nul"]))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and FAILED not in proc.stderr, proc.stderr
    assert WARN in proc.stderr and "swr_nulpth_payload.pth" in proc.stderr, proc.stderr
    assert "error:" not in proc.stderr, proc.stderr


@rotated()
def test_quiet_levels_follow_pip(guarded_target, wheels):
    t = guarded_target
    seen = {}
    for flag in ("-q", "-qq", "-qqq"):
        proc = _pip(t, "install", flag, "--force-reinstall", str(wheels["litellm"]))
        assert proc.returncode == 0, (flag, proc.stdout + proc.stderr)
        seen[flag] = proc.stderr
        _uninstall(t, "swr-quiet")
    for flag in ("-q", "-qq"):
        assert WARN in seen[flag] and "swr_quiet_init.pth" in seen[flag], (flag, seen[flag])
        assert "error:" not in seen[flag], seen[flag]
    assert "dangerous-startup-code" not in seen["-qqq"] and "swr_quiet" not in seen["-qqq"] \
        and FAILED not in seen["-qqq"], seen["-qqq"]


@rotated()
def test_a_failed_report_changes_no_install(guarded_target, wheels):
    t = guarded_target
    hook = t.tmp / "swr-breakreport"
    t.root("import os, sys; os.makedirs(sys.argv[1], exist_ok=True)", str(hook))
    t.put(hook / "sitecustomize.py", data=BREAK_CHILD.encode())
    pips = [v for v in pip_versions_for(t.version) if can_install(v, t.version)]
    broken = dict(FAIL_OPEN, PYTHONPATH="%s:%s" % (hook, pip_dir(pips[-1])),
                  PIP_DISABLE_PIP_VERSION_CHECK="1")

    def one_line(proc, what):
        lines = [ln for ln in proc.stderr.splitlines()
                 if ln.startswith("sitewarden") or "dangerous-startup" in ln]
        assert proc.returncode == 0, (what, proc.stdout + proc.stderr)
        assert "Traceback" not in proc.stderr, (what, proc.stderr)
        assert len(lines) == 1 and FAILED in lines[0] and "SITEWARDEN_DEBUG=1" in lines[0], (
            what, proc.stderr)

    proc = t.python("-m", "pip", "install", "--no-index", "--no-deps",
                    "--break-system-packages", str(wheels["litellm"]), env=broken)
    one_line(proc, "pip")
    assert t.exists(t.local_dir / "swr_quiet_init.pth")
    proc = t.python("-m", "pip", "uninstall", "-y", "--break-system-packages", "swr-quiet",
                    env=broken)
    one_line(proc, "pip uninstall")
    assert not t.exists(t.local_dir / "swr_quiet_init.pth")
    # SITEWARDEN_DEBUG=1 says why.
    proc = t.python("-m", "pip", "install", "--no-index", "--no-deps",
                    "--break-system-packages", str(wheels["litellm"]),
                    env=dict(broken, SITEWARDEN_DEBUG="1"))
    assert proc.returncode == 0 and "exited with status 3" in proc.stderr, proc.stderr
    _uninstall(t, "swr-quiet")

    installer = "%s:%s" % (hook, unpacked(wheel("installer", "0.7.0")))
    proc = t.python("-m", "installer", str(wheels["litellm"]),
                    env=dict(FAIL_OPEN, PYTHONPATH=installer, PIP_BREAK_SYSTEM_PACKAGES="1"))
    one_line(proc, "installer")
    _uninstall(t, "swr-quiet")

    project = setuptools_project(t, "swr-brokensetup", "zz-swr-broken.pth", str(t.local_dir))
    tools = str(hook)
    if not t.exists(t.distro_dir / "setuptools"):  # a hermetic CPython: setuptools' wheel
        tools += ":%s" % unpacked(wheel("setuptools", "69.5.1"))
    proc = t.run([t.executable, "-W", "ignore", "setup.py", "install",
                  "--single-version-externally-managed", "--record", str(project / "rec")],
                 env=dict(FAIL_OPEN, PYTHONPATH=tools, PIP_BREAK_SYSTEM_PACKAGES="1"),
                 cwd=str(project))
    one_line(proc, "setup.py")
    assert t.exists(t.local_dir / "zz-swr-broken.pth")

    # ensurepip (where the target has it and no pip yet): its pip reports, and fails alike.
    if t.python("-c", "import ensurepip, importlib.util, sys; "
                "sys.exit(0 if importlib.util.find_spec('pip') is None else 1)").returncode == 0:
        proc = t.python("-m", "ensurepip", env=dict(FAIL_OPEN, PYTHONPATH=str(hook),
                                                      PIP_BREAK_SYSTEM_PACKAGES="1"))
        one_line(proc, "ensurepip")
        assert t.exists(t.local_dir / "pip"), proc.stdout + proc.stderr
