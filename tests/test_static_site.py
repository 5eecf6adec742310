"""``site_emulation.emulate()`` under ``-S`` gives what a normal start gives, running nothing.

``check``'s probe is to audit startup code without running it: it will start the target
with ``-S`` and rebuild ``sys.path`` by reading only.  Here, on every target (hermetic
CPythons 3.8-3.13, Debian 12's python in a namespace, Debian 13's, sid's 3.14 and 3.15),
one driver run inside the target sets up two venvs and starts the target in each
scenario twice: a normal start prints ``sys.path``, ``sys.prefix``, ``sys.exec_prefix``,
``site.ENABLE_USER_SITE`` and the files ``sitecustomize``/``usercustomize`` came from;
a ``-S`` start prints what :func:`emulate` says of them, with the same flags, environment
and working directory.  They must agree exactly.  The startup files hold path lines
(relative, absolute, leading and trailing blanks, CRLF, a missing directory, duplicates
within a file, across files and site directories and with ``PYTHONPATH``, a dot file:
read before 3.13 only); ``PYTHONPATH`` has a relative entry, a duplicate, a trailing
slash, an empty one.  Scenarios: the user site enabled (``PYTHONUSERBASE`` under the
test's temp dir), disabled by ``PYTHONNOUSERSITE=1``, by ``-s``, by ``-I``; a venv made
from the target without and with ``--system-site-packages``; a user site whose ``.pth``
has an import line creating a file.  Import lines and, on 3.15, a ``.start`` entry
point (and the ``.pth`` import line it turns off) are recorded by the emulation and
never run: the files their code creates appear after the normal start only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

import sitewarden
from harness.guarded import make_guarded
from harness.spread import spread, target_params

SRC = str(Path(sitewarden.__file__).resolve().parent.parent)

#: A normal start: what site.main() left.
REAL = """
import json, site, sys
m = sys.modules
print(json.dumps({"path": sys.path, "prefix": sys.prefix, "exec_prefix": sys.exec_prefix,
                  "enable_user_site": site.ENABLE_USER_SITE,
                  "sitecustomize": getattr(m.get("sitecustomize"), "__file__", None),
                  "usercustomize": getattr(m.get("usercustomize"), "__file__", None)}))
"""

#: A ``-S`` start (argv[1]: this checkout's src): the emulation, whether it left the
#: process as it was, and what ``apply()`` then makes of it.
EMU = """
import json, site, sys
sys.path.insert(0, sys.argv[1])
from sitewarden.audit import site_emulation as static_site
del sys.path[0]

def state():
    # (sys.path_importer_cache gains the emulated entries' finders: kept on purpose)
    return [list(sys.path), sys.prefix, sys.exec_prefix, site.ENABLE_USER_SITE,
            site.USER_BASE, site.USER_SITE, list(site.PREFIXES),
            "sitecustomize" in sys.modules]

before = state()
s = static_site.emulate()
untouched = state() == before
out = {"path": s.full_path, "prefix": s.prefix, "exec_prefix": s.exec_prefix,
       "enable_user_site": s.enable_user_site, "sitecustomize": s.sitecustomize,
       "usercustomize": s.usercustomize}
more = s.as_json()
s.apply()
applied = [sys.path == out["path"], sys.prefix == s.prefix, sys.exec_prefix == s.exec_prefix,
           site.ENABLE_USER_SITE == s.enable_user_site]
