"""Import-time shadowing warnings and the ``check`` report, on real interpreters.

Every test builds a hermetic Debian-shaped python (local directory before a
distro directory, as on Debian) with the guard deployed, "installs"
distributions into its directories with ``make_dist``, and runs the real
interpreter.  The numbered scenarios are the detector's test cases: each
test's docstring says what it sets up and what must (not) be reported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from harness import make_dist, pyenv_interpreters
from harness.guarded import joined_warnings
from harness.spread import spread

HTTPLIB2_REQ = 'pyparsing (!=3.0.0,!=3.0.1,!=3.0.2,!=3.0.3,<4,>=2.4.2) ; python_version > "3.0"'


def pkg(name, version):
    return {"%s/__init__.py" % name: "__version__ = %r\n" % version}


def debian_like(g, local=True):
    """The Debian 12 facts of the reference, in the hermetic distro directory,
    with newer/older local copies of three of them."""
    d = g.distro_dir
    make_dist(d, "pyparsing", "3.0.9", pkg("pyparsing", "3.0.9"))
    make_dist(d, "httplib2", "0.20.4", {"httplib2/__init__.py": ""}, requires=[
        'pyparsing (<3,>=2.4.2) ; python_version < "3.0"', HTTPLIB2_REQ])
    make_dist(d, "six", "1.16.0", {"six.py": "version = '1.16.0'\n"}, kind="egg-info")
    make_dist(d, "PyYAML", "6.0", {"yaml/__init__.py": "", "_yaml/__init__.py": ""})
    make_dist(d, "lazr.uri", "1.0.6", {"lazr/uri/__init__.py": ""}, kind="egg-info")
    make_dist(d, "lazr.restfulclient", "0.14.5", {"lazr/restfulclient/__init__.py": ""},
              kind="egg-info")
    make_dist(d, "fastmod", "1.0", {"fastmod.so": b"not really an ELF file"})
    if local:
        make_dist(g.local_dir, "pyparsing", "3.0.1", pkg("pyparsing", "3.0.1"), installer="pip")
        make_dist(g.local_dir, "six", "1.17.0", {"six.py": "version = '1.17.0'\n"}, installer="pip")
        make_dist(g.local_dir, "PyYAML", "6.0.2", {"yaml/__init__.py": "", "_yaml/__init__.py": ""},
                  installer="pip")
        make_dist(g.local_dir, "fastmod", "2.0", {"fastmod.so": b"not an ELF file either"},
                  installer="pip")


# ---------------------------------------------------------------- every interpreter


@pytest.mark.parametrize("interp", spread(targets="hermetic"))
def test_runtime_warnings_on_every_python(interp, guarded):
    """Packages, single-file and extension modules warn once each; the
    pyparsing warning names httplib2's violated requirement; a namespace
    package portion does not warn; imports are unchanged."""
    g = guarded(interp)
    debian_like(g)
    # A local portion of the lazr namespace with a different module: not shadowing.
    make_dist(g.local_dir, "lazr.other", "1.0", {"lazr/other/__init__.py": ""}, installer="pip")
    r = g.imports("yaml", "pyparsing", "six", "fastmod", "lazr.uri", "lazr.other", "httplib2",
                  "yaml", "six")
    assert sorted(r.warned_about()) == ["fastmod", "pyparsing", "six", "yaml"]
    assert r.warnings("PathWarning") == []
    (pyparsing,) = [w for w in r.warnings() if w.startswith("'pyparsing'")]
    assert "pyparsing 3.0.1" in pyparsing and "pyparsing 3.0.9" in pyparsing
    assert "httplib2 0.20.4 requires '%s'" % HTTPLIB2_REQ in pyparsing
    assert str(g.local_dir / "pyparsing") in pyparsing
    assert str(g.distro_dir / "pyparsing") in pyparsing
    (six,) = [w for w in r.warnings() if w.startswith("'six'")]
    assert "six 1.17.0" in six and "six 1.16.0" in six and str(g.local_dir / "six.py") in six
    assert "consider removing it (sitewarden quarantine " in six and " --python %s)" % (
        g.executable) in six and "-m pip" not in six
    # Never changes what gets imported.
    assert r.imported("six")[0] == str(g.local_dir / "six.py")
    assert r.imported("pyparsing")[0] == str(g.local_dir / "pyparsing" / "__init__.py")
    assert r.imported("lazr.uri")[0] == str(g.distro_dir / "lazr" / "uri" / "__init__.py")
    assert r.imported("lazr.other")[1] == "ok"
    assert r.imported("fastmod")[1].startswith("ImportError")  # not a real extension


def test_duplicated_submodule_of_a_namespace_package_warns(guarded):
    """Scenario 9: ``lazr`` is a namespace package (no warning for it), but a
    local ``lazr/restfulclient`` duplicates the distro's real module."""
    g = guarded()
    debian_like(g, local=False)
    make_dist(g.local_dir, "lazr.restfulclient", "0.14.6",
              {"lazr/restfulclient/__init__.py": ""}, installer="pip")
    r = g.imports("lazr", "lazr.uri", "lazr.restfulclient")
    assert r.warned_about() == ["lazr.restfulclient"]
    (msg,) = r.warnings()
    assert "lazr.restfulclient 0.14.6" in msg and "lazr.restfulclient 0.14.5" in msg
    assert r.imported("lazr.restfulclient")[0] == str(
        g.local_dir / "lazr" / "restfulclient" / "__init__.py")
    report = g.check()
    modules = {m["module"]: m for m in report["shadowing"]["modules"]}
    assert list(modules) == ["lazr.restfulclient"]
    assert modules["lazr.restfulclient"]["shadowed"][0]["version"] == "0.14.5"


