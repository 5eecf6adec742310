"""Every install the guard lets through that adds or changes startup code says so, then.

In guarded Debian pythons (Debian 12's in a namespace, the roots' 3.11, 3.13, 3.14 and
3.15), with the override: a wheel shaped like LiteLLM 1.82.8's (``litellm_init.pth``: a
``subprocess.Popen`` of ``sys.executable -S -c`` with base64-decoded code) and one shaped
like the 2026 ``<pkg>-setup.pth`` packages (``exec`` of base64-decoded code that reaches
the network), built here, harmless when run (behind ``0 and``, in a function never
called), each print pip's error layout headed ``warning:`` naming the file, what it does
and the command that removes it, by a new pip, an old pip and ``installer``; the
installer's exit status stays 0.  pytest-cov 6.0.0 (the real wheel) is reported at low
or below, without the block; a wheel with no startup file prints nothing of it.  The
report never runs what it reports: its child starts without ``site``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zipfile
from pathlib import Path

import pytest

from harness.spread import DEBIAN, target_params
from harness.wheels import pip_dir, pip_versions_for, unpacked, wheel
from sitewarden.facts.text import unwrap_lines as unwrapped
from test_blocking_debian import can_install

NEVER_NET = ("def _never():\n    import urllib.request\n"
             "    urllib.request.urlopen('https://192.0.2.1/rt')\n")
LITELLM = ('import base64, os, subprocess, sys; 0 and subprocess.Popen([sys.executable, "-S", '
           '"-c", base64.b64decode("cGFzcw==").decode()])\n')
SETUP = "import base64;exec(base64.b64decode('%s'))\n" % base64.b64encode(
    NEVER_NET.encode()).decode()
BLOCK = "warning: dangerous-startup-code"  # the install succeeded: never "error:"
HEADER = "sitewarden: this install changed the code that runs at every start of"


def unwrapped_stderr(proc):
    """``proc`` with its stderr's wrapped report lines joined again (each one, whole)."""
    proc.stderr = unwrapped(proc.stderr)
    return proc


