"""Shadowing on Debian's real pythons: the host's ``/usr/bin/python3`` (Debian 12)
in a private mount namespace, and Debian 13's ``python3``, sid's ``python3`` and
``python3.15`` in their debootstrapped roots.

Versions from PyPI are installed into the local directory
(``/usr/local/lib/python3.X/dist-packages``, an overlay that exists only in
the namespace) with Debian's own pip, and into a user site
(``PYTHONUSERBASE`` in the namespace's tmpfs); the guard is deployed with the
real CLI inside the namespace.  Then: pyparsing 3.0.1 shadowing the distro's
copy warns at ``import httplib2`` with both versions and httplib2's violated
requirement (on sid's 3.14 httplib2 then fails to import, as without the
guard) while the distro's copy stays byte-identical; ``six`` (a single-file
module) and a user-site ``distro`` warn (each of another version than the
release ships); a newer PyYAML (Debian 12 only: the
other releases' pythons have no PyYAML wheel of another version) warns;
``import lazr.uri`` does not; ``check --json`` lists them and covers what
``pip check`` reports.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from harness import DebianNamespace, available, wheel
from harness.fixtures import open_root, running_under_ci
from harness.guarded import IMPORTER, WARNING_LINE, joined_warnings, one_line
from harness.spread import DEBIAN, spread
from sitewarden.facts.text import unwrap_lines

pytestmark = pytest.mark.debian

OLD_REQ = "!=3.0.0,!=3.0.1,!=3.0.2,!=3.0.3,<4,>=2.4.2"
#: What each release ships (its python3-* packages, as each root's dpkg database lists
#: them), and httplib2's requirement on pyparsing as its metadata spells it.
FACTS = {
    "bookworm": {"yaml": "6.0", "six": "1.16.0", "distro": "1.8.0",
                 "pyparsing": "3.0.9", "httplib2": "0.20.4",
                 "req": 'pyparsing (%s) ; python_version > "3.0"' % OLD_REQ},
    "trixie": {"yaml": "6.0.2", "six": "1.17.0", "distro": "1.9.0",
               "pyparsing": "3.1.2", "httplib2": "0.22.0",
               "req": 'pyparsing%s; python_version > "3.0"' % OLD_REQ},
    "sid": {"yaml": "6.0.3", "six": "1.17.0", "distro": "1.9.0",
            "pyparsing": "3.3.3", "httplib2": "0.32.0",
            "req": "pyparsing<4,>=3.1"},
}


def _other(shipped, a, b):
    """``a``, or ``b`` where the release ships ``a``: the local copy differs from it."""
    return b if shipped == a else a


def local_pins(release):
    pins = [("pyparsing", "3.0.1"), ("six", _other(FACTS[release]["six"], "1.17.0", "1.16.0"))]
    return pins + ([("PyYAML", "6.0.2")] if release == "bookworm" else [])


def user_pins(release):
    return [("distro", _other(FACTS[release]["distro"], "1.9.0", "1.8.0"))]


@pytest.fixture(scope="module",
                params=spread(targets="debian"))
def ns(request):
    if request.param == DEBIAN:
        ok, reason = available()
        if not ok:
            if running_under_ci():
                pytest.fail("the Debian namespace is required under CI: %s" % reason)
            pytest.skip("Debian namespace unavailable: %s" % reason)
        space = DebianNamespace()
        space.release = "bookworm"
    else:
        space = open_root(request.param)
    try:
        space.pins = dict(local_pins(space.release) + user_pins(space.release))
        space.facts = FACTS[space.release]
        space.distro_before = space.tree_digest(str(space.distro_dir), skip_pycache=True)
        local = [str(wheel(n, v)) for n, v in local_pins(space.release)]
        user = [str(wheel(n, v)) for n, v in user_pins(space.release)]
        # --ignore-installed: Debian 13's and sid's pips cannot replace the distro's six
        # (no RECORD file) without the guard, which is not deployed yet.
        pip = [space.executable, "-m", "pip", "install", "--no-index", "--no-deps",
               "--break-system-packages", "--ignore-installed"]
        for argv in (pip + local, pip + ["--user"] + user):
            proc = space.run(argv)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        proc = space.run([*space.cli, "install", "--python", space.executable])
        assert proc.returncode == 0 and "active: yes" in proc.stdout, proc.stdout + proc.stderr
        yield space
    finally:
        space.close()


def warnings_of(proc):
    out = []
    for line in joined_warnings(proc.stderr).splitlines():
        m = WARNING_LINE.match(line)
        if m:
            out.append((m.group(3), m.group(4)))
    return out


def test_import_httplib2_warns_about_pyparsing(ns):
    """The acceptance line: at ``import httplib2``, one warning naming the local
    pyparsing 3.0.1, the distro's version and httplib2's requirement; the distro's copy
    of every package is byte-identical to before the local installs."""
    facts = ns.facts
    proc = ns.run([ns.executable, "-c", "import httplib2"])
    shown = warnings_of(proc)
    assert [c for c, _ in shown] == ["ShadowWarning"], proc.stderr
    message = shown[0][1]
    assert message.startswith("'pyparsing'"), message
    assert "pyparsing 3.0.1" in message and "pyparsing %s" % facts["pyparsing"] in message
    assert "httplib2 %s requires '%s'" % (facts["httplib2"], facts["req"]) in message, message
    if ns.python.version[:2] == (3, 14):
        # httplib2 0.32 uses pyparsing.DelimitedList, which 3.0.1 lacks: the import fails
        # after the warning told why, exactly as it fails without the guard.
        assert "AttributeError" in proc.stderr and "DelimitedList" in proc.stderr
    assert ns.tree_digest(str(ns.distro_dir), skip_pycache=True) == ns.distro_before


def test_imports_warn_and_not_for_lazr(ns):
    local = str(ns.local_dir)
    facts, pins = ns.facts, ns.pins
    names = ["yaml", "pyparsing", "six", "lazr.uri", "httplib2", "distro"]
    proc = ns.run([ns.executable, "-c", IMPORTER, *names])
    assert proc.returncode == 0, proc.stderr
    events = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    shown = [(e[1], one_line(e[2])) for e in events if e[0] == "warning"] + warnings_of(proc)
    about = {m.split("'")[1]: m for c, m in shown if c == "ShadowWarning"}
    expected = ["distro", "pyparsing", "six"] + (["yaml"] if "PyYAML" in pins else [])
    assert sorted(about) == expected, shown
    assert [m for c, m in shown if c != "ShadowWarning"] == []
    if "PyYAML" in pins:
        assert "PyYAML 6.0.2, the local install directory" in about["yaml"]
        assert "/usr/lib/python3/dist-packages/yaml (PyYAML %s)" % facts["yaml"] in about["yaml"]
    assert "pyparsing 3.0.1" in about["pyparsing"]
    assert "pyparsing %s" % facts["pyparsing"] in about["pyparsing"]
    assert "httplib2 %s requires '%s'" % (facts["httplib2"], facts["req"]) in about["pyparsing"]
    assert "%s/six.py (six %s" % (local, pins["six"]) in about["six"]
    assert "/usr/lib/python3/dist-packages/six.py (six %s)" % facts["six"] in about["six"]
    assert "distro %s, the user site" % pins["distro"] in about["distro"]
    assert re.search(r"consider removing it \(sitewarden quarantine [0-9a-f]{12} --python ",
                     about["pyparsing"]), about["pyparsing"]
    files = {e[1]: e[2] for e in events if e[0] == "import"}
    if "PyYAML" in pins:
        assert files["yaml"] == local + "/yaml/__init__.py"
    else:
        assert files["yaml"] == "/usr/lib/python3/dist-packages/yaml/__init__.py"
    assert files["lazr.uri"] == "/usr/lib/python3/dist-packages/lazr/uri/__init__.py"


def test_check_json_lists_them_and_covers_pip_check(ns):
    facts, pins = ns.facts, ns.pins
    proc = ns.run([*ns.cli, "check", "--python", ns.executable, "--json"])
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    modules = {m["module"]: m for m in report["shadowing"]["modules"]}
    assert {"pyparsing", "six", "distro"} <= set(modules)
    assert "lazr" not in modules and "lazr.uri" not in modules
    if "PyYAML" in pins:
        assert (modules["yaml"]["winner"]["version"], modules["yaml"]["shadowed"][0]["version"]) \
            == ("6.0.2", facts["yaml"])
    else:
        assert "yaml" not in modules
    assert modules["pyparsing"]["severity"] == "high"
    assert (modules["pyparsing"]["winner"]["version"],
            modules["pyparsing"]["shadowed"][0]["version"]) == ("3.0.1", facts["pyparsing"])
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
    pip = ns.run([ns.executable, "-m", "pip", "check"])
    conflicts = re.findall(r"^(\S+) \S+ has requirement .*, but you have (\S+) (\S+)\.$",
                           pip.stdout, re.M)
    assert ("httplib2", "pyparsing", "3.0.1") in conflicts, pip.stdout
    shadowed_dists = {m["winner"]["distribution"].lower() for m in modules.values()
                      if m["winner"]["distribution"]}
    for consumer, required, _version in conflicts:
        if required.lower() in shadowed_dists:
            assert (consumer, required.lower()) in {(c, r.lower()) for c, r in violations}

    # --verbose: each shadowed module's copies and requirements, though findings say them
    text = ns.run([*ns.cli, "check", "--python", ns.executable, "--verbose"])
    text.stdout = unwrap_lines(text.stdout)
    assert "Shadowed modules" in text.stdout
    assert "httplib2 %s requires" % facts["httplib2"] in text.stdout