def test_regular_package_over_a_distro_namespace(guarded):
    """A local regular ``lazr/__init__.py`` hides the distro's namespace portion
    (a warning at import; check: hidden-namespace); one that extends its ``__path__`` (pkgutil
    style) does not, but its duplicated real module is still reported."""
    g = guarded()
    debian_like(g, local=False)
    make_dist(g.local_dir, "lazr.core", "1.0", {"lazr/__init__.py": ""}, installer="pip")
    r = g.imports("lazr.uri")
    assert r.warned_about() == ["lazr"], r.warnings()  # warned before the import fails
    assert "hides the distro's namespace package" in r.warnings()[0]
    assert r.imported("lazr.uri")[1].startswith("ModuleNotFoundError")
    report = g.check()
    (hidden,) = report["shadowing"]["hidden_namespaces"]
    assert hidden["module"] == "lazr" and hidden["hidden"][0]["path"] == str(g.distro_dir / "lazr")
    assert "hidden-namespace" in [f["kind"] for f in report["findings"]]
    (g.local_dir / "lazr" / "__init__.py").write_text(
        "__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n")
    make_dist(g.local_dir, "lazr.uri", "1.0.7", {"lazr/uri/__init__.py": ""}, installer="pip")
    r = g.imports("lazr.restfulclient", "lazr.uri")
    assert r.warned_about() == ["lazr.uri"] and r.imported("lazr.restfulclient")[1] == "ok"
    report = g.check()
    assert report["shadowing"]["hidden_namespaces"] == []
    assert [m["module"] for m in report["shadowing"]["modules"]] == ["lazr.uri"]


def test_no_warning_without_shadowing_and_nothing_heavy_imported(guarded):
    """Modules that shadow nothing: no warning, and the guard imports neither
    warnings, sysconfig nor threading for them."""
    g = guarded()
    debian_like(g, local=False)
    make_dist(g.local_dir, "requests", "2.31.0", pkg("requests", "2.31.0"), installer="pip")
    code = ("import sys, yaml, six, requests, lazr.uri; "
            "print(sorted(m for m in sys.modules if m.startswith('sitewarden') or m in "
            "('warnings', 'sysconfig', 'threading', 'importlib.metadata', 'email')))")
    proc = g.python("-c", code)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    # _watch built the index; shadowing looked at the candidates once; nothing else.
    assert proc.stdout.split() == ["['sitewarden',", "'sitewarden._watch',",
                                   "'sitewarden.detect',", "'sitewarden.detect.emit',",
                                   "'sitewarden.detect.shadowing',", "'sitewarden.detect.specs',",
                                   "'sitewarden.pathfacts']"]


def test_warning_points_at_the_importing_line_and_filters_work(guarded, tmp_path):
    g = guarded()
    debian_like(g)
    script = tmp_path / "app" / "main.py"
    script.parent.mkdir()
    script.write_text("import os\n\nimport six  # line 3\n")
    proc = g.python(str(script))
    assert proc.returncode == 0, proc.stderr
    assert [(f, n, c) for f, n, c, _ in g.stderr_warnings(proc)] == [
        (str(script), 3, "ShadowWarning")]
    # -W / PYTHONWARNINGS naming sitewarden's categories: CPython rejects them at
    # startup (site-packages is not on sys.path yet, "Invalid -W option ignored"),
    # the guard applies them on its first warning.
    for env, flags in (({}, ["-W", "ignore::sitewarden.ShadowWarning"]),
                       ({"PYTHONWARNINGS": "ignore::sitewarden.SitewardenWarning"}, []),
                       ({}, ["-W", "ignore::UserWarning"]),
                       ({}, ["-W", "ignore:'six' is imported"])):
        proc = g.python(*flags, str(script), env=env)
        assert proc.returncode == 0 and g.stderr_warnings(proc) == [], (env, flags, proc.stderr)
    # An "error" filter cannot fail the import (the guard fails open): shown instead.
    proc = g.python("-W", "error::sitewarden.ShadowWarning", str(script))
    assert proc.returncode == 0 and len(g.stderr_warnings(proc)) == 1, proc.stderr
    for env in ({"SITEWARDEN_SILENCE": "shadow"}, {"SITEWARDEN_SILENCE": "all"},
                {"SITEWARDEN_DISABLE": "1"}):
        proc = g.python(str(script), env=env)
        assert proc.returncode == 0 and proc.stderr == "", (env, proc.stderr)
    # SITEWARDEN_SILENCE=path leaves shadow warnings on.
    proc = g.python(str(script), env={"SITEWARDEN_SILENCE": "path"})
    assert len(g.stderr_warnings(proc)) == 1


