"""Deployment under faults: concurrency, kills at any point, symlinks (issue #6, property 4).

On every CPython 3.8+ (hermetic) and Debian's python (namespace), into the
default-scheme directory the guard is installed in on a real system:

- 16 concurrent ``install``/``uninstall`` runs serialise and leave a consistent state;
- a kill (SIGKILL of the deployer and its children) at any point of a fresh install,
  an upgrade or an uninstall leaves the old or the new deployment, and the next
  ``uninstall`` leaves the directory byte-identical to before the first ``install``;
- the deployer never writes through a symbolic link out of the target directory,
  and never writes outside it.

Iterations are bounded; ``SITEWARDEN_STRESS=N`` multiplies them.  Counts are
recorded with ``harness.figures``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from typing import Any, Dict, Tuple

from harness.figures import record, stress
from harness.spread import rotated

STRESS = stress()

CHECK_ACTIVE = "import sys; print([getattr(f, '__name__', 0) for f in sys.meta_path])"

_STATE = r"""
import json, os, sys
site = sys.argv[1]
manifest, missing = None, []
try:
    with open(os.path.join(site, "sitewarden", "_deployment.json")) as f:
        manifest = json.load(f)
    missing = [p for p in manifest["files"] if not os.path.lexists(os.path.join(site, p))]
except (OSError, ValueError):
    pass
