"""Never break an interpreter, never refuse open, never lose a file: bad input, faults, load.

Issue #6.  Every test runs on every CPython 3.8+ found (hermetic Debian-shaped
copies, ``harness.guarded``) and on Debian's own ``/usr/bin/python3`` (in a
private mount namespace), tries many inputs, counts what it tried and reports
it with ``harness.figures.record`` (printed; appended to ``$SITEWARDEN_FIGURES``
when set), one line per property and interpreter.  Each input of a loop is a test
of its own (``[<interpreter>-<input>]``, ``harness.inputs``), while the loop still
runs once per interpreter, in one guarded python.  Expensive loops are bounded;
``SITEWARDEN_STRESS=N`` multiplies them.  "Clean" means: exit status 0, no
traceback, and nothing on stderr but the intended warnings.

Deployment faults under concurrency and kills are in ``test_deploy_faults.py``.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import make_dist, pip_dir, pip_versions_for, wheel
from harness.figures import record, stress
from harness.guarded import make_guarded
from harness.inputs import (
    assert_input,
    blame,
    by_input,
    once,
    per_input_python,
)
from harness.spread import EVERY, ROTATED, inputs_of, rotated, scaled, spread, target_params

STRESS = stress()
TARGETS = target_params()
#: The newest pip without a PEP 668 check of its own (starts on 3.8-3.13): the guard refuses.
OLD_PIP = "22.3.1"
WARNING_LINE = re.compile(r"^.*:\d+: (ShadowWarning|PathWarning): ")


@pytest.fixture
def target(guarded_target):
    """A fresh guarded interpreter (each CPython and Debian's), for tests that change it."""
    return guarded_target


@pytest.fixture(scope="module", params=TARGETS)
def shared(request):
    """A guarded interpreter shared by the read-only tests of this module, with one
    shadowed module (``swr_shadowed``) and one that shadows nothing (``swr_plain``).
    Its tests parametrize it with ``spread(group="shared")`` (one xdist group
    per interpreter: one such python per interpreter in the whole run)."""
    t = make_guarded(request.param, deploy="copy")
    try:
        t.add_shadowed(["swr_shadowed"], plain=["swr_plain"])
        yield t
    finally:
        t.close()


def unclean(proc: subprocess.CompletedProcess, warnings: bool = False) -> Optional[str]:
    """Why a run is not clean, or None.  ``warnings``: sitewarden's warnings are allowed
    on stderr (they are the intended output), nothing else."""
    if proc.returncode != 0:
        return "exit status %d: %s" % (proc.returncode, proc.stderr[-2000:])
    if "Traceback" in proc.stderr:
        return "traceback: " + proc.stderr[-2000:]
    if not warnings:
        return "stderr: " + proc.stderr[-2000:] if proc.stderr else None
    for line in proc.stderr.splitlines():
        if line.strip() and not WARNING_LINE.match(line) and not line.startswith("  "):
            return "stderr: " + proc.stderr[-2000:]
    return None


def unclean_refusal(proc: subprocess.CompletedProcess, phrase: str) -> Optional[str]:
    """Why a run is not a clean PEP 668 refusal showing ``phrase``, or None."""
    out = proc.stdout + proc.stderr
    if proc.returncode != 1:
        return "exit status %d (not refused): %s" % (proc.returncode, out[-2000:])
    if "externally-managed-environment" not in out or "Traceback" in out:
        return "not a clean refusal: " + out[-2000:]
    if phrase not in out:
        return "message lacks %r: %s" % (phrase, out[-2000:])
    return None


def report(prop, target, tried, failures, **extra):
    record(prop, target.label, tried, len(failures), **extra)
    assert not failures, "%d of %d failed; first: %s" % (len(failures), tried, failures[:3])


# ------------------------------------------------------------- one test per input
# Each input of a loop is a test ``[<interpreter>-<input>]`` (``harness.inputs``): the
# loop itself still runs once per interpreter, in one guarded python.


def report_input(target, tried, failures):
    """Count one input's runs on ``target`` (recorded when it closes); fail if any failed."""
    target.tally["tried"] += tried
    target.tally["failures"] += len(failures)
    assert not failures, "%d of %d failed; first: %s" % (len(failures), tried, failures[:3])


# ------------------------------------------------------------------ the marker

DEFAULT = "could not read its EXTERNALLY-MANAGED file"

#: name -> (kind for GuardedPython.put, data, mode, phrase the refusal shows)
MARKERS = {
    "empty": ("file", b"", 0o644, DEFAULT),
    "binary garbage": ("file", bytes(range(256)) * 4, 0o644, DEFAULT),
    "invalid UTF-8": ("file", b"[externally-managed]\nError=\xff\xfe\n", 0o644, DEFAULT),
    "BOM": ("file", b"\xef\xbb\xbf[externally-managed]\nError=sitewarden BOM marker\n", 0o644,
            "sitewarden BOM marker"),
    "CRLF": ("file", b"[externally-managed]\r\nError=sitewarden CRLF marker\r\n more\r\n", 0o644,
             "sitewarden CRLF marker"),
    "BOM and CRLF": ("file", b"\xef\xbb\xbf[externally-managed]\r\nError=sitewarden BOM+CRLF\r\n",
                     0o644, "sitewarden BOM+CRLF"),
    "duplicate keys": ("file", b"[externally-managed]\nError=a\nError=b\n", 0o644, DEFAULT),
    "duplicate sections": ("file", b"[externally-managed]\nError=a\n[externally-managed]\n"
                           b"Error=b\n", 0o644, DEFAULT),
    "no section": ("file", b"Error=no section\n", 0o644, DEFAULT),
    "no Error key": ("file", b"[externally-managed]\nHint=x\n", 0o644, DEFAULT),
    "NUL bytes": ("file", b"[externally-managed]\nError=sitewarden\x00NUL\n", 0o644, "sitewarden"),
    "interpolation and code": ("file", b"[externally-managed]\nError=%(x)s ${HOME} "
                               b"__import__('os').system('touch {canary}')\n", 0o644, "%(x)s"),
    "huge (10 MB)": ("file", b"[externally-managed]\nError=" + b"x" * (10 << 20) + b"\n", 0o644,
                     DEFAULT),
    "directory": ("dir", b"", 0o755, DEFAULT),
    "dangling symlink": ("symlink", b"nowhere/EXTERNALLY-MANAGED", 0o644, DEFAULT),
    "symlink loop": ("symlink", b"EXTERNALLY-MANAGED", 0o644, DEFAULT),
    "FIFO": ("fifo", b"", 0o644, DEFAULT),
    "character device": ("symlink", b"/dev/zero", 0o644, DEFAULT),
    "no read permission": ("file", b"[externally-managed]\nError=sitewarden unreadable\n", 0o600,
                           DEFAULT),
}
#: Corruptions that only mean something to an unprivileged user (root reads anything).
NOBODY_ONLY = {"no read permission"}


def put_marker(target, name: str) -> str:
    """Corrupt ``target``'s marker as ``name`` says; return the phrase a refusal shows."""
    kind, data, mode, phrase = MARKERS[name]
    canary = str(target.tmp / "CANARY-marker")
    target.put(target.marker, kind, data.replace(b"{canary}", canary.encode()), mode)
    return phrase


marker_startup_python = per_input_python(
    "startup: marker corruption", MARKERS,
    prepare=lambda t: t.add_shadowed(["swr_shadowed"]))


#: Each corruption on a third of the interpreters, in rotation (``spread(ROTATED)``): one
#: of 3.8-3.10, one of 3.11-3.13 and one or two Debian pythons; each interpreter with a
#: third of the corruptions.
MARKER_PARAMS = {group: spread(ROTATED, list(MARKERS), group=group)
                 for group in ("marker-startup", "marker-blocks")}


@pytest.mark.parametrize("python, name", MARKER_PARAMS["marker-startup"])
def test_startup_never_breaks_under_marker_corruption(marker_startup_python, python, name):
    """``-c pass`` is silent and a shadowed import warns (its advice asks whether the
    marker applies), as root and as ``nobody``, under every marker corruption."""
    target = marker_startup_python.get(python)
    tried, failures = 0, []
    put_marker(target, name)
    for who in ("root", "nobody"):
        for code, warns in (("pass", False), ("import swr_shadowed, json", True)):
            argv = [target.executable, "-c", code]
            proc = run_or_hang(target, target.nobody(argv) if who == "nobody" else argv)
            tried += 1
            problem = unclean(proc, warnings=warns)
            if warns and problem is None and "ShadowWarning" not in proc.stderr:
                problem = "no ShadowWarning: " + proc.stderr
            if problem:
                failures.append((name, who, code, problem))
    assert not (target.tmp / "CANARY-marker").exists()
    report_input(target, tried, failures)


PIP_ENV = {"PIP_NO_CACHE_DIR": "1"}


def install_attempts(target):
    """(what, argv, env) of the installs tried: an old pip (which the guard refuses for)
    and ensurepip."""
    pip_env = {**PIP_ENV, "PYTHONPATH": str(pip_dir(OLD_PIP))}
    return [("pip " + OLD_PIP, [target.executable, "-m", "pip", "install", "--no-index", "six"],
             pip_env),
            ("ensurepip", [target.executable, "-m", "ensurepip"], None)]


def run_or_hang(target, argv, env=None, timeout=60) -> subprocess.CompletedProcess:
    """``target.run``, with a hang reported as a failed run rather than an error."""
    try:
        return target.run(argv, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, -9, "", "HANG: no exit within %d s" % timeout)


marker_blocks_python = per_input_python("blocks: marker corruption", MARKERS)


@pytest.mark.parametrize("python, name", MARKER_PARAMS["marker-blocks"])
def test_blocks_fail_closed_under_marker_corruption(marker_blocks_python, python, name):
    """Installs (an old pip, ensurepip) are refused with a clean message under every
    marker corruption: as root, and as nobody (where ensurepip is enough, but for the
    unreadable marker, which only nobody cannot read)."""
    target = marker_blocks_python.get(python)
    tried, failures = 0, []
    phrase = put_marker(target, name)
    for who in (("nobody",) if name in NOBODY_ONLY else ("root", "nobody")):
        for what, argv, env in install_attempts(target):
            if who == "nobody":
                if what != "ensurepip" and name not in NOBODY_ONLY:
                    continue
                argv = target.nobody(argv)
            proc = run_or_hang(target, argv, env=env)
            tried += 1
            problem = unclean_refusal(proc, phrase)
            if problem:
                failures.append((name, who, what, problem))
    assert not (target.tmp / "CANARY-marker").exists()
    report_input(target, tried, failures)


#: Rewrites the marker in a loop (in place, so readers see it empty or half written,
#: and by rename; readable or not by others) until the stop file exists; prints the count.
MARKER_WRITER = r"""
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
variants = [
    b"[externally-managed]\nError=sitewarden changing marker\n",
    bytes(range(256)) * 64,
    b"",
    b"\xef\xbb\xbf[externally-managed]\r\nError=sitewarden changing marker\r\n",
    b"[externally-managed]\nError=" + b"y" * ((1 << 20) + 100) + b"\n",
    b"[externally-managed]\nError=a\nError=b\n",
]
n = 0
while not os.path.exists(stop):
    data = variants[n % len(variants)]
    if n % 2:
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
            f.flush()
            f.write(data[len(data) // 2:])
    else:
        tmp = path + ".sitewarden-writer"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    os.chmod(path, 0o600 if n % 3 == 0 else 0o644)
    n += 1
    time.sleep(0.0005)
print(n)
"""


@rotated()
def test_marker_changing_while_read(target):
    """A writer rewrites the marker in a loop while interpreters start (as root and as
    nobody, importing a shadowed module) and installs run: every start is clean, every
    install is refused cleanly."""
    target.add_shadowed(["swr_shadowed"])
    stop = target.tmp / "stop-writer"
    writer = target.root_popen(MARKER_WRITER, str(target.marker), str(stop),
                               stdout=subprocess.PIPE, text=True)
    starts, refusals, failures = [], [], []
    pip_env = {**PIP_ENV, "PYTHONPATH": str(pip_dir(OLD_PIP))}
    try:
        time.sleep(0.2)
        procs = []
        codes = ["pass", "import json", "import json", "import swr_shadowed"]
        for i in range(target.scaled(100) * STRESS):
            argv = [target.executable, "-c", codes[i % len(codes)]]
            procs.append(("start", target.popen(target.nobody(argv) if i % 3 == 1 else argv,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                text=True)))
            if i % 10 == 0:
                argv = [target.executable, "-m", "ensurepip"]
                procs.append(("ensurepip", target.popen(argv, stdout=subprocess.PIPE,
                                                        stderr=subprocess.PIPE, text=True)))
            if i % 25 == 0:
                argv = [target.executable, "-m", "pip", "install", "--no-index", "six"]
                procs.append(("pip", target.popen(argv, env=pip_env, stdout=subprocess.PIPE,
                                                  stderr=subprocess.PIPE, text=True)))
            if len(procs) >= 16:
                _collect(procs, starts, refusals, failures)
        _collect(procs, starts, refusals, failures)
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=60)
    rewrites = int(out.strip() or 0)
    assert rewrites > 10, "the writer barely ran (%d rewrites)" % rewrites
    start_failures = [f for f in failures if f[0] == "start"]
    block_failures = [f for f in failures if f[0] != "start"]
    record("startup: marker changing while read", target.label, len(starts),
           len(start_failures), marker_rewrites=rewrites)
    record("blocks: marker changing while read", target.label, len(refusals),
           len(block_failures), marker_rewrites=rewrites)
    assert not failures, failures[:3]