def test_racing_threads_warn_once_and_never_deadlock(guarded):
    """32 threads (two per module) race to import 16 shadowed modules that import
    more shadowed modules (issue #6: 32 threads; every interpreter in test_reliability)."""
    g = guarded()
    debian_like(g)
    names = ["mod%d" % i for i in range(16)]
    for name in names:
        make_dist(g.distro_dir, name, "1.0", {name + ".py": "import time; time.sleep(0.01)\n"})
        make_dist(g.local_dir, name, "2.0", {name + ".py": "import six, yaml\n"}, installer="pip")
    code = textwrap.dedent("""
        import sys, threading, warnings
        seen = []
        warnings.showwarning = lambda m, c, *a, **k: seen.append(str(m).split("'")[1])
        names = sys.argv[1:]
        barrier = threading.Barrier(len(names) * 2)
        def work(name):
            barrier.wait()
            __import__(name)
            __import__("pyparsing")
        threads = [threading.Thread(target=work, args=(n,)) for n in names * 2]
        [t.start() for t in threads]
        [t.join(30) for t in threads]
        assert not any(t.is_alive() for t in threads), "deadlock"
        print(" ".join(sorted(seen)))
    """)
    proc = g.python("-c", code, *names)
    assert proc.returncode == 0, proc.stderr
    seen = proc.stdout.split()
    assert sorted(seen) == sorted(names + ["pyparsing", "six", "yaml"])


# ---------------------------------------------------------------- scenarios


def test_scenario_1_violated_requirement_is_named(guarded):
    """Local urllib3 2.x shadows the distro's 1.25; distro requests requires <1.26."""
    g = guarded()
    make_dist(g.distro_dir, "urllib3", "1.25.8", pkg("urllib3", "1.25.8"))
    make_dist(g.distro_dir, "requests", "2.22.0", pkg("requests", "2.22.0"),
              requires=["urllib3!=1.25.0,!=1.25.1,<1.26,>=1.21.1", "idna<2.9,>=2.5"])
    make_dist(g.local_dir, "urllib3", "2.0.7", pkg("urllib3", "2.0.7"), installer="pip")
    (msg,) = g.imports("urllib3").warnings()
    assert "urllib3 2.0.7" in msg and "urllib3 1.25.8" in msg
    assert "requests 2.22.0 requires 'urllib3!=1.25.0,!=1.25.1,<1.26,>=1.21.1'" in msg
    report = g.check()
    (case,) = report["shadowing"]["modules"]
    assert case["severity"] == "high" and case["comparison"] == "newer"
    (v,) = report["shadowing"]["violations"]
    assert (v["consumer"], v["requires"], v["installed"], v["status"]) == (
        "requests", "urllib3", "2.0.7", "violated")
    assert sorted(v["seen_by"]) == ["import", "metadata"]


def test_scenario_2_only_applicable_requirements_count(guarded):
    g = guarded()
    make_dist(g.distro_dir, "urllib3", "1.25.8", pkg("urllib3", "1.25.8"))
    make_dist(g.distro_dir, "requests", "2.22.0", pkg("requests", "2.22.0"), requires=[
        'urllib3<1.0; python_version == "3.4"', "urllib3<3", 'urllib3<2; extra == "old"'])
    make_dist(g.local_dir, "urllib3", "2.0.7", pkg("urllib3", "2.0.7"), installer="pip")
    (msg,) = g.imports("urllib3").warnings()
    assert "violates" not in msg and "still hold" in msg
    report = g.check()
    (case,) = report["shadowing"]["modules"]
    assert [r["requirement"] for r in case["requirements"]] == ["urllib3<3"]
    assert case["severity"] == "medium" and report["shadowing"]["violations"] == []


def test_scenario_3_shadowing_without_violation_still_warns(guarded):
    g = guarded()
    make_dist(g.distro_dir, "cryptography", "38.0.4", pkg("cryptography", "38.0.4"))
    make_dist(g.distro_dir, "pyOpenSSL", "23.0.0", pkg("OpenSSL", "23.0.0"), kind="egg-info",
              requires=["cryptography<40,>=38.0.0", "", "[docs]", "sphinx!=5.2.0"])
    make_dist(g.local_dir, "cryptography", "39.0.2", pkg("cryptography", "39.0.2"), installer="pip")
    (msg,) = g.imports("cryptography", "OpenSSL").warnings()
    assert msg.startswith("'cryptography' is imported from")
    assert "the requirements of the distro packages that use it still hold" in msg


def test_scenario_4_extras_in_requirements(guarded):
    g = guarded()
    make_dist(g.distro_dir, "docker", "5.0.3", pkg("docker", "5.0.3"))
    make_dist(g.distro_dir, "docker-compose", "1.29.2", pkg("compose", "1.29.2"), kind="egg-info",
              requires=["docker[ssh]>=5", "PyYAML<6,>=3.10", "[socks]", "PySocks>=1.5.6"])
    make_dist(g.local_dir, "docker", "4.4.4", pkg("docker", "4.4.4"), installer="pip")
    (msg,) = g.imports("docker").warnings()
    assert "docker-compose 1.29.2 requires 'docker[ssh]>=5'" in msg
    report = g.check()
    (v,) = report["shadowing"]["violations"]
    assert v["requirement"] == "docker[ssh]>=5" and v["installed"] == "4.4.4"


