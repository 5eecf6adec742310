"""Debian's real ``/usr/bin/python3``, in a private mount namespace.

Versions from PyPI are installed into the local directory
(``/usr/local/lib/python3.X/dist-packages``, an overlay that exists only in
the namespace) with Debian's own pip, and into a user site
(``PYTHONUSERBASE`` in the namespace's tmpfs); the guard is deployed with the
real CLI inside the namespace.  Then: a newer PyYAML shadowing the distro's
6.0 warns on ``import yaml``; pyparsing 3.0.1 shadowing 3.0.9 warns and
names httplib2's violated requirement; ``six`` (a single-file module) warns;
``import lazr.uri`` does not; ``check --json`` lists all three and covers what
``pip check`` reports.
"""

from __future__ import annotations

import ast
import json
import re
import sys

import pytest

from guarded_python import IMPORTER, WARNING_LINE
from harness import DebianNamespace, available, wheel
from harness.fixtures import running_under_ci

pytestmark = pytest.mark.debian

LOCAL_PINS = [("PyYAML", "6.0.2"), ("pyparsing", "3.0.1"), ("six", "1.17.0")]
USER_PINS = [("distro", "1.9.0")]
HTTPLIB2_REQ = 'pyparsing (!=3.0.0,!=3.0.1,!=3.0.2,!=3.0.3,<4,>=2.4.2) ; python_version > "3.0"'


@pytest.fixture(scope="module")
def ns():
    ok, reason = available()
    if not ok:
        if running_under_ci():
            pytest.fail("the Debian namespace is required under CI: %s" % reason)
        pytest.skip("Debian namespace unavailable: %s" % reason)
    local = [str(wheel(n, v)) for n, v in LOCAL_PINS]
    user = [str(wheel(n, v)) for n, v in USER_PINS]
    space = DebianNamespace()
    try:
        pip = ["/usr/bin/python3", "-m", "pip", "install", "--no-index", "--no-deps",
               "--break-system-packages"]
        for argv in (pip + local, pip + ["--user"] + user):
            proc = space.run(argv)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        proc = space.run([sys.executable, "-m", "sitewarden", "install", "--python",
                          "/usr/bin/python3"])
        assert proc.returncode == 0 and "active: yes" in proc.stdout, proc.stdout + proc.stderr
        yield space
    finally:
        space.close()


def warnings_of(proc):
    out = []
    for line in proc.stderr.splitlines():
        m = WARNING_LINE.match(line)
        if m:
            out.append((m.group(3), m.group(4)))
    return out


def test_imports_warn_for_the_three_and_not_for_lazr(ns):
    local = str(ns.local_dir)
    proc = ns.run(["/usr/bin/python3", "-c", IMPORTER, "yaml", "pyparsing", "six", "lazr.uri",
                   "httplib2", "distro"])
    assert proc.returncode == 0, proc.stderr
    events = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    shown = [(e[1], e[2]) for e in events if e[0] == "warning"] + warnings_of(proc)
    about = {m.split("'")[1]: m for c, m in shown if c == "ShadowWarning"}
    assert sorted(about) == ["distro", "pyparsing", "six", "yaml"], shown
    assert [m for c, m in shown if c != "ShadowWarning"] == []
    assert "PyYAML 6.0.2, the local install directory" in about["yaml"]
    assert "/usr/lib/python3/dist-packages/yaml (PyYAML 6.0)" in about["yaml"]
    assert "pyparsing 3.0.1" in about["pyparsing"] and "pyparsing 3.0.9" in about["pyparsing"]
    assert "httplib2 0.20.4 requires '%s'" % HTTPLIB2_REQ in about["pyparsing"]
    assert "%s/six.py (six 1.17.0" % local in about["six"]
    assert "/usr/lib/python3/dist-packages/six.py (six 1.16.0)" in about["six"]
    assert "distro 1.9.0, the user site" in about["distro"]
    assert "-m pip uninstall --break-system-packages pyparsing" in about["pyparsing"]
    files = {e[1]: e[2] for e in events if e[0] == "import"}
    assert files["yaml"] == local + "/yaml/__init__.py"
    assert files["lazr.uri"] == "/usr/lib/python3/dist-packages/lazr/uri/__init__.py"


def test_check_json_lists_all_three_and_covers_pip_check(ns):
    proc = ns.run([sys.executable, "-m", "sitewarden", "check", "--python", "/usr/bin/python3",
                   "--json"])
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    modules = {m["module"]: m for m in report["shadowing"]["modules"]}
    assert {"yaml", "pyparsing", "six", "distro"} <= set(modules)
    assert "lazr" not in modules and "lazr.uri" not in modules
    assert (modules["yaml"]["winner"]["version"], modules["yaml"]["shadowed"][0]["version"]) \
        == ("6.0.2", "6.0")
    assert modules["pyparsing"]["severity"] == "high"
    assert modules["six"]["winner"]["class"] == "local"
    assert modules["distro"]["winner"]["class"] == "user"
    violations = {(v["consumer"], v["requires"]) for v in report["shadowing"]["violations"]}
    assert ("httplib2", "pyparsing") in violations
    assert report["guard"]["active"]
    entries = {e["path"]: e["class"] for e in report["layout"]["entries"]}
    assert entries["/usr/lib/python3/dist-packages"] == "distro"
    assert entries[str(ns.local_dir)] == "local"

    # Every conflict `pip check` reports about a package with a shadowed copy
    # is among the findings.
    pip = ns.run(["/usr/bin/python3", "-m", "pip", "check"])
    conflicts = re.findall(r"^(\S+) \S+ has requirement .*, but you have (\S+) (\S+)\.$",
                           pip.stdout, re.M)
    assert ("httplib2", "pyparsing", "3.0.1") in conflicts, pip.stdout
    shadowed_dists = {m["winner"]["distribution"].lower() for m in modules.values()
                      if m["winner"]["distribution"]}
    for consumer, required, _version in conflicts:
        if required.lower() in shadowed_dists:
            assert (consumer, required.lower()) in {(c, r.lower()) for c, r in violations}

    text = ns.run([sys.executable, "-m", "sitewarden", "check", "--python", "/usr/bin/python3"])
    assert "Shadowed modules" in text.stdout and "httplib2 0.20.4 requires" in text.stdout