def build_wheel(out: Path, name: str, version: str, files: dict) -> Path:
    """A py3-none-any wheel of ``files`` (path in the wheel -> text), with its RECORD."""
    dist = "%s-%s.dist-info" % (name.replace("-", "_"), version)
    entries = {path: text.encode() for path, text in files.items()}
    entries[dist + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                                   % (name, version)).encode()
    entries[dist + "/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: swr-tests\n"
                                b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    rows = ["%s,sha256=%s,%d" % (path, base64.urlsafe_b64encode(
        hashlib.sha256(data).digest()).rstrip(b"=").decode(), len(data))
        for path, data in entries.items()]
    entries[dist + "/RECORD"] = ("\n".join(rows + [dist + "/RECORD,,"]) + "\n").encode()
    path = out / ("%s-%s-py3-none-any.whl" % (name.replace("-", "_"), version))
    with zipfile.ZipFile(path, "w") as z:
        for name_, data in entries.items():
            z.writestr(name_, data)
    return path


def setuptools_project(t, name, pth, data_dir):
    """A setuptools project (``setup.py``) of one module whose data files put ``pth``, an
    import line that would start a process, into ``data_dir``; its directory."""
    module = name.replace("-", "_")
    project = t.tmp / ("%s-project" % name)
    t.root("import os, sys; os.makedirs(sys.argv[1], exist_ok=True)", str(project))
    t.put(project / ("%s.py" % module), data=b"X = 1\n")
    t.put(project / pth, data=b"import os; 0 and os.system('true')\n")
    t.put(project / "setup.py", data=(
        "from setuptools import setup\nsetup(name=%r, version='0.1', py_modules=[%r], "
        "data_files=[(%r, [%r])])\n" % (name, module, data_dir, pth)).encode())
    return project


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("startup-wheels")
    out.chmod(0o755)
    built = {
        "litellm": build_wheel(out, "swr-litellm", "1.82.8", {
            "swr_litellm/__init__.py": "", "swr_litellm_init.pth": LITELLM}),
        "setup": build_wheel(out, "swr-pkgsetup", "0.1", {
            "swr_pkgsetup/__init__.py": "", "swr-pkgsetup-setup.pth": SETUP}),
        "plain": build_wheel(out, "swr-plain", "1.0", {"swr_plain.py": "X = 1\n"}),
    }
    for key, (name, version) in {"pytest-cov": ("pytest-cov", "6.0.0"),
                                 "setuptools": ("setuptools", "69.5.1")}.items():
        built[key] = out / wheel(name, version).name
        built[key].write_bytes(wheel(name, version).read_bytes())
    return built


@pytest.mark.parametrize("guarded_target", target_params("debian"), indirect=True)
def test_installs_report_the_startup_code_they_add(guarded_target, wheels):
    t = guarded_target
    pips = [v for v in pip_versions_for(t.version) if can_install(v, t.version)]
    new, old = pips[-1], pips[0]
    local = t.local_dir
    installer = {"PYTHONPATH": str(unpacked(wheel("installer", "0.7.0")))}

    def pip(version, whl):
        env = {"PYTHONPATH": str(pip_dir(version)), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        return unwrapped_stderr(t.python("-m", "pip", "install", "--no-index", "--no-deps",
                                         "--break-system-packages", str(whl), env=env))

    proc = pip(new, wheels["litellm"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pth = "%s/swr_litellm_init.pth" % local
    assert BLOCK in proc.stderr, proc.stderr
    assert "\u00d7 %s, installed by swr-litellm 1.82.8, matches its RECORD, added by this " \
        "install" % pth in proc.stderr, proc.stderr
    assert "starts-processes" in proc.stderr and "decodes-and-executes" in proc.stderr
    assert re.search(r"hint: take it out of every start, without starting this interpreter:\n"
                     r"    sitewarden quarantine [0-9a-f]{12} --python %s\n    \(sitewarden "
                     r"quarantine --restore [0-9a-f]{12} puts it back\)" % re.escape(t.executable),
                     proc.stderr), proc.stderr
    assert "-m pip uninstall" not in proc.stderr, proc.stderr
    hint = re.search(r"hint: if you trust it as it is, acknowledge it \(this pins its code in "
                     r"/etc/sitewarden/silence: [^\n]*\n    sitewarden acknowledge "
                     r"([0-9a-f]{16}) --python %s\n" % re.escape(t.executable), proc.stderr)
    assert hint, proc.stderr

    proc = unwrapped_stderr(t.python("-m", "installer", str(wheels["setup"]),
                                     env={**installer, "PIP_BREAK_SYSTEM_PACKAGES": "1"}))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert BLOCK in proc.stderr and "%s/swr-pkgsetup-setup.pth" % local in proc.stderr
    assert "network" in proc.stderr and "decodes-and-executes" in proc.stderr, proc.stderr

    # setuptools' install (the target's own setuptools), a .pth among its data files.
    project = setuptools_project(t, "swr-stsetup", "zz-swr-stsetup.pth",
                                 str(local.relative_to("/usr/local")))
    proc = unwrapped_stderr(t.run([t.executable, "-W", "ignore", "setup.py", "install",
                                   "--single-version-externally-managed", "--record",
                                   str(project / "rec")],
                                  env={"PIP_BREAK_SYSTEM_PACKAGES": "1"}, cwd=str(project)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert BLOCK in proc.stderr and "%s/zz-swr-stsetup.pth" % local in proc.stderr, (
        proc.stdout + proc.stderr)

    proc = pip(old, wheels["pytest-cov"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert BLOCK not in proc.stderr, proc.stderr
    assert HEADER in proc.stderr and "%s/pytest-cov.pth (installed by pytest-cov 6.0.0, " \
        "matches its RECORD): runs code at every start" % local in proc.stderr, proc.stderr

    proc = pip(new, wheels["plain"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert HEADER not in proc.stderr and BLOCK not in proc.stderr, proc.stderr

    # An editable install (built by the distribution's setuptools) and pip's setuptools:
    # low or below.
    editable = t.tmp / "swr-editable"
    t.root("import os, sys; os.makedirs(sys.argv[1], exist_ok=True)", str(editable))
    t.put(editable / "swr_editable.py", data=b"X = 1\n")
    t.put(editable / "pyproject.toml", data=(
        b"[build-system]\nrequires = ['setuptools']\nbuild-backend = "
        b"'setuptools.build_meta'\n[project]\nname = 'swr-editable'\nversion = '1.0'\n"))
    proc = unwrapped_stderr(t.python(
        "-m", "pip", "install", "--no-index", "--no-deps", "--no-build-isolation",
        "--break-system-packages", "-e", str(editable), env={
            "PYTHONPATH": str(pip_dir(new)), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        cwd=str(editable)))
    assert proc.returncode == 0 and BLOCK not in proc.stderr, proc.stdout + proc.stderr
    assert "added %s/__editable__.swr_editable-1.0.pth" % local in proc.stderr, proc.stderr

    proc = pip(new, wheels["setuptools"])
    assert proc.returncode == 0 and BLOCK not in proc.stderr, proc.stderr
    assert "added %s/distutils-precedence.pth (installed by setuptools" % local in \
        proc.stderr, proc.stderr

    if t.param == DEBIAN:  # the rest on Debian 12: acknowledging, uninstalling
        acknowledging(t, pip, new, wheels, pth, hint)


def acknowledging(t, pip, new, wheels, pth, hint):
    """The block's hint names the finding's id as check gives it; ``sitewarden acknowledge
    ID --print`` gives the word that pins the file, its owner and its code (the deployment's
    silence file may not: a package can put one there), here passed in
    ``SITEWARDEN_SILENCE``: the next install of the same code is one line, check lists it
    as acknowledged;
    a bare ``startup:NAME`` acknowledges nothing (said in check and under
    ``SITEWARDEN_DEBUG``); a change to the code brings the finding back."""
    env = {"PYTHONPATH": str(pip_dir(new)), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def reinstall(extra):
        return unwrapped_stderr(t.python(
            "-m", "pip", "install", "--no-index", "--no-deps", "--force-reinstall",
            "--break-system-packages", str(wheels["litellm"]), env={**env, **extra}))

    fid = hint.group(1)
    report = json.loads(t.cli("check", "--python", t.executable, "--json").stdout)
    (found,) = [f for f in report["findings"] if f["id"] == fid]
    assert found["kind"] == "dangerous-startup-code" and found["file"] == pth, found
    proc = t.cli("acknowledge", fid[:10], "--python", t.executable, "--deployment")
    assert proc.returncode == 2 and "/etc/sitewarden/silence" in proc.stdout + proc.stderr, \
        proc.stdout + proc.stderr
    proc = t.cli("acknowledge", fid[:10], "--python", t.executable, "--print")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    word = re.search(r"(startup:\S+@sha256:[0-9a-f]{64})", proc.stdout)
    assert word, proc.stdout
    silence = "SITEWARDEN_SILENCE"
    proc = reinstall({silence: word.group(1)})
    assert proc.returncode == 0 and BLOCK not in proc.stderr, proc.stderr
    assert "%s (installed by swr-litellm 1.82.8, matches its RECORD): acknowledged as it is " \
        "(its pinned code, in %s)" % (pth, silence) in proc.stderr, proc.stderr
    status, report, text = t.cli_check(
        env={silence: "startup:swr-litellm " + word.group(1)})
    (found,) = [f for f in report["findings"] if f["id"] == fid]
    assert found["severity"] == "info" and found["acknowledged_by"] == silence, found
    # A bare name acknowledges nothing: said in check, status and under SITEWARDEN_DEBUG.
    (bare,) = [f for f in report["findings"] if f["kind"] == "unmatched-acknowledgement"]
    assert bare["acknowledgement"] == "swr-litellm" and bare["state"] == "unpinned", bare
    assert "SITEWARDEN_SILENCE: startup:swr-litellm unpinned" in text, text
    assert "startup:%s@sha256:" % pth in text, text
    proc = t.cli("status", "--python", t.executable, "--verbose",
                 env={"SITEWARDEN_SILENCE": "startup:swr-litellm"})
    assert "startup:swr-litellm unpinned: acknowledges nothing" in proc.stdout, proc.stdout
    proc = reinstall({"SITEWARDEN_SILENCE": "startup:swr-litellm", "SITEWARDEN_DEBUG": "1"})
    assert proc.returncode == 0 and BLOCK in proc.stderr, proc.stderr
    assert "sitewarden: debug: startup:swr-litellm in SITEWARDEN_SILENCE: acknowledges " \
        "nothing: it pins no content" in proc.stderr, proc.stderr
    # The pin, per process; then the code changes: the finding is back, and says why.
    proc = reinstall({"SITEWARDEN_SILENCE": word.group(1)})
    assert BLOCK not in proc.stderr and "acknowledged as it is" in proc.stderr, proc.stderr
    t.put(Path(pth), data=LITELLM.replace("cGFzcw==", "ZXhpdCgp").encode())
    report = json.loads(t.cli("check", "--python", t.executable, "--json",
                              env={"SITEWARDEN_SILENCE": word.group(1)}).stdout)
    (found,) = [f for f in report["findings"] if f.get("file") == pth
                and f["kind"] == "dangerous-startup-code"]
    assert found["severity"] == "high" and found["id"] != fid, found
    assert found["acknowledgement_changed"] == "SITEWARDEN_SILENCE", found
    assert "NOT acknowledged: the file, its owner or the code it runs changed" in \
        found["message"], found
    # An uninstall says what it removed.
    proc = unwrapped_stderr(t.python("-m", "pip", "uninstall", "-y", "--break-system-packages",
                                     "swr-litellm", env=env))
    assert proc.returncode == 0 and "  removed %s" % pth in proc.stderr, proc.stderr
    assert "sitewarden: this uninstall changed the code" in proc.stderr, proc.stderr
    pip(new, wheels["litellm"])