def test_scenario_5_same_import_name_other_distribution(guarded):
    g = guarded()
    make_dist(g.distro_dir, "ubuntu-advantage-tools", "27.14.4", pkg("uaclient", "27"),
              kind="egg-info")
    make_dist(g.distro_dir, "update-notifier", "3.192", {"notifier/__init__.py": ""},
              kind="egg-info", requires=["ubuntu-advantage-tools>=27"])
    make_dist(g.local_dir, "opcua-client", "0.8.4", pkg("uaclient", "0.8.4"), installer="pip")
    (msg,) = g.imports("uaclient").warnings()
    assert "opcua-client 0.8.4" in msg and "ubuntu-advantage-tools 27.14.4" in msg
    assert "another project than the distro's ubuntu-advantage-tools" in msg
    assert "update-notifier 3.192 requires 'ubuntu-advantage-tools>=27'" in msg
    report = g.check()
    (case,) = report["shadowing"]["modules"]
    assert case["other_distribution"] and case["severity"] == "high"
    assert case["requirements"][0]["status"] == "other distribution"


def test_scenario_6_unparsable_versions_cannot_compare(guarded):
    g = guarded()
    make_dist(g.distro_dir, "distro-info", "1.1build1", pkg("distro_info", "1.1build1"))
    make_dist(g.distro_dir, "ubuntu-release-upgrader", "1:23.04", {"DistUpgrade/__init__.py": ""},
              requires=["distro-info>=1.0"])
    make_dist(g.local_dir, "distro-info", "0.23ubuntu1", pkg("distro_info", "x"), installer="pip")
    (msg,) = g.imports("distro_info").warnings()
    assert "distro-info 0.23ubuntu1" in msg and "distro-info 1.1build1" in msg
    assert "cannot be compared" in msg
    assert "cannot compare against ubuntu-release-upgrader's 'distro-info>=1.0'" in msg
    report = g.check()
    (case,) = report["shadowing"]["modules"]
    assert case["comparison"] == "cannot compare"
    assert case["requirements"][0]["status"] == "cannot compare"


def test_scenario_7_single_file_modules_and_eggs(guarded):
    """``six.py`` and an ``.egg`` directory listed by ``easy-install.pth`` (plus a
    zipped egg) shadow the distro's copies."""
    import zipfile

    g = guarded()
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    make_dist(g.distro_dir, "pyparsing", "2.4.7", pkg("pyparsing", "2.4.7"))
    make_dist(g.distro_dir, "packaging", "20.9", pkg("packaging", "20.9"), requires=["pyparsing<3"])
    make_dist(g.distro_dir, "zipped", "1.0", {"zipped.py": ""})
    egg = g.local_dir / ("pyparsing-3.0.4-py%d.%d.egg" % g.version[:2])
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: pyparsing\n"
                                               "Version: 3.0.4\n")
    (egg / "pyparsing.py").write_text("")
    zegg = g.local_dir / "zipped-2.0-py3.egg"
    with zipfile.ZipFile(zegg, "w") as zf:
        zf.writestr("zipped.py", "")
        zf.writestr("EGG-INFO/PKG-INFO", "Metadata-Version: 1.1\nName: zipped\nVersion: 2.0\n")
    (g.local_dir / "easy-install.pth").write_text("./%s\n./%s\n" % (egg.name, zegg.name))
    make_dist(g.local_dir, "six", "1.17.0", {"six.py": ""}, installer="pip")
    r = g.imports("six", "pyparsing", "zipped")
    assert sorted(r.warned_about()) == ["pyparsing", "six", "zipped"]
    (msg,) = [w for w in r.warnings() if w.startswith("'pyparsing'")]
    assert "pyparsing 3.0.4" in msg and str(egg / "pyparsing.py") in msg
    assert "packaging 20.9 requires 'pyparsing<3'" in msg
    pth = g.local_dir / "easy-install.pth"
    assert "a directory added to sys.path by %s" % pth in msg
    assert "consider removing the line that adds %s from %s" % (egg, pth) in msg
    (msg,) = [w for w in r.warnings() if w.startswith("'zipped'")]
    assert "zipped 2.0" in msg
    report = g.check()
    classes = {e["path"]: e for e in report["layout"]["entries"]}
    assert classes[str(egg)]["class"] == "pth"
    assert classes[str(egg)]["source"] == str(g.local_dir / "easy-install.pth")
    assert sorted(m["module"] for m in report["shadowing"]["modules"]) == [
        "pyparsing", "six", "zipped"]


def test_scenario_8_pip_in_the_user_site(guarded):
    g = guarded()
    make_dist(g.distro_dir, "pip", "23.0.1", pkg("pip", "23.0.1"))
    make_dist(g.user_site, "pip", "24.0", pkg("pip", "24.0"), installer="pip")
    r = g.imports("pip")
    (msg,) = r.warnings()
    assert "pip 24.0, the user site" in msg and "pip 23.0.1" in msg
    assert r.imported("pip")[0] == str(g.user_site / "pip" / "__init__.py")
    # -s: no user site, nothing shadows.
    assert g.imports("pip", flags=["-s"]).warnings() == []


def test_pythonpath_copy_is_reported_the_same_way(guarded, tmp_path):
    g = guarded()
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    extra = tmp_path / "extra"
    (extra).mkdir()
    (extra / "six.py").write_text("")
    (msg,) = g.imports("six", env={"PYTHONPATH": str(extra)}).warnings()
    assert "no distribution metadata, a PYTHONPATH entry" in msg
    assert "consider removing %s from PYTHONPATH" % extra in msg