def _collect(procs, starts, refusals, failures):
    while procs:
        what, p = procs.pop(0)
        out, err = p.communicate(timeout=300)
        proc = subprocess.CompletedProcess(p.args, p.returncode, out, err)
        if what == "start":
            starts.append(proc)
            problem = unclean(proc, warnings=True)
        else:
            refusals.append(proc)
            # The message is whatever the marker held at that instant (possibly half of
            # it: a valid marker with a truncated message), or the default one.
            problem = unclean_refusal(proc, "This environment is externally managed")
        if problem:
            failures.append((what, problem))


# ------------------------------------------------------------------ metadata

HUGE = 10 << 20


def _garbage_metadata(distro: Path, local: Path, huge: bool = False) -> List[str]:
    """Distributions with every kind of broken metadata (``huge``: only the 10 MB ones);
    returns the module names, each shadowed (a local copy by pip) so that importing it
    reads the metadata."""
    names = []

    def pair(name, distro_meta=None, local_meta=None):
        """The module in both directories; ``*_meta(dir)`` writes its metadata."""
        names.append(name)
        (distro / (name + ".py")).write_text("")
        (local / (name + ".py")).write_text("")
        if distro_meta is not None:
            distro_meta(distro)
        else:
            make_dist(distro, name, "1.0", {name + ".py": ""})
        if local_meta is not None:
            local_meta(local)
        else:
            make_dist(local, name, "2.0", {name + ".py": ""}, installer="pip")

    def dist_info(name, **files):
        def write(d):
            meta = d / ("%s-1.0.dist-info" % name)
            meta.mkdir()
            for fname, data in files.items():
                (meta / fname).write_bytes(data)
        return write

    if huge:
        pair("swm_huge_metadata", dist_info(
            "swm_huge_metadata", METADATA=b"Name: swm_huge_metadata\nVersion: 1.0\nSummary: "
            + b"h" * HUGE + b"\n" + b"Requires-Dist: swm_huge_metadata<1\n" * 1000))
        pair("swm_huge_record", dist_info(
            "swm_huge_record", METADATA=b"Name: swm_huge_record\nVersion: 1.0\n",
            RECORD=b"swm_huge_record.py,,\n" * (HUGE // 21)))
        pair("swm_huge_requires", lambda d: make_dist(
            d, "swm_huge_requires", "1.0", {"swm_huge_requires.py": ""},
            requires=["swm_huge_requires<%d" % i for i in range(200_000)]))
        return names
    garbage = bytes(range(256)) * 8
    pair("swm_garbage_metadata", dist_info("swm_garbage_metadata", METADATA=garbage,
                                           RECORD=garbage))
    pair("swm_garbage_pkginfo", lambda d: (
        (d / "swm_garbage_pkginfo-1.0.egg-info").mkdir(),
        (d / "swm_garbage_pkginfo-1.0.egg-info" / "PKG-INFO").write_bytes(garbage),
        (d / "swm_garbage_pkginfo-1.0.egg-info" / "top_level.txt").write_bytes(garbage),
        (d / "swm_garbage_pkginfo-1.0.egg-info" / "requires.txt").write_bytes(
            b"[:python_version >\n swm_garbage_pkginfo (>=\n[extra\n" + garbage)))
    pair("swm_invalid_utf8", dist_info("swm_invalid_utf8", METADATA=b"Metadata-Version: 2.1\n"
                                       b"Name: swm_invalid_utf8\xff\nVersion: 1.\xfe0\n"))
    pair("swm_nul", dist_info("swm_nul", METADATA=b"Name: swm\x00nul\nVersion: \x001.0\n"))
    pair("swm_missing_metadata", dist_info("swm_missing_metadata",
                                           RECORD=b"swm_missing_metadata.py,,\n"))
    pair("swm_missing_files", dist_info(
        "swm_missing_files", METADATA=b"Name: swm_missing_files\nVersion: 1.0\n",
        RECORD=b"gone/nowhere.py,sha256=x,1\n\"unterminated,\n../../../etc/passwd,,\n",
        INSTALLER=garbage))
    pair("swm_invalid_version", dist_info(
        "swm_invalid_version", METADATA=b"Name: swm_invalid_version\nVersion: not a version!\n"))
    pair("swm_no_name_version", dist_info("swm_no_name_version", METADATA=b"Summary: x\n"))
    pair("swm_local_garbage", local_meta=lambda d: (
        (d / "swm_local_garbage-2.0.dist-info").mkdir(),
        (d / "swm_local_garbage-2.0.dist-info" / "METADATA").write_bytes(garbage),
        (d / "swm_local_garbage-2.0.dist-info" / "INSTALLER").write_bytes(garbage),
        (d / "swm_local_garbage-2.0.dist-info" / "direct_url.json").write_bytes(b"{\"url\":")))
    # Distro packages whose requirements on a shadowed module are garbage.
    pair("swm_required")
    make_dist(distro, "swm_consumer", "1.0", {"swm_consumer.py": ""}, requires=[
        "swm_required (>=", "swm_required>=1;;python_version>", "swm_required; extra == ",
        "swm_required @ ", "swm_required[", "swm_required>=1.0; python_version > '3' and",
        "swm_required>=1.0; os.system('touch /tmp/x')", "swm-required" + " " * 10000 + "<1",
        "swm_required (<2) ; python_version > \"3.0\"" * 50, "\x00", "swm_required<" + "9" * 500,
    ])
    make_dist(distro, "swm_egg_consumer", "1.0", {"swm_egg_consumer.py": ""}, kind="egg-info",
              requires=["swm_required (>=", "[:garbage marker", "swm_required<0.1",
                        "[extra]", "swm_required==1.*.x"])
    pair("swm_invalid_requirements")
    make_dist(distro, "swm_bad_requires_dist", "1.0", {"swm_bad_requires_dist.py": ""},
              requires=["swm_invalid_requirements ((", "swm_invalid_requirements;;;"])
    pair("swm_dist_info_file", lambda d: (d / "swm_dist_info_file-1.0.dist-info").write_bytes(
        garbage))
    pair("swm_egg_info_file", lambda d: (d / "swm_egg_info_file-1.0.egg-info").write_bytes(
        garbage))
    pair("swm_metadata_dir", dist_info("swm_metadata_dir"))
    (distro / "swm_metadata_dir-1.0.dist-info" / "METADATA").mkdir()
    pair("swm_dist_info_loop", lambda d: (d / "swm_dist_info_loop-1.0.dist-info").symlink_to(
        "swm_dist_info_loop-1.0.dist-info"))
    pair("swm_dangling_dist_info", lambda d: (
        d / "swm_dangling_dist_info-1.0.dist-info").symlink_to("/nonexistent/sitewarden"))
    pair("swm_metadata_loop", dist_info("swm_metadata_loop"))
    (distro / "swm_metadata_loop-1.0.dist-info" / "METADATA").symlink_to("METADATA")
    pair("swm_weird_names", lambda d: [
        (d / n).mkdir() for n in ("-.dist-info", "..dist-info", "a-b-c-d-e.dist-info",
                                  "swm_weird_names-.dist-info", ".dist-info",
                                  os.fsdecode(b"swm_weird_names-\xff\xfe.dist-info"))])
    # Read permission taken away (meaningful as nobody): set by the test after copying.
    pair("swm_unreadable_dist_info")
    pair("swm_unreadable_metadata")
    return names


#: The modules :func:`_garbage_metadata` makes (``huge``: HUGE_NAMES), each an input.
GARBAGE_NAMES = [
    "swm_garbage_metadata", "swm_garbage_pkginfo", "swm_invalid_utf8", "swm_nul",
    "swm_missing_metadata", "swm_missing_files", "swm_invalid_version", "swm_no_name_version",
    "swm_local_garbage", "swm_required", "swm_invalid_requirements", "swm_dist_info_file",
    "swm_egg_info_file", "swm_metadata_dir", "swm_dist_info_loop", "swm_dangling_dist_info",
    "swm_metadata_loop", "swm_weird_names", "swm_unreadable_dist_info", "swm_unreadable_metadata"]
HUGE_NAMES = ["swm_huge_metadata", "swm_huge_record", "swm_huge_requires"]
#: Inputs that take a whole directory's read permission from nobody: input -> attribute.
UNREADABLE_DIRS = {"distro directory unreadable": "distro_dir",
                   "local directory unreadable": "local_dir"}
METADATA_INPUTS = GARBAGE_NAMES + HUGE_NAMES + list(UNREADABLE_DIRS)

#: Imports every module named in argv, one by one; prints one line per failure and a count.
IMPORT_ALL = r"""
import sys
ok = 0
for name in sys.argv[1:]:
    try:
        __import__(name)
        ok += 1
    except BaseException as exc:
        print("FAILED %s: %s: %s" % (name, type(exc).__name__, exc))
print("IMPORTED %d" % ok)
"""


def _import_each(target, names, who, warns=True) -> Dict[str, str]:
    """Run IMPORT_ALL for ``names`` (or ``-c pass`` when not ``warns``): the problem of
    each name the run failed for (a problem of the whole run: of the names it names,
    else of all of them), empty when the run is clean."""
    args = ["-c", IMPORT_ALL, *names] if warns else ["-c", "pass"]
    argv = [target.executable, *args]
    proc = run_or_hang(target, target.nobody(argv) if who == "nobody" else argv)
    problem = unclean(proc, warnings=warns)
    if problem is not None:
        return dict.fromkeys(blame(problem, names), problem)
    if not warns:
        return {}
    if "IMPORTED %d" % len(names) not in proc.stdout:
        failed = {line[len("FAILED "):].split(":", 1)[0]: line
                  for line in proc.stdout.splitlines() if line.startswith("FAILED ")}
        return {name: "imports failed: " + failed.get(name, proc.stdout)
                for name in [n for n in names if n in failed] or names}
    counts = {}
    for line in proc.stderr.splitlines():
        if "ShadowWarning" in line:
            module = line.split("ShadowWarning: ", 1)[1].split("'")[1]
            counts[module] = counts.get(module, 0) + 1
    twice = {m: n for m, n in counts.items() if n > 1}
    if twice:
        problem = "warned more than once: %s" % twice
        return dict.fromkeys([m for m in names if m in twice] or blame(problem, names), problem)
    return {}


@pytest.mark.parametrize("python, name", spread(EVERY, METADATA_INPUTS, group="garbage-metadata"))
def test_garbage_metadata_never_breaks_startup_or_imports(python, name):
    """Every broken ``*.dist-info``/``*.egg-info`` (garbage, missing, invalid versions and
    requirements, a file, a loop, odd names, unreadable directories and files) in the
    distro and local directories: startup is silent, every shadowed import succeeds and
    warns at most once, as root and as nobody; ``check`` still reports.  Then huge (10 MB)
    metadata files, imported on their own (each shadowed import reads them).  One run
    per interpreter applies them all (:func:`_garbage_metadata_run`)."""
    assert_input(once("startup: garbage metadata", python, _garbage_metadata_run, python), name)


def _garbage_metadata_run(python):
    """Every input of the garbage metadata test on one fresh guarded ``python``, the
    shadowed imports of a phase in one process: the failures of each input."""
    target = make_guarded(python, deploy="copy")
    try:
        failures = by_input(METADATA_INPUTS)
        tried, failed = _metadata_phases(target, failures)
        # Whole directories unreadable to nobody: the distro one, then the local one.
        for name, attribute in UNREADABLE_DIRS.items():
            d = getattr(target, attribute)
            target.chmod(d, 0o700)
            try:
                for warns in (False, True):
                    tried += 1
                    problems = _import_each(target, ["json"], "nobody", warns)
                    if problems:
                        failed += 1
                        failures[name].append(("nobody", "%s unreadable" % d, problems["json"]))
            finally:
                target.chmod(d, 0o755)
        record("startup: garbage metadata", target.label, tried, failed,
               inputs=len(METADATA_INPUTS))
        return failures
    finally:
        target.close()


def _metadata_phases(target, failures):
    """The garbage metadata, then the huge, each imported as root and as nobody; the
    failures go to ``failures`` (by input); returns (runs tried, runs failed)."""
    stage = target.tmp / "metadata-stage"
    tried = failed = 0
    for phase, huge in (("garbage", False), ("huge", True)):
        distro, local = stage / phase / "distro", stage / phase / "local"
        distro.mkdir(parents=True)
        local.mkdir()
        # A FIFO would block a reader forever: left out here, see
        # test_metadata_fifo_does_not_hang.
        names = _garbage_metadata(distro, local, huge=huge)
        assert names == (HUGE_NAMES if huge else GARBAGE_NAMES), "the inputs are %s" % names
        target.merge_into(distro, target.distro_dir)
        target.merge_into(local, target.local_dir)
        if not huge:
            target.chmod(target.distro_dir / "swm_unreadable_dist_info-1.0.dist-info", 0o700)
            target.chmod(target.distro_dir / "swm_unreadable_metadata-1.0.dist-info" / "METADATA",
                         0o600)
        for who in ("root", "nobody"):
            for warns in (False, True):
                tried += len(names)
                problems = _import_each(target, names, who, warns)
                failed += bool(problems)
                for name, problem in problems.items():
                    failures[name].append((phase, who, "imports" if warns else "startup",
                                           problem))
        if not huge:
            proc = target.cli("check", "--python", target.executable, "--json")
            tried += len(names)
            if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
                failed += 1
                for name in blame(proc.stderr[-2000:], names):
                    failures[name].append(("root", "check", proc.stderr[-2000:]))
    return tried, failed


def test_metadata_fifo_does_not_hang(target):
    """A FIFO where METADATA should be: the shadowed import must not block forever."""
    stage = target.tmp / "fifo-stage"
    distro, local = stage / "distro", stage / "local"
    distro.mkdir(parents=True)
    local.mkdir()
    for d, version in ((distro, "1.0"), (local, "2.0")):
        make_dist(d, "swm_fifo", version, {"swm_fifo.py": ""}, installer="pip")
    target.merge_into(distro, target.distro_dir)
    target.merge_into(local, target.local_dir)
    target.put(target.distro_dir / "swm_fifo-1.0.dist-info" / "METADATA", "fifo")
    try:
        proc = target.python("-c", "import swm_fifo", timeout=5)
        problem = unclean(proc, warnings=True)
    except subprocess.TimeoutExpired:
        problem = "hangs"
    report("startup: metadata FIFO", target, 1, [problem] if problem else [])


# ------------------------------------------------------------------ sys.path


@pytest.fixture(scope="session")
def big_dir():
    """A directory with 100,000 entries (module names), readable by nobody.  Made once
    and kept in the test cache (making it takes up to half a minute on a busy machine)."""
    import fcntl

    from harness import cache_dir

    big = cache_dir() / "big-dir-100000"
    if not big.is_dir():
        with open(cache_dir() / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not big.is_dir():
                tmp = Path(tempfile.mkdtemp(prefix=".big-", dir=cache_dir()))
                tmp.chmod(0o755)
                subprocess.run("seq -f 'm%.0f.py' 0 99999 | xargs touch", shell=True,
                               cwd=str(tmp), check=True)
                os.replace(tmp, big)
    assert len(os.listdir(big)) == 100_000
    return big


SYS_PATH_CASES = ["startup .pth", "startup .pth, imports", "PYTHONPATH",
                  "before the first import", "vanishing while importing"]


@pytest.mark.parametrize("python, name", spread(EVERY, SYS_PATH_CASES, group="garbage-sys-path"))
def test_garbage_sys_path_never_breaks_startup_or_imports(python, name, big_dir):
    """Non-string entries, bytes, zip files, missing and vanishing directories, symlink
    loops and a directory with 100,000 entries on ``sys.path``: at startup (a ``.pth``
    file and ``PYTHONPATH``), before the first import (when the guard scans) and while
    other threads import.  One run per interpreter tries every case
    (:func:`_garbage_sys_path_run`)."""
    assert_input(once("startup: garbage sys.path", python, _garbage_sys_path_run, python,
                      big_dir), name)


def _garbage_sys_path_run(python, big_dir):
    """Every case of the garbage sys.path test on one fresh guarded ``python``, as root
    and as nobody: the failures of each case."""
    target = make_guarded(python, deploy="copy")
    try:
        cases, vanishing = _sys_path_cases(target, big_dir)
        assert [case[0] for case in cases] == SYS_PATH_CASES
        failures = by_input(SYS_PATH_CASES)
        tried = failed = 0
        for who in ("root", "nobody"):
            for name, args, env, warns in cases:
                if who == "nobody" and name == "before the first import":
                    continue  # it deletes a directory: root's case only
                if name == "before the first import":
                    (vanishing / "swp_gone_soon.py").parent.mkdir(exist_ok=True)
                    (vanishing / "swp_gone_soon.py").write_text("X = 1\n")
                tried += 1
                problem = _sys_path_problem(target, [target.executable, *args], who, env, warns)
                if problem:
                    failed += 1
                    failures[name].append((who, name, problem))
        record("startup: garbage sys.path", target.label, tried, failed)
        return failures
    finally:
        target.close()


def _sys_path_problem(target, argv, who, env, warns) -> Optional[str]:
    """Why one run of a sys.path case is not clean, or None."""
    proc = target.run(target.nobody(argv) if who == "nobody" else argv, env=env, timeout=120)
    problem = unclean(proc, warnings=warns)
    if problem is None and warns and proc.stdout.strip() != "ok":
        problem = "output: " + proc.stdout + proc.stderr
    if problem:
        control = target.run(argv, env={**env, "SITEWARDEN_DISABLE": "1"}, timeout=120)
        if unclean(control, warnings=warns):
            problem += " (fails without the guard too: not a valid input)"
    return problem


def _sys_path_cases(target, big_dir):
    """The garbage sys.path staged in ``target``: its cases (name, args, env, whether
    warnings are expected) and the directory the first-import case deletes."""
    target.add_shadowed(["swr_shadowed"])
    tmp = target.tmp
    loop = tmp / "loop"
    loop.symlink_to(loop)
    loops = tmp / "loops"
    loops.mkdir()
    for name in ("swp_loop", "swp_loop.py", "json"):
        (loops / name).symlink_to(name)
    import zipfile

    archive = tmp / "mods.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("swp_zipped.py", "X = 1\n")
        zf.writestr("swr_shadowed.py", "X = 'from a zip'\n")  # shadows the distro's copy
        zf.writestr("swp_pkg/__init__.py", "")
    (tmp / "notazip.zip").write_bytes(b"PK\x03\x04 garbage")
    vanishing = tmp / "vanishing"
    vanishing.mkdir()
    (vanishing / "swp_gone_soon.py").write_text("X = 1\n")
    for d in (tmp, loops, vanishing):
        d.chmod(0o755)
    # CPython 3.8-3.10 cannot make a path finder for a bytes entry (TypeError from
    # FileFinder, guard or not): the entry comes with its importer-cache slot filled.
    garbage = "[42, None, b'/tmp', ('t',), 3.5, '/no/such/dir', '', '\\udcff', %s]" % ", ".join(
        repr(str(p)) for p in (big_dir, loop, loops, archive, tmp / "notazip.zip",
                               big_dir / "m1.py"))
    pth = ("import sys; sys.path_importer_cache[b'/tmp'] = None; sys.path[:0] = %s\n%s\n%s\n"
           % (garbage, big_dir, archive))
    if target.interp.version[:2] < (3, 15):
        # 3.15's site reports a path line naming a missing directory on stderr, guard or not.
        pth += "/no/such/dir\n"
    # Before and after sitewarden.pth in the order site reads them.
    for name in ("00-sitewarden-garbage.pth", "zz-sitewarden-garbage.pth"):
        target.put(target.local_dir / name, "file", pth.encode())
    pythonpath = ":".join([str(archive), str(big_dir), str(loop), "/no/such", "", str(loops)])
    churn = (
        "import os, shutil, sys, threading\n"
        "d = %r\n"
        "stop = []\n"
        "def churn():\n"
        "    while not stop:\n"
        "        shutil.rmtree(d, ignore_errors=True)\n"
        "        try:\n"
        "            os.makedirs(d + '/swp_pkg_churn', exist_ok=True)\n"
        "        except OSError:\n"  # nobody cannot create it: the entry just stays missing
        "            pass\n"
        "sys.path[:0] = [d, d + '/x', 7]\n"
        "t = threading.Thread(target=churn); t.start()\n"
        "import json, random, enum, swr_shadowed, swp_zipped\n"
        "for i in range(200):\n"
        "    try:\n"
        "        __import__('swp_nothing%%d' %% i)\n"
        "    except ImportError:\n"
        "        pass\n"
        "stop.append(1); t.join()\n"
        "print('ok')\n" % str(tmp / "churned")
    )
    first_import = (
        "import sys, shutil\n"
        "sys.path_importer_cache[b'/tmp'] = None\n"
        "sys.path[:0] = %s + [%r]\n"
        "import json\n"  # the first import after startup: the guard scans sys.path
        "import swp_gone_soon\n"
        "shutil.rmtree(%r)\n"
        "import random, enum, swr_shadowed, swp_zipped, swp_pkg\n"
        "try:\n"
        "    import swp_loop\n"
        "except ImportError:\n"
        "    pass\n"
        "print('ok')\n" % (garbage, str(vanishing), str(vanishing))
    )
    cases = [
        ("startup .pth", ["-c", "pass"], {}, False),
        ("startup .pth, imports", ["-c", "import json, swr_shadowed, swp_zipped; print('ok')"],
         {}, True),
        ("PYTHONPATH", ["-c", "import json, swr_shadowed, swp_zipped; print('ok')"],
         {"PYTHONPATH": pythonpath}, True),
        ("before the first import", ["-c", first_import], {}, True),
        ("vanishing while importing", ["-c", churn], {}, True),
    ]
    return cases, vanishing


# ------------------------------------------------------------------ environment

env_value = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40)
KNOWN = ["SITEWARDEN_DISABLE", "SITEWARDEN_SILENCE", "_SITEWARDEN_OVERRIDE",
         "PIP_BREAK_SYSTEM_PACKAGES"]


@pytest.mark.parametrize("where", KNOWN)
@pytest.mark.parametrize("shared", spread(group="shared"), indirect=True)
def test_garbage_environment_never_breaks_startup(shared, where):
    """Garbage in every ``SITEWARDEN_*`` variable (and unknown ones) and in
    ``PIP_BREAK_SYSTEM_PACKAGES``, with a shadowed import (hypothesis); the input is the
    variable that also holds code (the examples split between them, one run)."""
    assert_input(once("startup: garbage environment", shared, _garbage_environment_run,
                      shared), where)


def _garbage_environment_run(shared):
    """The hypothesis examples of the garbage environment test (``25 * STRESS``, split
    between the variables that hold code): the failures of each variable."""
    failures = by_input(KNOWN)
    tried = failed = 0
    for i, where in enumerate(KNOWN):
        runs, problems = _environment_examples(shared, where,
                                               len(range(i, 25 * STRESS, len(KNOWN))))
        tried, failed = tried + runs, failed + len(problems)
        failures[where].extend(problems)
        if (shared.tmp / ("CANARY-env-" + where)).exists():
            failures[where].append(("code in %s ran" % where, "canary exists"))
    record("startup: garbage environment", shared.label, tried, failed)
    return failures


def _environment_examples(shared, where, examples):
    """``examples`` garbage environments with code in ``where``: (tried, failures)."""
    tried, failures = [0], []
    canary = shared.tmp / ("CANARY-env-" + where)

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(known=st.fixed_dictionaries({k: env_value for k in KNOWN}),
           extra=st.dictionaries(st.from_regex(r"\ASITEWARDEN_[A-Z_]{1,12}\Z"), env_value,
                                 max_size=3),
           code=st.sampled_from(["touch " + str(canary), "__import__('os').system('touch %s')"
                                 % canary, "$(touch %s)" % canary, "`touch %s`" % canary]))
    def check(known, extra, code):
        env = {**extra, **known}
        env[where] = env[where] + code  # code in a value is data, never run
        proc = shared.python("-c", "import json, swr_shadowed, swr_plain", env=env)
        tried[0] += 1
        problem = unclean(proc, warnings=True)
        if problem:
            failures.append((env, problem))

    check()
    return tried[0], failures


# ------------------------------------------------------------------ deployment faults

#: The runtime before the entry point existed (0.1.0 of 40068be): no ``activate``.
OLD_RUNTIME_INIT = ('"""sitewarden: PEP 668 enforced inside the interpreter."""\n'
                    '__version__ = "0.1.0"\n')
#: ``sitewarden.pth`` of 40068be (its runtime was ``sitewarden._startup``).
OLD_PTH = ("import os; os.environ.get('SITEWARDEN_DISABLE', '').strip().lower() in ('1', 'y', "
           "'yes', 't', 'true', 'on') or exec(\"try:\\n __import__('sitewarden._startup')"
           "._startup.activate()\\nexcept Exception:\\n pass\")\n")

_FAULT = r"""
import glob, os, shutil, sys
site, fault = sys.argv[1], sys.argv[2]
pkg = os.path.join(site, "sitewarden")
caches = [d for d in glob.glob(pkg + "/**/__pycache__", recursive=True)]
if fault == "runtime deleted":
    shutil.rmtree(pkg)
elif fault == "runtime is a file":
    shutil.rmtree(pkg); open(pkg, "w").close()
elif fault == "__init__.py deleted":
    os.unlink(os.path.join(pkg, "__init__.py"))
elif fault == "sources deleted, bytecode left":
    for f in glob.glob(pkg + "/**/*.py", recursive=True):
        os.unlink(f)
elif fault == "no bytecode":
    for d in caches:
        shutil.rmtree(d)
elif fault == "runtime unreadable":
    os.chmod(pkg, 0o700)
elif fault == "old hook, new runtime":
    with open(os.path.join(site, "sitewarden.pth"), "w") as f:
        f.write(sys.stdin.read())
elif fault == "new hook, old runtime":
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write(sys.stdin.read())
    for d in caches:
        shutil.rmtree(d)
else:
    raise SystemExit("unknown fault " + fault)
"""

_SAVE = r"""
import os, shutil, sys
site, saved, op = sys.argv[1:4]
for name in ("sitewarden", "sitewarden.pth", "sitewarden.start"):
    src, dst = (os.path.join(site, name), os.path.join(saved, name))
    if op == "restore":
        src, dst = dst, src
    if os.path.islink(dst) or os.path.isfile(dst):
        os.unlink(dst)
    elif os.path.isdir(dst):
        os.chmod(dst, 0o755)
        shutil.rmtree(dst)
    if os.path.isdir(src):
        shutil.copytree(src, dst, symlinks=True)
    elif os.path.lexists(src):
        shutil.copy2(src, dst)
"""

#: Runs argv as root with ``site`` mounted read-only (EROFS, which root cannot bypass).
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'

FAULTS = ["runtime deleted", "runtime is a file", "__init__.py deleted",
          "sources deleted, bytecode left", "no bytecode", "runtime unreadable",
          "old hook, new runtime", "new hook, old runtime"]


#: Each fault on a third of the interpreters, in rotation (each interpreter with two or three).
FAULT_PARAMS = spread(ROTATED, FAULTS, group="deployment-faults")


@pytest.mark.parametrize("python, fault", FAULT_PARAMS)
def test_deployment_faults_never_break_startup(python, fault):
    """The runtime deleted (wholly or partly) with the ``.pth`` left behind, no bytecode,
    an old hook with this runtime and this hook with an old runtime, each with the site
    directory writable (root), read-only to the user (nobody) and read-only for everyone
    (a read-only mount, root): every start is clean.  One run per interpreter applies
    them all, one after another (:func:`_deployment_faults_run`); then, counted for "no
    bytecode", the guard still warns from a read-only site without bytecode."""
    assert_input(once("startup: deployment faults", python, _deployment_faults_run, python),
                 fault)


def _deployment_faults_run(python):
    """Each fault of ``python``'s share (:data:`FAULT_PARAMS`) on one fresh guarded
    ``python``, the deployment restored after each: the failures of each fault."""
    faults = inputs_of(FAULT_PARAMS, python)
    target = make_guarded(python, deploy="copy")
    try:
        target.add_shadowed(["swr_shadowed"])
        saved = target.tmp / "saved-deployment"
        saved.mkdir()
        target.root(_SAVE, str(target.local_dir), str(saved), "save")
        site = str(target.local_dir)
        failures = by_input(faults)
        tried = failed = 0
        for fault in faults:
            data = {"old hook, new runtime": OLD_PTH, "new hook, old runtime": OLD_RUNTIME_INIT}
            target.root(_FAULT, site, fault, data=data.get(fault, "").encode())
            try:
                problems = _starts_under_fault(target, site)
            finally:
                target.root(_SAVE, site, str(saved), "restore")
            tried, failed = tried + 6, failed + len(problems)
            failures[fault].extend((fault, *problem) for problem in problems)
        # The guard still works after all that, from a read-only site without bytecode.
        target.root(_FAULT, site, "no bytecode")
        proc = target.run(target.nobody([target.executable, "-c", "import swr_shadowed"]))
        tried += 1
        if unclean(proc, warnings=True) or "ShadowWarning" not in proc.stderr:
            failed += 1
            # (counted for "no bytecode", or this interpreter's first fault if not its own)
            failures["no bytecode" if "no bytecode" in failures else faults[0]].append(
                ("no bytecode", "nobody", "warns", proc.stderr))
        record("startup: deployment faults", target.label, tried, failed, inputs=len(faults))
        return failures
    finally:
        target.close()


def _starts_under_fault(target, site):
    """The 6 starts (``-c pass``, a shadowed import; through a read-only mount, as nobody,
    as root) with a fault in place: (how, code, problem) of each unclean one."""
    problems = []
    for how in ("read-only mount", "nobody", "root"):  # root last: it may write bytecode
        for code, warns in (("pass", False), ("import swr_shadowed, json", True)):
            argv = [target.executable, "-c", code]
            if how == "nobody":
                argv = target.nobody(argv)
            elif how == "read-only mount":
                argv = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                        READ_ONLY, "sh", site, *argv]
            problem = unclean(target.run(argv), warnings=warns)
            if problem:
                problems.append((how, code, problem))
    return problems


# ------------------------------------------------------------------ blocks: nothing lost


def kill_points(python) -> List[Tuple[str, float]]:
    """The killed runs of the killed-upgrade test on ``python``, each an input: its name
    and when it is killed (a fraction of a whole upgrade's duration, drawn from
    ``Random(668)``; 6 runs, a third on the roots' interpreters, times STRESS)."""
    rng = random.Random(668)
    fractions = [rng.uniform(0.1, 1.0) for _ in range(scaled(python, 6) * STRESS)]
    return [("kill %d at %d percent" % (i + 1, round(100 * f)), f)
            for i, f in enumerate(fractions)]


@pytest.mark.parametrize("python, kill", spread(
    EVERY, lambda python: [name for name, _ in kill_points(python)], group="killed-upgrade"))
def test_killed_upgrade_never_loses_a_distro_file(python, kill):
    """SIGKILL pip at random points while it upgrades a distro-installed package with the
    override: the distro directory is byte-identical after every run.  Each kill point is
    an input; one run per interpreter tries them all (:func:`_killed_upgrade_run`), and
    fails them all if none of its runs was killed."""
    assert_input(once("nothing lost: killed distro upgrades", python, _killed_upgrade_run,
                      python), kill)


def _killed_upgrade_run(python):
    """One upgrade to its end, then one killed upgrade per kill point, on one fresh
    guarded ``python``: the failures of each kill point."""
    target = make_guarded(python, deploy="copy")
    try:
        argv, env, before = _prepare_upgrade(target)
        reset = ("import glob, os, shutil, sys\n"
                 "for p in glob.glob(sys.argv[1] + '/six*'):\n"
                 "    shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)\n")
        # One run to its end: how long an upgrade takes here, and that it lands locally.
        t0 = time.monotonic()
        proc = target.run(argv, env=env)
        duration = time.monotonic() - t0
        assert proc.returncode == 0, proc.stdout + proc.stderr
        version = argv[-1].partition("==")[2]
        assert target.read_bytes(target.local_dir / "six.py").find(version.encode()) >= 0
        points = kill_points(python)
        failures = by_input([name for name, _ in points])
        runs, kills, lost = 1, 0, 0
        previous = before
        for name, fraction in points:
            target.root(reset, str(target.local_dir))
            p = target.popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(fraction * duration)
            if p.poll() is None:
                p.kill()
                kills += 1
            p.wait()
            runs += 1
            after = target.digest(target.distro_dir, skip_pycache=True)
            lost += sum(1 for k in before if after.get(k) != before[k])
            lost += sum(1 for k in after if k not in before)
            # A kill point fails for what its own run changed (a loss stays lost after it).
            changed = sorted(k for k in set(before) | set(after)
                             if before.get(k) != after.get(k) != previous.get(k))
            if changed:
                failures[name].append(("distro files changed", changed[:20]))
            previous = after
        record("nothing lost: killed distro upgrades", target.label, runs, lost, kills=kills,
               distro_files=len(before), files_lost=lost)
        if kills == 0:
            for name in failures:
                failures[name].append("no run was killed; widen the delays")
        return failures
    finally:
        target.close()


def _prepare_upgrade(target):
    """A distro ``six`` in ``target`` and a wheel of the other version: the pip command
    that upgrades to it with the override, its environment, and the distro directory's
    digest before (bytecode aside)."""
    if not target.interp.is_debian_system:  # Debian ships six in its distro directory
        target.copy_in(lambda d: make_dist(d, "six", "1.16.0", {"six.py": "V = '1.16.0'\n"},
                                           kind="egg-info"), target.distro_dir)
    # Debian 12 ships six 1.16.0, 13 and sid 1.17.0: pip replaces it by the other one.
    shipped = [k for k in target.digest(target.distro_dir) if k.startswith("six-1.17.0.")]
    version = "1.16.0" if shipped else "1.17.0"
    house = target.tmp / "house"
    house.mkdir()
    shutil.copy(wheel("six", version), house)
    # pip 24.0 cannot install on 3.15 (importlib.metadata's locate_file became abstract).
    pip = "24.0" if target.interp.version[:2] < (3, 15) else pip_versions_for(
        target.interp.version)[-1]
    env = {"PYTHONPATH": str(pip_dir(pip)), "PIP_NO_CACHE_DIR": "1"}
    argv = [target.executable, "-m", "pip", "install", "--upgrade", "--break-system-packages",
            "--no-index", "--find-links", str(house), "six==" + version]
    # Bytecode aside: an interpreter Debian ships none for (sid's 3.15) writes its own.
    return argv, env, target.digest(target.distro_dir, skip_pycache=True)


# ------------------------------------------------------------------ load


@rotated()
def test_32_threads_warn_once_and_never_deadlock(target):
    """32 threads import shadowed and unshadowed modules (nested, slow to execute) in
    random orders at once: each shadowed module warns exactly once, the others never,
    and no thread hangs."""
    shadowed = ["swt_s%d" % i for i in range(20)]
    plain = ["swt_p%d" % i for i in range(12)]
    body = "import time; time.sleep(0.002)\n"
    target.add_shadowed(shadowed, body=body, plain=plain)
    # Nested: importing one shadowed module imports others while holding its module lock.
    nested = {"swt_s0": "import swt_s1, swt_p0\n", "swt_s1": "import swt_s2\n",
              "swt_p1": "import swt_s3\n"}

    def local(stage):
        for name, extra in nested.items():
            (stage / (name + ".py")).write_text(body + extra)

    target.copy_in(local, target.local_dir)
    code = r"""
import random, sys, threading, warnings
seen = []
warnings.showwarning = lambda m, c, *a, **k: seen.append(str(m).split("'")[1])
names = sys.argv[1:]
barrier = threading.Barrier(32)
errors = []
def work(seed):
    order = list(names)
    random.Random(seed).shuffle(order)
    barrier.wait()
    for name in order:
        try:
            __import__(name)
        except BaseException as exc:
            errors.append(repr(exc))
threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(32)]
[t.start() for t in threads]
[t.join(60) for t in threads]
alive = sum(t.is_alive() for t in threads)
print(alive, len(errors), " ".join(sorted(seen)))
"""
    rounds = 3 * STRESS
    failures = []
    for _ in range(rounds):
        proc = target.python("-c", code, *shadowed, *plain, timeout=120)
        problem = unclean(proc)
        if problem is None:
            alive, errors, *seen = proc.stdout.split()
            if alive != "0":
                problem = "deadlock: %s threads still running" % alive
            elif errors != "0":
                problem = "%s imports failed" % errors
            elif sorted(seen) != sorted(shadowed):
                problem = "warnings: %s" % seen
        if problem:
            failures.append(problem)
    record("load: 32 threads, warn once", target.label, rounds * 32 * len(shadowed + plain),
           len(failures), processes=rounds, threads=32, modules=len(shadowed + plain))
    assert not failures, failures[:3]


@pytest.mark.parametrize("shared", spread(group="shared"), indirect=True)
def test_two_hundred_concurrent_starts(shared):
    """200 interpreters started at once (importing a shadowed module): all succeed."""
    tried, failures = 0, []
    for _ in range(STRESS):
        procs = [shared.popen([shared.executable, "-c", "import json, swr_plain"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(200)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            tried += 1
            problem = unclean(subprocess.CompletedProcess(p.args, p.returncode, out, err))
            if problem:
                failures.append(problem)
    report("load: 200 concurrent starts", shared, tried, failures)


@pytest.mark.parametrize("shared", spread(group="shared"), indirect=True)
def test_threading_not_imported_at_startup(shared):
    """Startup (``-c`` and a script, with ``-I``/``-E``/``-s`` too) and the guard's first
    import never import ``threading`` (gevent-style programs patch it first)."""
    show = "import sys; sys.stdout.write(str('threading' in sys.modules))"
    after = "import json, swr_plain, sys; sys.stdout.write(str('threading' in sys.modules))"
    script = shared.tmp / "show_threading.py"
    script.write_text(show)
    script.chmod(0o644)
    cases = [["-c", show], ["-I", "-c", show], ["-E", "-c", show], ["-s", "-c", show],
             [str(script)], ["-c", after]]
    failures = []
    for args in cases:
        proc = shared.python(*args)
        if unclean(proc) or proc.stdout != "False":
            failures.append((args, proc.stdout, proc.stderr))
    guarded = shared.python("-c", "import sys; "
                            "print([getattr(f, '__name__', 0) for f in sys.meta_path])")
    assert "'sitewarden'" in guarded.stdout
    report("load: threading not imported at startup", shared, len(cases), failures)