print(json.dumps({
    "pth": os.path.lexists(os.path.join(site, "sitewarden.pth")),
    "start": os.path.lexists(os.path.join(site, "sitewarden.start")),
    "package": os.path.lexists(os.path.join(site, "sitewarden")),
    "manifest": manifest is not None,
    "missing": missing,
    "debris": sorted(n for n in os.listdir(site) if n.startswith(".sitewarden-")),
}))
"""


def inconsistency(t) -> Tuple[str, Dict[str, Any]]:
    """('' or what is wrong, the state): the interpreter starts cleanly, and a hook means
    a complete deployment and an active guard."""
    state = json.loads(t.root(_STATE, str(t.local_dir)).stdout)
    proc = t.python("-c", CHECK_ACTIVE)
    state["active"] = "'sitewarden'" in proc.stdout
    if proc.returncode != 0 or proc.stderr:
        return "unclean start: " + proc.stderr[-1000:], state
    if state["pth"] and not (state["active"] and state["manifest"] and not state["missing"]):
        return "a hook without a complete deployment", state
    if state["package"] and not state["manifest"]:
        return "a package without its manifest (half written)", state
    if state["active"] != state["pth"]:
        return "active without a hook", state
    return "", state


def normalized(t) -> Dict[str, Any]:
    """The site directory's digest without the leftovers a killed run may leave (hidden
    ``.sitewarden-*`` entries, removed by the next run), without the manifest's timestamp
    and bytecode contents (a ``.pyc`` records its source's mtime): what "the old or the
    new deployment" is compared by."""
    digest = t.digest(t.local_dir)
    out = {k: (v if not k.endswith(".pyc") else [v[0], "bytecode"])
           for k, v in digest.items() if not k.startswith(".sitewarden-")}
    key = "sitewarden/_deployment.json"
    if key in out:
        manifest = json.loads(t.read_bytes(t.local_dir / key))
        manifest.pop("written", None)
        out[key] = [out[key][0], json.dumps(manifest, sort_keys=True)]
    return out


def cli_popen(t, *args):
    return t.popen([*t.cli_argv, *args, "--python", t.executable], stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, text=True, start_new_session=True)


@rotated("bare_target")
def test_concurrent_installs_and_uninstalls(bare_target):
    t = bare_target
    before = t.digest(t.local_dir)
    tried, failures = 0, []
    for _round in range(STRESS):
        procs = [cli_popen(t, "install" if i % 2 == 0 else "uninstall") for i in range(16)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            tried += 1
            # An uninstall that finds nothing to remove says so (exit 2); an install whose
            # deployment a concurrent uninstall removed before its fresh start loaded it
            # says so (exit 1: "active: no"); nothing else fails.
            raced = p.returncode == 1 and p.args[-3] == "install" and "active: no" in out
            if p.returncode != 0 and "no sitewarden deployment" not in err and not raced:
                failures.append((p.args[-3], p.returncode, out[-1000:], err[-1000:]))
        problem, state = inconsistency(t)
        if problem:
            failures.append((problem, state))
        hooks = sorted(n for n in t.digest(t.local_dir)
                       if n in ("sitewarden.pth", "sitewarden.start"))
        if hooks not in ([], ["sitewarden.pth"]):  # one hook file per deployment
            failures.append(("hooks", hooks))
    t.install()
    t.uninstall()
    identical = t.digest(t.local_dir) == before
    record("deploy: 16 concurrent install/uninstall", t.label, tried,
           len(failures) + (not identical), rounds=STRESS)
    assert not failures, failures[:3]
    assert identical, "uninstall did not restore the directory"


@rotated("bare_target")
def test_killed_deployer_leaves_old_or_new_and_uninstall_restores(bare_target):
    """SIGKILL at random points of a fresh install, an upgrade and an uninstall: the next
    start finds the old or the new deployment, never a mix (a runtime without its hook
    is inert: old for every process); after each, ``uninstall`` leaves the directory
    byte-identical to before the first install."""
    t = bare_target
    before = t.digest(t.local_dir)
    clean = normalized(t)
    durations = {}
    t0 = time.monotonic()
    t.install()
    durations["fresh install"] = time.monotonic() - t0
    deployed = normalized(t)
    t0 = time.monotonic()
    t.install()
    durations["upgrade"] = time.monotonic() - t0
    t0 = time.monotonic()
    t.uninstall()
    durations["uninstall"] = time.monotonic() - t0
    assert t.digest(t.local_dir) == before
    # Two names cannot appear at once: a kill between the package's swap and the hooks'
    # writes (first install), or between the hooks' removal and the package's (uninstall),
    # leaves the runtime without its .pth: inert, as no process loads it (the old state
    # for every process); the next install completes it, uninstall removes it.  Counted.
    inert = [{k: v for k, v in deployed.items() if k not in hooks}
             for hooks in (("sitewarden.pth",),)]
    rng = random.Random(668)
    runs = kills = identical = debris = inert_seen = 0
    failures = []
    for i in range(t.scaled(6) * STRESS):
        scenario = ("fresh install", "upgrade", "uninstall")[i % 3]
        if scenario != "fresh install":
            t.install()
        allowed = {"fresh install": (clean, deployed, *inert), "upgrade": (deployed,),
                   "uninstall": (deployed, clean, *inert)}[scenario]
        p = cli_popen(t, "uninstall" if scenario == "uninstall" else "install")
        time.sleep(rng.uniform(0.05, 1.0) * durations[scenario])
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            kills += 1
        p.communicate(timeout=300)
        runs += 1
        problem, state = inconsistency(t)
        debris += bool(state["debris"])
        if problem:
            failures.append((scenario, problem, state))
        else:
            now = normalized(t)
            inert_seen += now in inert
            if now not in allowed:
                failures.append((scenario, "neither the old nor the new deployment", state))
        # The next uninstall restores the directory exactly (or finds nothing to remove).
        proc = t.cli("uninstall", "--python", t.executable)
        if proc.returncode != 0 and "no sitewarden deployment" not in proc.stderr:
            failures.append((scenario, "uninstall failed", proc.stderr))
        if t.digest(t.local_dir) == before:
            identical += 1
        else:
            failures.append((scenario, "uninstall left the directory changed", state))
    record("deploy: killed deployer leaves old or new", t.label, runs, len(failures),
           kills=kills, inert_runtime_left=inert_seen, staging_leftovers=debris)
    record("deploy: uninstall byte-identical after kills", t.label, runs, runs - identical,
           kills=kills)
    assert kills > 0, "no run was actually killed; widen the delays"
    assert not failures, failures[:3]


_PLANT = r"""
import os, sys
site, outside, what = sys.argv[1:4]
if what == "links inside":
    pkg = os.path.join(site, "sitewarden")
    os.symlink(outside, os.path.join(pkg, "__pycache__", "outside-dir"))
    os.symlink(os.path.join(outside, "precious.txt"),
               os.path.join(pkg, "_vendor", "packaging", "precious.py"))
    os.symlink(outside, os.path.join(pkg, "_vendor", "linked"))
elif what == "stale staging link":
    os.symlink(outside, os.path.join(site, ".sitewarden-stale"))
else:
    target = outside if what == "sitewarden" else os.path.join(outside, "x")
    os.symlink(target, os.path.join(site, what))
"""

_OUTSIDE = r"""
import os, sys
d = sys.argv[1]
os.makedirs(os.path.join(d, "sub"), exist_ok=True)
with open(os.path.join(d, "precious.txt"), "w") as f:
    f.write("keep me\n")
with open(os.path.join(d, "sub", "__init__.py"), "w") as f:
    f.write("")
"""


def _outside_digest(t) -> Dict[str, Any]:
    """Everything the target's installation holds outside the site directory (bytecode
    aside: the interpreter itself may write that)."""
    roots = t.ns.overlays if hasattr(t, "ns") else [str(t.hp.prefix.parent)]
    local = os.path.realpath(t.local_dir)
    out = {}
    for root in roots:
        for rel, value in t.digest(root, skip_pycache=True).items():
            path = os.path.join(root, rel)
            if path != local and not path.startswith(local + os.sep):
                out[path] = value
    return out


@rotated("bare_target")
def test_never_writes_through_a_symlink_or_outside(bare_target):
    """Symbolic links out of the site directory where the deployer writes (the package,
    the hooks), inside an existing deployment, and as a stale staging entry: refused or
    removed as links, never followed; nothing outside the site directory changes."""
    t = bare_target
    outside = t.tmp / "outside"
    t.root(_OUTSIDE, str(outside))
    outside_before = t.digest(outside)
    installation_before = _outside_digest(t)
    tried, failures = 0, []
    for name in ("sitewarden", "sitewarden.pth", "sitewarden.start"):
        t.root(_PLANT, str(t.local_dir), str(outside), name)
        proc = t.cli("install", "--python", t.executable)
        tried += 1
        if proc.returncode != 2 or "symbolic link" not in proc.stderr:
            failures.append((name, proc.returncode, proc.stderr))
        state = json.loads(t.root(_STATE, str(t.local_dir)).stdout)
        if state["debris"]:
            failures.append((name, "staging left", state["debris"]))
        t.put(t.local_dir / name, "absent")
    for what in ("stale staging link", "links inside"):
        if what == "links inside":
            t.install()
        t.root(_PLANT, str(t.local_dir), str(outside), what)
        for command in ("install", "uninstall"):
            proc = t.cli(command, "--python", t.executable)
            tried += 1
            if proc.returncode != 0:
                failures.append((what, command, proc.stderr))
        t.put(t.local_dir / "sitewarden", "absent")
    if t.digest(outside) != outside_before:
        failures.append("the directory the links point to changed")
    installation_after = _outside_digest(t)
    changed = sorted(k for k in set(installation_before) | set(installation_after)
                     if installation_before.get(k) != installation_after.get(k))
    if changed:
        failures.append(("written outside the site directory", changed[:10]))
    record("deploy: never through a symlink, never outside", t.label, tried, len(failures))
    assert not failures, failures