def pyenv_minor(minor):
    """pyenv's CPython 3.<minor>, or skip."""
    for interp in pyenv_interpreters():
        if interp.version[:2] == (3, minor):
            return interp
    pytest.skip("no CPython 3.%d found" % minor)


@pytest.mark.parametrize("minor", [8, 9])
def test_scenario_10_name_normalisation_on_old_pythons(guarded, minor):
    g = guarded(pyenv_minor(minor))
    make_dist(g.distro_dir, "PyYAML", "5.3.1", {"yaml/__init__.py": ""})
    make_dist(g.distro_dir, "ruamel.yaml", "0.17.21", {"ruamel/yaml/__init__.py": ""})
    make_dist(g.distro_dir, "consumer", "1.0", {"consumer.py": ""},
              requires=["pyyaml<6", "ruamel_yaml<0.18"])
    make_dist(g.local_dir, "pyyaml", "6.0.1", {"yaml/__init__.py": ""}, installer="pip")
    make_dist(g.local_dir, "ruamel_yaml", "0.18.5", {"ruamel/yaml/__init__.py": ""},
              installer="pip")
    r = g.imports("yaml", "ruamel.yaml")
    assert sorted(r.warned_about()) == ["ruamel.yaml", "yaml"]
    text = " ".join(r.warnings())
    assert "consumer 1.0 requires 'pyyaml<6'" in text
    assert "consumer 1.0 requires 'ruamel_yaml<0.18'" in text
    report = g.check()
    assert sorted(v["requirement"] for v in report["shadowing"]["violations"]) == [
        "pyyaml<6", "ruamel_yaml<0.18"]


def test_scenario_11_same_directory_twice_is_not_self_shadowing(guarded, tmp_path):
    g = guarded()
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    link = tmp_path / "dist-packages-link"
    link.symlink_to(g.distro_dir)
    env = {"PYTHONPATH": os.pathsep.join([str(link), str(g.distro_dir)])}
    assert g.imports("six", env=env).warnings() == []
    report = g.check(env=env)
    assert report["shadowing"]["modules"] == []
    kinds = sorted(f["kind"] for f in report["findings"] if f["severity"] != "info")
    assert kinds == ["distro-before-local", "symlinked-entry"]


def test_scenario_12_stale_metadata_is_attributed_by_module_location(guarded):
    g = guarded()
    make_dist(g.distro_dir, "foo", "2.0", {"foo.py": ""})
    make_dist(g.distro_dir, "bar", "1.0", {"bar.py": ""}, requires=["foo>=2"])
    stale = g.local_dir / "foo-1.0.dist-info"
    stale.mkdir()
    (stale / "METADATA").write_text("")  # empty: name and version from the directory name
    r = g.imports("foo")
    assert r.warnings() == [] and r.imported("foo")[0] == str(g.distro_dir / "foo.py")
    report = g.check()
    assert report["shadowing"]["modules"] == []
    (dist,) = report["shadowing"]["distributions"]
    assert dist["visible"]["version"] == "1.0" and not dist["modules_present"]
    assert dist["shadowed"][0]["version"] == "2.0"
    kinds = sorted(f["kind"] for f in report["findings"] if f["severity"] != "info")
    assert kinds == ["requirement-violated", "stale-metadata"]
    (v,) = report["shadowing"]["violations"]
    assert v["seen_by"] == ["metadata"] and v["installed"] == "1.0"
    # Two metadata in the local dir: the one whose RECORD lists the file owns it.
    make_dist(g.local_dir, "foo", "1.5", {"foo.py": ""}, installer="pip")
    (msg,) = g.imports("foo").warnings()
    assert "foo 1.5, the local install directory" in msg and "(foo 2.0)" in msg


def test_scenario_13_fedora_rpm_metadata_falls_back_to_the_name(guarded):
    g = guarded()
    make_dist(g.distro_dir, "python-dateutil", "2.8.2", {"dateutil/__init__.py": ""},
              installer="rpm", record=False)
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""}, installer="rpm", record=False)
    make_dist(g.local_dir, "python-dateutil", "2.9.0", {"dateutil/__init__.py": ""},
              installer="pip")
    make_dist(g.local_dir, "six", "1.17.0", {"six.py": ""}, installer="pip")
    r = g.imports("dateutil", "six")
    text = " ".join(r.warnings())
    assert "(python-dateutil 2.8.2)" in text and "(six 1.16.0)" in text
    report = g.check()
    shadowed = {m["module"]: m["shadowed"][0]["distribution"]
                for m in report["shadowing"]["modules"]}
    assert shadowed == {"dateutil": "python-dateutil", "six": "six"}


def test_scenario_14_script_directory_and_cwd(guarded, tmp_path):
    g = guarded()
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    app = tmp_path / "app"
    app.mkdir()
    src = tmp_path / "six.py"
    src.write_text("")
    proc = g.python("-c", "import py_compile, sys; py_compile.compile(sys.argv[1], "
                    "cfile=sys.argv[2], doraise=True)", str(src), str(app / "six.pyc"))
    assert proc.returncode == 0, proc.stderr
    (app / "tool.py").write_text("import six\nprint(six.__file__)\n")
    proc = g.python(str(app / "tool.py"))
    assert proc.returncode == 0 and proc.stdout.strip() == str(app / "six.pyc"), proc.stderr
    ((_, line, category, msg),) = g.stderr_warnings(proc)
    assert category == "ShadowWarning" and line == 1
    assert "%s (no distribution metadata, the script's directory)" % (app / "six.pyc") in msg
    # The current directory under -c, and nothing under -P (3.11+).
    r = g.imports("six", cwd=str(app))
    assert "the current directory" in r.warnings()[0]
    if g.version[:2] >= (3, 11):
        assert g.imports("six", cwd=str(app), flags=["-P"]).warnings() == []
        assert g.imports("six", cwd=str(app), env={"PYTHONSAFEPATH": "1"}).warnings() == []
    assert g.imports("six", cwd=str(app), flags=["-I"]).warnings() == []