print(json.dumps({"seen": out, "untouched": untouched, "applied": applied, "more": more}))
"""

#: Run in the target (``-I -S``, argv[1]: the spec): makes the venvs, then each
#: scenario's ``-S`` start and normal start, the markers removed before each; prints
#: what each run printed and which markers it left.
DRIVER = r"""
import json, os, subprocess, sys
spec = json.loads(sys.argv[1])
here = "python%d.%d" % sys.version_info[:2]
for venv, flags in spec["venvs"]:
    proc = subprocess.run([spec["python"], "-m", "venv", "--without-pip"] + flags + [venv],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode:
        sys.exit("venv %s: %s" % (venv, proc.stdout))
    sp = os.path.join(venv, "lib", here, "site-packages")
    os.mkdir(os.path.join(sp, "swr-static-vrel"))
    with open(os.path.join(sp, "swr-static-v.pth"), "w") as f:
        f.write(spec["venv_pth"])
out = {}
for sc in spec["scenarios"]:
    env = dict(os.environ)
    env.update(sc["env"])
    for name in sc["unset"]:
        env.pop(name, None)
    runs = {}
    for kind in ("emu", "real"):
        for marker in spec["markers"].values():
            if os.path.exists(marker):
                os.unlink(marker)
        argv = [sc["python"]] + sc["flags"] + (
            ["-S", "-B", "-c", spec["emu"], spec["src"]] if kind == "emu" else ["-c", spec["real"]])
        proc = subprocess.run(argv, env=env, cwd=spec["cwd"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        runs[kind] = {"status": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                      "markers": sorted(k for k, p in spec["markers"].items()
                                        if os.path.exists(p))}
    out[sc["name"]] = runs
print(json.dumps(out))
"""

SCENARIOS = ["user-site", "no-user-site-env", "no-user-site-flag", "isolated", "venv",
             "venv-system-site", "import-line"]


def _pth(*lines: str, end: str = "\n") -> bytes:
    return "".join(line + end for line in lines).encode()


def _setup(t) -> Dict[str, Any]:
    """Put the startup files into the target and run every scenario in it (one run of
    :data:`DRIVER`); what the tests read."""
    v = "python%d.%d" % t.version[:2]
    w = t.tmp / "swr-static"
    d = {name: w / name for name in ("d1", "d2", "d3", "d4", "dot", "du", "dv", "ds",
                                     "pp1", "pp2", "pprel", "missing")}
    for name, path in d.items():
        if name != "missing":
            path.mkdir(parents=True)
    user_site, user_site2 = (w / base / "lib" / v / "site-packages" for base in ("ub", "ub2"))
    markers = {name: str(w / ("marker-" + name))
               for name in ("import", "entry-point", "turned-off", "usercustomize")}
    (user_site / "swr-static-urel").mkdir(parents=True)
    (user_site / "swr-static-u.pth").write_bytes(_pth("swr-static-urel", str(d["du"]),
                                                      str(d["d1"]), str(d["missing"])))
    (user_site / "usercustomize.py").write_text(
        "open(%r, 'w').close()\n" % markers["usercustomize"])
    user_site2.mkdir(parents=True)
    (user_site2 / "swr-static-imp.pth").write_bytes(_pth(
        str(d["d3"]), "import os; open(%r, 'w').close()" % markers["import"], str(d["d4"])))

    def local(stage: Path) -> None:
        for name in ("swr-static-rel", "swr-static-rel2", "swr-static-lead"):
            (stage / name).mkdir()
        # a comment, relative and absolute lines, blanks, a missing directory,
        # duplicates (within the file, with PYTHONPATH), CRLF, leading blanks (3.15+
        # strips them), trailing ones
        (stage / "swr-static-a.pth").write_bytes(_pth(
            "# swr-static", "swr-static-rel", str(d["d1"]), "", "   ", str(d["missing"]),
            str(d["d1"]), str(d["pp1"]), "./swr-static-rel2", "  swr-static-lead",
            str(d["d2"]) + "  \t", end="\r\n"))
        (stage / "swr-static-b.pth").write_bytes(_pth(str(d["d2"]), str(d["d3"]) + "/"))
        (stage / ".swr-static-dot.pth").write_bytes(_pth(str(d["dot"])))  # 3.13+ skip it
        (stage / "sitecustomize.py").write_text("import sys\nsys.swr_static = 1\n")
        if t.version >= (3, 15):
            (stage / "swr-static-s.pth").write_bytes(_pth(
                "import os; open(%r, 'w').close()" % markers["turned-off"], str(d["ds"])))
            (stage / "swr-static-s.start").write_bytes(_pth("# PEP 829", "swr_static_ep:main"))
            (stage / "swr_static_ep.py").write_text(
                "def main():\n    open(%r, 'w').close()\n" % markers["entry-point"])

    def distro(stage: Path) -> None:
        (stage / "swr-static-c.pth").write_bytes(_pth(str(d["d1"]), str(d["d4"])))

    t.copy_in(local, t.local_dir)
    t.copy_in(distro, t.distro_dir)

    venv, venv_system = str(w / "venv"), str(w / "venv-system")
    pythonpath = ":".join([str(d["pp1"]), "pprel", str(d["pp1"]), str(d["pp2"]) + "/", "",
                           str(d["d1"])])
    user = {"PYTHONUSERBASE": str(w / "ub"), "PYTHONPATH": pythonpath}
    scenarios = {
        "user-site": (t.executable, [], user),
        "no-user-site-env": (t.executable, [], dict(user, PYTHONNOUSERSITE="1")),
        "no-user-site-flag": (t.executable, ["-s"], user),
        "isolated": (t.executable, ["-I"], user),
        "venv": (venv + "/bin/python", [], user),
        "venv-system-site": (venv_system + "/bin/python", [], user),
        "import-line": (t.executable, [], {"PYTHONUSERBASE": str(w / "ub2")}),
    }
    spec = {
        "python": t.executable, "src": SRC, "cwd": str(w), "emu": EMU, "real": REAL,
        "markers": markers,
        "venvs": [[venv, []], [venv_system, ["--system-site-packages"]]],
        "venv_pth": _pth("swr-static-vrel", str(d["dv"]), str(d["d1"])).decode(),
        "scenarios": [{"name": name, "python": python, "flags": flags, "env": env,
                       "unset": ["PYTHONNOUSERSITE"] if "PYTHONNOUSERSITE" not in env else []}
                      for name, (python, flags, env) in scenarios.items()],
    }
    driver = t.tmp / "swr-static-driver.py"
    driver.write_text(DRIVER)
    proc = t.python("-I", "-S", str(driver), json.dumps(spec))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {"version": t.version[:2], "label": t.label, "local": str(t.local_dir),
            "distro": str(t.distro_dir), "dirs": {k: str(p) for k, p in d.items()},
            "user_site": str(user_site), "user_site2": str(user_site2), "venv": venv,
            "venv_system": venv_system, "markers": markers, "runs": json.loads(proc.stdout)}


@pytest.fixture(scope="module", params=target_params())
def target_runs(request):
    """Each target, set up and every scenario run once (its tests share it: one xdist
    group per target, ``spread(group=...)``)."""
    t = make_guarded(request.param, deploy=False)
    try:
        yield _setup(t)
    finally:
        t.close()


def _runs(target_runs, scenario):
    runs = target_runs["runs"][scenario]
    for kind in ("emu", "real"):
        assert runs[kind]["status"] == 0, (kind, runs[kind]["stderr"])
    return json.loads(runs["emu"]["stdout"]), json.loads(runs["real"]["stdout"])


@pytest.mark.parametrize("target_runs", spread(group="static-site"), indirect=True)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_emulation_agrees_with_a_normal_start(target_runs, scenario):
    r = target_runs
    emu, real = _runs(r, scenario)
    assert emu["seen"] == real, (r["label"], scenario, emu["seen"], real)
    assert emu["untouched"], "emulate() changed the process"
    assert emu["applied"] == [True] * 4, emu["applied"]
    assert r["runs"][scenario]["emu"]["markers"] == [], r["runs"][scenario]["emu"]

    # the scenario is what it says (else agreeing proves little)
    d, path, version = r["dirs"], real["path"], tuple(r["version"])
    venv = {"venv": r["venv"], "venv-system-site": r["venv_system"]}.get(scenario)
    user_site_on = scenario in ("user-site", "venv-system-site")
    assert (r["user_site"] in path) == user_site_on, path
    assert real["enable_user_site"] is (user_site_on or scenario == "import-line"), real
    assert real["usercustomize"] == (r["user_site"] + "/usercustomize.py"
                                     if user_site_on else None), real
    assert (d["du"] in path) == user_site_on, path
    assert (r["local"] in path) == (scenario != "venv"), path
    assert d["missing"] not in path, path
    if venv:
        assert real["prefix"] == real["exec_prefix"] == venv, real
        assert venv + "/lib/python%d.%d/site-packages/swr-static-vrel" % version in path, path
        assert d["dv"] in path, path
    else:
        assert real["prefix"] != r["venv"], real
    if scenario != "venv":
        assert path.count(d["d1"]) == 1 and d["d2"] in path and d["d3"] in path, path
        assert (d["dot"] in path) == (version < (3, 13)), path  # 3.13+ skip dot files
        assert (r["local"] + "/swr-static-lead" in path) == (version >= (3, 15)), path
        if scenario == "import-line":
            assert r["user_site2"] in path and d["d4"] in path, path
    # PYTHONPATH (pp1 is also a .pth line's, after the local directory)
    if scenario in ("isolated", "import-line"):
        assert d["pprel"] not in path and d["pp2"] not in path, path
    else:
        first = venv + "/lib/python%d.%d/site-packages" % version if venv else r["local"]
        assert path.index(d["pp1"]) < path.index(first), path
        assert d["pprel"] in path and d["pp2"] in path, path
    if scenario == "isolated":
        assert path[0] != "", path  # -I: nothing before the standard library
    else:
        assert path[0] == "", path


@pytest.mark.parametrize("target_runs", spread(group="static-site"), indirect=True)
def test_startup_code_is_recorded_never_run(target_runs):
    """An import line (and on 3.15 a ``.start`` entry point, and the ``.pth`` import line
    it turns off) is recorded with its file and line; the emulation runs none: the file
    each creates appears after the normal start only, which also runs
    ``usercustomize``.  3.15 reports a missing ``.pth`` directory at every start."""
    r = target_runs
    emu, _real = _runs(r, "import-line")
    runs = r["runs"]["import-line"]
    code = emu["more"]["code"]
    pth = r["user_site2"] + "/swr-static-imp.pth"
    imports = [c for c in code if c["file"] == pth]
    assert [(c["kind"], c["line"], c["runs"]) for c in imports] == [("import", 2, True)], code
    assert imports[0]["text"] == "import os; open(%r, 'w').close()" % r["markers"]["import"]
    assert imports[0]["note"].startswith("runs code at startup: not applied"), imports
    assert runs["emu"]["markers"] == [], runs["emu"]
    version = tuple(r["version"])
    expected = ["entry-point", "import"] if version >= (3, 15) else ["import"]
    assert runs["real"]["markers"] == expected, runs["real"]
    user = r["runs"]["user-site"]
    assert user["emu"]["markers"] == [] and "usercustomize" in user["real"]["markers"], user
    customize = [c for c in json.loads(user["emu"]["stdout"])["more"]["code"]
                 if c["kind"] == "usercustomize"]
    assert [c["file"] for c in customize] == [r["user_site"] + "/usercustomize.py"], customize

    ours = [e for e in emu["more"]["errors"] if "swr-static" in (e["file"] or "")]
    if version >= (3, 15):
        start = r["local"] + "/swr-static-s.start"
        points = [c for c in code if c["kind"] == "entry-point" and c["file"] == start]
        assert [(c["line"], c["text"], c["runs"]) for c in points] == [
            (2, "swr_static_ep:main", True)], code
        off = [c for c in code if c["file"] == r["local"] + "/swr-static-s.pth"]
        assert [(c["kind"], c["line"], c["runs"], c["note"]) for c in off] == [
            ("import", 1, False, "turned off by " + start)], code
        assert [e["file"] for e in ours] == [r["local"] + "/swr-static-a.pth"], ours
        assert r["dirs"]["missing"] in ours[0]["error"], ours
        assert "%s does not exist" % r["dirs"]["missing"] in runs["real"]["stderr"]
    else:
        assert ours == [], ours