# ---------------------------------------------------------------- venvs


def test_venv_own_copies_are_info_only(guarded, tmp_path):
    g = guarded()
    debian_like(g, local=False)
    venv = tmp_path / "venv"
    subprocess.run([g.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True, env=g.env(), capture_output=True)
    site = next(venv.glob("lib/python*/site-packages"))
    make_dist(site, "six", "1.17.0", {"six.py": ""}, installer="pip")
    vpython = venv / "bin" / "python"
    # The guard of the base is loaded (system site packages); the venv's own six is fine.
    proc = subprocess.run([str(vpython), "-c", "import six, sys; print(six.__file__); "
                           "print(any(getattr(f, '__name__', 0) == 'sitewarden' "
                           "for f in sys.meta_path))"],
                          capture_output=True, text=True, env=g.env(), cwd="/")
    assert proc.stdout.split() == [str(site / "six.py"), "True"], proc.stderr
    assert proc.stderr == ""
    # A user-site copy in that venv shadows the distro's copy: warned.
    make_dist(g.user_site, "pyparsing", "3.0.1", pkg("pyparsing", "3.0.1"), installer="pip")
    proc = subprocess.run([str(vpython), "-c", "import pyparsing"], capture_output=True,
                          text=True, env=g.env(), cwd="/")
    stderr = joined_warnings(proc.stderr)  # a long warning is wrapped
    assert "ShadowWarning: 'pyparsing'" in stderr and "httplib2 0.20.4" in stderr, stderr
    from sitewarden.cli import payload
    from sitewarden.probe import runner

    proc = subprocess.run([str(vpython), "-c", runner.BOOTSTRAP, payload.payload_dir(),
                           "check"], capture_output=True, text=True,
                          env=g.env({"SITEWARDEN_DISABLE": "1"}), cwd="/")
    report = json.loads(proc.stdout)
    classes = [e["class"] for e in report["layout"]["entries"]]
    assert classes == ["script", "stdlib", "stdlib", "stdlib", "local", "user", "system",
                       "distro"]
    severities = {m["module"]: m["severity"] for m in report["shadowing"]["modules"]}
    assert severities == {"six": "info", "pyparsing": "high"}


# ---------------------------------------------------------------- check through the CLI


def test_check_cli_lists_modules_violations_and_exit_status(guarded, tmp_path):
    g = guarded()
    debian_like(g)
    status, report, text = g.cli_check(verbose=True)  # each copy, though a finding says it
    assert status == 1
    modules = {m["module"]: m for m in report["shadowing"]["modules"]}
    assert sorted(modules) == ["_yaml", "fastmod", "pyparsing", "six", "yaml"]
    assert modules["pyparsing"]["winner"]["version"] == "3.0.1"
    assert modules["pyparsing"]["shadowed"][0]["version"] == "3.0.9"
    assert modules["six"]["winner"]["path"] == str(g.local_dir / "six.py")
    (v,) = report["shadowing"]["violations"]
    assert (v["consumer"], v["consumer_class"], v["requires"]) == ("httplib2", "distro",
                                                                 "pyparsing")
    # One cause, one finding: the requirement pyparsing's copy breaks is inside its
    # finding, with the fix.
    kinds = {f["kind"] for f in report["findings"]}
    assert "shadowed-module" in kinds and "requirement-violated" not in kinds, kinds
    (broken,) = [f for f in report["findings"] if f.get("module") == "pyparsing"]
    assert [b["consumer"] for b in broken["breaks"]] == ["httplib2"], broken
    assert broken["command"].startswith("sitewarden quarantine "), broken
    assert "Shadowed modules (5)" in text and "imported: %s" % (g.local_dir / "six.py") in text
    assert "sys.path" in text and "distro" in text
    # Clean once the local copies are gone.
    for name in ("pyparsing", "yaml", "_yaml"):
        shutil.rmtree(g.local_dir / name)
    for name in ("six.py", "fastmod.so"):
        (g.local_dir / name).unlink()
    for meta in g.local_dir.glob("*.dist-info"):
        shutil.rmtree(meta)
    status, report, _ = g.cli_check()
    assert report["shadowing"]["modules"] == [] and status == 0, report["findings"]


PROBE_MODULES = """
import atexit, sys
def _report_modules():  # the probe ends with the exit handlers (no teardown)
    import json
    sys.stderr.write("\\nMODULES " + json.dumps({
        "imported": {m: getattr(sys.modules[m], "__cached__", None) for m in sys.modules
                     if m.startswith("sitewarden.")},
        "bundled": [m for m in sys.modules if m.startswith("sitewarden.") and
                    type(sys.modules[m].__spec__.loader).__name__ == "_Bundle"],
        "preloaded": ["sitewarden." + n
                      for n in sys.modules["sitewarden.probe.runner"]._RUNTIME["full"]]}))
atexit.register(_report_modules)
"""


@pytest.mark.parametrize("interp", spread(targets="hermetic"))
def test_probe_caches_the_bytecode_of_everything_a_check_imports(interp, guarded, tmp_path,
                                                                 monkeypatch):
    """Under PYTHONDONTWRITEBYTECODE, the first check with a fresh payload (the CLI's
    private cache) leaves the bytecode of every sitewarden module it imported there,
    the vendored packaging's too (imported only for a marker or a specifier): later
    checks compile nothing.  And the probe loads up front only modules a check uses."""
    from sitewarden.cli import payload
    from sitewarden.probe import runner

    g = guarded(interp)
    debian_like(g)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # after the deployment
    root = payload.payload_dir()
    assert root.startswith(str(tmp_path)) and not list(Path(root).rglob("*.pyc"))
    proc = g.run([g.executable, "-c", PROBE_MODULES + runner.BOOTSTRAP, root, "full"],
                 env={"SITEWARDEN_DISABLE": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr
    (violation,) = json.loads(proc.stdout)["check"]["shadowing"]["violations"]
    assert violation["consumer"] == "httplib2"  # a specifier under a marker: packaging
    seen = json.loads(proc.stderr.rpartition("\nMODULES ")[2])
    imported = seen["imported"]
    assert "sitewarden._vendor.packaging.markers" in imported
    not_cached = [m for m, cached in imported.items()
                  if not (cached and os.path.isfile(cached))]
    assert not_cached == []
    assert set(seen["preloaded"]) <= set(imported)
    # ... and valid: the next check loads every module from it, those it loads up front
    # from the one file of their code (probe._Bundle) that the first check kept.
    again = g.run([g.executable, "-c", PROBE_MODULES + runner.BOOTSTRAP, root, "full"],
                  env={"SITEWARDEN_DISABLE": "1", "PYTHONDONTWRITEBYTECODE": "1",
                       "PYTHONVERBOSE": "1"})
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["check"] == json.loads(proc.stdout)["check"]
    seen_again = json.loads(again.stderr.rpartition("\nMODULES ")[2])
    assert sorted(seen_again["imported"]) == sorted(imported)
    bundled = set(seen_again["bundled"])
    assert set(seen["preloaded"]) - bundled == {  # they read it (pathfacts: the one reader)
        "sitewarden.facts.private_cache", "sitewarden.pathfacts"}
    assert "sitewarden._vendor.packaging.markers" not in bundled
    loaded = "\n".join(line for line in again.stderr.splitlines()
                       if line.startswith("# code object from"))
    assert all(cached in loaded for m, cached in imported.items() if m not in bundled)
    assert not any(cached in loaded for m, cached in imported.items() if m in bundled)
    assert "stale" not in again.stderr


def test_metadata_never_raises_on_garbage(guarded):
    g = guarded()
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    make_dist(g.distro_dir, "weird", "1.0", {"weird.py": ""},
              requires=["six (>=", "six>=1;;python_version>", "six; extra == "])
    bad = g.distro_dir / "broken-1.0.dist-info"
    bad.mkdir()
    (bad / "METADATA").write_bytes(b"\xff\xfe\x00garbage\nName\nRequires-Dist: six<1\n")
    (bad / "RECORD").write_bytes(b'"unterminated,\x00\n')
    (g.distro_dir / "empty.egg-info").write_text("")
    make_dist(g.local_dir, "six", "1.17.0", {"six.py": ""}, installer="pip")
    (msg,) = g.imports("six").warnings()
    assert msg.startswith("'six'")
    report = g.check()
    assert [m["module"] for m in report["shadowing"]["modules"]] == ["six"]


def test_threads_module_not_imported_by_started_hooks(guarded):
    """gevent-style programs: no threading import by the guard before the
    program's own first import is done."""
    g = guarded()
    debian_like(g)
    proc = g.python("-c", "import sys; import json; print('threading' in sys.modules)")
    assert proc.stdout.strip() == "False", proc.stderr


@pytest.mark.parametrize("interp", spread(targets="hermetic"))
def test_warning_points_at_the_importing_line_or_at_sys(interp, guarded, tmp_path):
    """The warning names the program's line that imported the module, past the import
    machinery (importlib.import_module, runpy); ``python -m`` has no such line, so it
    says ``sys:1`` (``<sys>:0`` on 3.13) as CPython's own warnings do."""
    g = guarded(interp)
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""})
    make_dist(g.local_dir, "six", "1.17.0", {"six.py": ""}, installer="pip")
    script = tmp_path / "prog.py"
    script.write_text("import importlib\n\nimportlib.import_module('six')\n")
    proc = g.python(str(script))
    assert [(f, n) for f, n, _, _ in g.stderr_warnings(proc)] == [(str(script), 3)]
    proc = g.python("-m", "six")
    # What warnings itself says for a stack with no line to point at.
    bare = g.python("-c", "import warnings; warnings.warn('x', stacklevel=9)")
    filename, _, rest = bare.stderr.partition(": UserWarning: x")[0].rpartition(":")
    where = (filename, int(rest))
    assert [(f, n) for f, n, _, _ in g.stderr_warnings(proc)] == [where]
    proc = g.python("-W", "error::UserWarning", "-m", "six")  # shown, never raised
    assert proc.returncode == 0 and [(f, n) for f, n, _, _ in g.stderr_warnings(proc)] == [where]


def test_requirement_violated_message_reads_with_and_without_a_consumer_version():
    """A consumer without a version (metadata without one) is named without a gap."""
    from sitewarden.detect import shadowscan
    from sitewarden.facts.records import Violation

    base = {"consumer": "httplib2", "consumer_class": "distro", "requirement": "pyparsing<4",
            "requires": "pyparsing", "installed": "4.0", "seen_by": ["import"]}
    with_version = shadowscan._violation_finding(
        Violation.from_json(dict(base, consumer_version="0.22.0")))
    without = shadowscan._violation_finding(Violation.from_json(dict(base, consumer_version=None)))
    assert with_version.message == (
        "httplib2 0.22.0 (distro) requires 'pyparsing<4', but pyparsing is imported as 4.0")
    assert without.message == (
        "httplib2 (distro) requires 'pyparsing<4', but pyparsing is imported as 4.0")


LISTED_CHECK = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from sitewarden import pathfacts
from sitewarden.detect import specs
plain, archive, missing = sys.argv[2], sys.argv[3], sys.argv[4]
sys.path[1:1] = [plain, archive, missing, ""]
names = {"swr_mod", "swr_pkg", "swr_ns", "swr_ext", "swr_zipped", "swr_none", "swr_bare"}
suffixes = pathfacts.module_suffixes()
out = {}
for entry in (plain, archive, missing, ""):
    listed = specs.listed_among(entry, names, suffixes)
    found = sorted(n for n in names if specs.find_in(n, entry) is not None)
    out[entry] = {"listed": None if listed is None else sorted(listed), "found": found}
print(json.dumps(out))
"""


@pytest.mark.parametrize("python", [pytest.param(i.executable, id=i.id)
                                    for i in pyenv_interpreters()])
def test_listed_names_are_a_superset_of_what_find_spec_finds(python, tmp_path):
    """The shadowing scan skips ``find_spec`` for a name the entry's own listing (the one
    importlib's ``FileFinder`` keeps) does not hold: a module, a package, a namespace
    portion and an extension module are all listed; an entry that is not a directory
    (a zip) has no such listing and every name is looked up there; a directory that does
    not exist lists nothing, and ``''`` (the working directory) lists what it holds."""
    import zipfile

    plain = tmp_path / "plain"
    (plain / "swr_pkg").mkdir(parents=True)
    (plain / "swr_pkg" / "__init__.py").write_text("")
    (plain / "swr_ns").mkdir()
    (plain / "swr_mod.py").write_text("")
    (plain / "swr_bare").write_text("")  # no suffix: listed, not a module
    suffix = subprocess.run([python, "-c", "import _imp; print(_imp.extension_suffixes()[0])"],
                            capture_output=True, text=True, check=True).stdout.strip()
    (plain / ("swr_ext" + suffix)).write_bytes(b"")
    archive = tmp_path / "swr.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("swr_zipped.py", "")
    src = Path(__file__).resolve().parents[1] / "src"
    proc = subprocess.run([python, "-I", "-S", "-c", LISTED_CHECK, str(src), str(plain),
                           str(archive), str(tmp_path / "missing")], capture_output=True,
                          text=True, cwd=str(plain))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out[str(plain)]["found"] == ["swr_ext", "swr_mod", "swr_ns", "swr_pkg"]
    assert out[str(plain)]["listed"] == ["swr_bare", "swr_ext", "swr_mod", "swr_ns", "swr_pkg"]
    assert out[str(archive)] == {"listed": None, "found": ["swr_zipped"]}
    assert out[str(tmp_path / "missing")] == {"listed": [], "found": []}
    assert out[""] == out[str(plain)]


def test_scan_looks_up_only_names_two_entries_may_hold(tmp_path, monkeypatch):
    """A name only one ``sys.path`` entry lists can neither shadow nor hide anything: the
    scan asks ``find_spec`` only for names at least two entries may hold (a distro
    directory of hundreds of modules, none installed twice, costs no lookup)."""
    from sitewarden import pathfacts
    from sitewarden.detect import shadowscan
    from sitewarden.facts.records import PathEntry

    local, distro = tmp_path / "local", tmp_path / "distro"
    for d in (local, distro):
        d.mkdir()
    for name in ("only_distro_a", "only_distro_b", "twice"):
        (distro / (name + ".py")).write_text("")
    (local / "twice.py").write_text("")
    (local / "only_local.py").write_text("")
    entries = [PathEntry(0, str(local), str(local), "local", "site", True),
               PathEntry(1, str(tmp_path / "missing"), None, "pythonpath", "env", False),
               PathEntry(2, str(distro), str(distro), "distro", "site", True)]
    asked = []
    real_find_in = shadowscan.find_in
    monkeypatch.setattr(shadowscan, "find_in",
                        lambda name, entry: asked.append(name) or real_find_in(name, entry))
    scanner = shadowscan._Scanner(entries)
    scanner.suffixes = pathfacts.module_suffixes()
    scanner.run()
    assert sorted(set(asked)) == ["twice"]
    assert [case.module for case in scanner.cases] == ["twice"]
