"""Issue 12, "Warnings that are missing or wrong" and "Messages and status": what a new
user ran into within an hour, one scenario per class of hole.

Every scenario runs on each CPython 3.8-3.13 (hermetic Debian-shaped copies) and on
Debian's own ``/usr/bin/python3`` (in a private mount namespace), guard deployed with
the real CLI (``guarded_target``), with real programs: a script, ``-c``, pip run from
its wheel, a zipapp, a real ``pip install -e``, real setuptools wheels.  Distro
packages are Debian's own where the target has them, else written with ``make_dist``.
"""

from __future__ import annotations

import json
import re
import sys
import zipapp
from pathlib import Path

from harness import make_dist, pip_dir, unpacked, wheel
from harness.guarded import GuardedPython
from harness.spread import rotated

HTTPLIB2_REQ = 'pyparsing (!=3.0.0,!=3.0.1,!=3.0.2,!=3.0.3,<4,>=2.4.2) ; python_version > "3.0"'


warnings_of = GuardedPython.stderr_warnings


def about(proc, category="ShadowWarning"):
    """``{module name: message}`` of the warnings of ``category``."""
    return {w[3].split("'")[1]: w[3] for w in warnings_of(proc) if w[2] == category}


def exists(target, path) -> bool:
    proc = target.root("import os, sys; print(os.path.lexists(sys.argv[1]))", str(path))
    return proc.stdout.strip() == b"True"


def ensure_distro(target, name, version, modules, **kwargs) -> None:
    """The distro's ``name`` as the target has it (Debian's own), else written there."""
    first = Path(next(iter(modules))).parts[0]
    if not exists(target, target.distro_dir / first):
        target.copy_in(lambda stage: make_dist(stage, name, version, modules, **kwargs),
                       target.distro_dir)


def workdir(target, name) -> Path:
    d = target.tmp / name
    d.mkdir()
    d.chmod(0o755)
    return d


def check_json(target, env=None, cwd="/"):
    proc = target.cli("check", "--python", target.executable, "--json", env=env, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout)


# ------------------------------------------------ 1. the first import of a program


@rotated()
def test_first_import_of_a_program_is_checked_for_stdlib_shadowing(guarded_target):
    """``random.py`` beside a script whose first line is ``import random``, and
    ``-c "import json"`` in a directory holding ``json.py``: the watch starts inside
    that very import, and still catches it."""
    t = guarded_target
    app = workdir(t, "app")
    (app / "random.py").write_text("SHADOW = True\n")
    (app / "main.py").write_text("import random\nprint(random.SHADOW)\n")
    proc = t.python(str(app / "main.py"))
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr
    (warning,) = warnings_of(proc)
    assert warning[:3] == (str(app / "main.py"), 1, "PathWarning"), proc.stderr
    assert warning[3].startswith("'random' is imported from %s instead of the standard "
                                 "library's " % (app / "random.py"))
    assert "the script's directory (%s, sys.path[0])" % app in warning[3]

    here = workdir(t, "cwd")
    (here / "json.py").write_text("SHADOW = True\n")
    proc = t.run([t.executable, "-c", "import json; print(json.SHADOW)"], cwd=str(here))
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr
    (warning,) = warnings_of(proc)
    assert warning[2] == "PathWarning" and warning[3].startswith(
        "'json' is imported from %s" % (here / "json.py")), proc.stderr
    assert "the current directory ('' at sys.path[0])" in warning[3]


# ------------------------------------------------ 2. modules imported at startup


SETUPTOOLS_DISTRO, SETUPTOOLS_LOCAL = "66.1.1", "69.5.1"


@rotated()
def test_module_imported_at_startup_that_shadows_is_reported(guarded_target):
    """``pip install --break-system-packages -U setuptools`` puts a newer
    ``distutils-precedence.pth`` and ``_distutils_hack`` in the local directory: every
    start imports that copy, which shadows the distro's.  Reported once, at the first
    import after startup, naming the ``.pth`` file that imported it.  A module imported
    by a ``.pth`` import line of one's own is reported the same way."""
    t = guarded_target
    if not exists(t, t.distro_dir / "_distutils_hack"):  # Debian has its own (66.1.1)
        t.merge_into(unpacked(wheel("setuptools", SETUPTOOLS_DISTRO)), t.distro_dir)
    t.merge_into(unpacked(wheel("setuptools", SETUPTOOLS_LOCAL)), t.local_dir)
    proc = t.python("-c", "import textwrap")
    assert proc.returncode == 0, proc.stderr
    shown = about(proc)
    assert list(shown) == ["_distutils_hack"], proc.stderr
    msg = shown["_distutils_hack"]
    assert msg.startswith("'_distutils_hack' was imported at startup by %s" % (
        t.local_dir / "distutils-precedence.pth")), msg
    assert "(setuptools %s, the local install directory)" % SETUPTOOLS_LOCAL in msg, msg
    assert re.search(r"%s \(setuptools \d" % re.escape(str(t.distro_dir / "_distutils_hack")),
                     msg), msg  # Debian's own version, or the stand-in's
    # The warning points at the .pth line that imported it.
    ((filename, lineno, _, _),) = warnings_of(proc)
    assert (filename, lineno) == (str(t.local_dir / "distutils-precedence.pth"), 1)
    # Nothing is reported without an import after startup, nor twice.
    assert warnings_of(t.python("-c", "pass")) == []
    proc = t.python("-c", "import textwrap, colorsys, _distutils_hack")
    assert len(warnings_of(proc)) == 1, proc.stderr

    # One's own .pth import line (as a usercustomize or a tool's .pth would).
    t.add_shadowed(["swr_boot"])
    t.put(t.local_dir / "swr-boot.pth", data=b"import swr_boot\n")
    proc = t.python("-c", "import textwrap")
    shown = about(proc)
    assert sorted(shown) == ["_distutils_hack", "swr_boot"], proc.stderr
    assert shown["swr_boot"].startswith("'swr_boot' was imported at startup by %s" % (
        t.local_dir / "swr-boot.pth"))


# ------------------------------------------------ 3. a regular package over a namespace


@rotated()
def test_regular_package_hiding_a_distro_namespace_package(guarded_target):
    """A local ``lazr/__init__.py`` hides the distro's namespace package ``lazr``:
    ``import lazr.uri`` fails.  The warning comes first, naming what became
    unimportable; ``check`` counts it among the shadowed modules."""
    t = guarded_target
    ensure_distro(t, "lazr.uri", "1.0.6", {"lazr/uri/__init__.py": ""}, kind="egg-info")
    t.copy_in(lambda stage: make_dist(stage, "lazr.core", "1.0", {"lazr/__init__.py": ""},
                                      installer="pip"), t.local_dir)
    proc = t.python("-c", "import lazr.uri")
    assert proc.returncode == 1 and "ModuleNotFoundError" in proc.stderr, proc.stderr
    shown = about(proc)
    assert list(shown) == ["lazr"], proc.stderr
    msg = shown["lazr"]
    assert msg.startswith("'lazr' is imported from %s (lazr.core 1.0, the local install "
                          "directory), a regular package that hides the distro's namespace "
                          "package %s" % (t.local_dir / "lazr", t.distro_dir / "lazr")), msg
    assert "'lazr.uri'" in msg and "cannot be imported" in msg
    assert "consider removing it (sitewarden quarantine " in msg and "lazr.core" in msg
    assert proc.stderr.index("ShadowWarning") < proc.stderr.index("Traceback")

    report = check_json(t)
    (hidden,) = report["shadowing"]["hidden_namespaces"]
    assert hidden["module"] == "lazr"
    text = t.cli("check", "--python", t.executable).stdout
    assert "Shadowed modules (1)" in text and "lazr" in text, text


# ------------------------------------------------ 4. editable installs


PROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"
[project]
name = "{name}"
version = "{version}"
[tool.setuptools]
{body}
"""


def editable_install(t, *projects: Path):
    """A real ``pip install -e`` (PEP 660) of ``projects`` into the local directory,
    with the override: the distro's pip, setuptools and wheel where it has them
    (Debian's), else pip 24.0, setuptools 69.5.1 and wheel 0.43.0 from their wheels."""
    argv = ["-m", "pip", "install", "--no-index", "--no-deps", "--no-build-isolation",
            "--break-system-packages", "--disable-pip-version-check", "-q"]
    for p in projects:
        argv += ["-e", str(p)]
    env = {"PIP_NO_CACHE_DIR": "1"}
    if not all(exists(t, t.distro_dir / name) for name in ("pip", "setuptools", "wheel")):
        env["PYTHONPATH"] = ":".join(str(p) for p in (
            pip_dir("24.0"), unpacked(wheel("setuptools", SETUPTOOLS_LOCAL)),
            unpacked(wheel("wheel", "0.43.0"))))
    proc = t.python(*argv, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@rotated()
def test_editable_install_has_metadata_blame_and_comparison(guarded_target):
    """``pip install -e`` of a src-layout project named like a distro package: the
    warning names its distribution and version (from the ``.dist-info`` in the
    local directory) and the ``__editable__`` ``.pth`` file; ``check`` names the
    editable copy as the imported one and compares the versions."""
    t = guarded_target
    ensure_distro(t, "six", "1.16.0", {"six.py": "version = '1.16.0'\n"}, kind="egg-info")
    proj = workdir(t, "six-src")
    (proj / "src").mkdir()
    (proj / "src" / "six.py").write_text("version = 'editable'\n")
    (proj / "pyproject.toml").write_text(PROJECT.format(
        name="six", version="1.17.0.dev0",
        body='py-modules = ["six"]\npackage-dir = {"" = "src"}'))
    editable_install(t, proj)
    pth = t.local_dir / "__editable__.six-1.17.0.dev0.pth"
    assert exists(t, pth)

    proc = t.python("-c", "import six; print(six.version)")
    assert proc.returncode == 0 and proc.stdout.strip() == "editable", proc.stderr
    msg = about(proc)["six"]
    assert "no distribution metadata" not in msg, msg
    assert msg.startswith("'six' is imported from %s (six 1.17.0.dev0, an editable install "
                          "whose %s adds %s to sys.path)" % (proj / "src" / "six.py", pth,
                                                             proj / "src")), msg
    # the distro's version: Debian's own six where the target has it, else 1.16.0
    assert re.search(r"shadows the distro's copy \S+six\.py \(six \d+(\.\d+)+\)", msg), msg
    assert "consider removing it (sitewarden quarantine " in msg, msg

    report = check_json(t)
    (case,) = [m for m in report["shadowing"]["modules"] if m["module"] == "six"]
    assert case["winner"]["path"] == str(proj / "src" / "six.py")
    assert (case["winner"]["distribution"], case["winner"]["version"]) == (
        "six", "1.17.0.dev0")
    from packaging.version import Version

    distro = Version(case["shadowed"][0]["version"])  # Debian's own six where there is one
    assert case["comparison"] == ("newer" if Version("1.17.0.dev0") > distro else "older")
    # Its metadata is not "stale": its module is where its .pth says.
    assert [d["name"] for d in report["shadowing"]["distributions"]
            if not d["modules_present"]] == []
    text = t.cli("check", "--python", t.executable).stdout
    assert "cannot compare" not in text and "six 1.17.0.dev0" in text, text


@rotated()
def test_editable_finder_hidden_by_the_distro_copy_is_named_right(guarded_target):
    """A flat-layout editable install gets setuptools' finder, which comes after the
    path finder: the distro's copy is imported, nothing shadows it, no warning; ``check``
    says the editable install is the one that is not imported, not that its metadata
    is stale."""
    t = guarded_target
    ensure_distro(t, "swr-flat", "1.0", {"swr_flat/__init__.py": "WHO = 'distro'\n"})
    proj = workdir(t, "flat")
    (proj / "swr_flat").mkdir()
    (proj / "swr_flat" / "__init__.py").write_text("WHO = 'editable'\n")
    (proj / "pyproject.toml").write_text(PROJECT.format(
        name="swr-flat", version="2.0", body='packages = ["swr_flat"]'))
    editable_install(t, proj)
    proc = t.python("-c", "import swr_flat; print(swr_flat.WHO)")
    assert proc.returncode == 0 and proc.stdout.strip() == "distro", proc.stderr
    assert warnings_of(proc) == []
    report = check_json(t)
    (finding,) = [f for f in report["findings"] if f.get("distribution") == "swr-flat"]
    assert "editable" in finding["message"] and str(t.distro_dir / "swr_flat") in \
        finding["message"], finding


# ------------------------------------------------ 5. zips and wheels on sys.path


def distro_pip(t):
    """The distro's pip (Debian's own, else a stand-in)."""
    ensure_distro(t, "pip", "23.0.1", {"pip/__init__.py": "__version__ = '23.0.1'\n"})


@rotated()
def test_a_programs_own_bundle_is_not_a_shadow(guarded_target):
    """pip run from its wheel (``python pip.whl/pip``), get-pip's way (``pip.zip`` put
    first on ``sys.path`` by the program) and a zipapp bundling ``six``: the copies in
    the program's own archive are not shadows a user can act on: no warning."""
    t = guarded_target
    distro_pip(t)
    ensure_distro(t, "six", "1.16.0", {"six.py": "version = '1.16.0'\n"}, kind="egg-info")
    d = workdir(t, "bundles")
    whl = d / "pip.whl"
    whl.write_bytes(wheel("pip", "24.0").read_bytes())
    proc = t.python(str(whl / "pip"), "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("pip 24.0 from %s" % whl), \
        proc.stdout + proc.stderr
    assert warnings_of(proc) == [], proc.stderr

    (d / "get_pip_like.py").write_text(
        "import os, shutil, sys, tempfile\n"
        "tmp = tempfile.mkdtemp()\n"
        "zip_path = os.path.join(tmp, 'pip.zip')\n"
        "shutil.copy(sys.argv[1], zip_path)\n"
        "sys.path.insert(0, zip_path)\n"
        "import pip\n"
        "print(pip.__file__)\n"
        "shutil.rmtree(tmp)\n")
    proc = t.python(str(d / "get_pip_like.py"), str(whl))
    assert proc.returncode == 0 and "pip.zip" in proc.stdout, proc.stderr
    assert warnings_of(proc) == [], proc.stderr

    src = d / "app"
    src.mkdir()
    (src / "six.py").write_text("version = 'bundled'\n")
    (src / "__main__.py").write_text("import six\nprint(six.version)\n")
    zipapp.create_archive(src, d / "app.pyz")
    proc = t.python(str(d / "app.pyz"))
    assert proc.returncode == 0 and proc.stdout.strip() == "bundled", proc.stderr
    assert warnings_of(proc) == [], proc.stderr


@rotated()
def test_metadata_inside_a_wheel_on_pythonpath_is_read(guarded_target):
    """``PYTHONPATH=pyparsing-3.0.1-py3-none-any.whl``: the user put it there, so it is
    a shadow; its version comes from the ``.dist-info`` inside the wheel, and the
    distro's httplib2 requirement it violates is named (warning and ``check``)."""
    t = guarded_target
    ensure_distro(t, "pyparsing", "3.0.9", {"pyparsing/__init__.py": "__version__ = '3.0.9'\n"})
    ensure_distro(t, "httplib2", "0.20.4", {"httplib2/__init__.py": ""}, requires=[
        'pyparsing (<3,>=2.4.2) ; python_version < "3.0"', HTTPLIB2_REQ])
    d = workdir(t, "wheels")
    whl = d / "pyparsing-3.0.1-py3-none-any.whl"
    whl.write_bytes(wheel("pyparsing", "3.0.1").read_bytes())
    env = {"PYTHONPATH": whl.name}
    proc = t.run([t.executable, "-c", "import pyparsing; print(pyparsing.__version__)"],
                 env=env, cwd=str(d))
    # pyparsing 3.0.1 imports sre_constants, gone in 3.15: the warning comes first all the same
    assert (proc.returncode == 0 and proc.stdout.strip() == "3.0.1"
            or "No module named 'sre_constants'" in proc.stderr), proc.stderr
    msg = about(proc)["pyparsing"]
    assert "%s (pyparsing 3.0.1, a PYTHONPATH entry)" % (whl / "pyparsing") in msg, msg
    assert re.search(r"pyparsing 3\.0\.1 violates the requirements of distro packages: "
                     r"httplib2 \S+ requires 'pyparsing", msg), msg  # Debian's, or 0.20.4's
    assert "consider removing %s from PYTHONPATH" % whl in msg

    report = check_json(t, env=env, cwd=str(d))
    (case,) = [m for m in report["shadowing"]["modules"] if m["module"] == "pyparsing"]
    assert (case["winner"]["distribution"], case["winner"]["version"]) == ("pyparsing", "3.0.1")
    assert ("httplib2", "pyparsing") in {(v["consumer"], v["requires"])
                                         for v in report["shadowing"]["violations"]}


# ------------------------------------------------ 6. an empty PYTHONPATH entry


def test_empty_pythonpath_entry_is_pythonpath(guarded_target):
    """``PYTHONPATH=:/x`` (``export PYTHONPATH=$PYTHONPATH:/x``): the empty entry is the
    current directory, put there by PYTHONPATH, not by a ``.pth`` file."""
    t = guarded_target
    here = workdir(t, "here")
    (here / "random.py").write_text("SHADOW = True\n")
    app = workdir(t, "app")
    (app / "main.py").write_text("import colorsys\nimport random\n")
    env = {"PYTHONPATH": ":/nonexistent-x"}
    proc = t.run([t.executable, str(app / "main.py")], env=env, cwd=str(here))
    assert proc.returncode == 0, proc.stderr
    (warning,) = warnings_of(proc)
    assert "PYTHONPATH" in warning[3] and ".pth" not in warning[3], warning
    assert "the empty PYTHONPATH entry (the current directory, %s)" % here in warning[3], warning

    report = check_json(t, env=env, cwd=str(here))
    classes = {e["path"]: (e["class"], e["source"]) for e in report["layout"]["entries"]}
    assert classes[str(here)] == ("pythonpath", "PYTHONPATH"), classes
    messages = [f["message"] for f in report["findings"]]
    assert not [m for m in messages if ".pth" in m and str(here) in m], messages


# ------------------------------------------------ 7. messages and status


@rotated()
def test_status_and_check_say_the_environment_disables_the_guard(guarded_target):
    t = guarded_target
    for env in ({"SITEWARDEN_DISABLE": "1"}, {"SITEWARDEN_DISABLE": "yes"}):
        for command in ("status", "check"):
            proc = t.cli(command, "--python", t.executable, env=env)
            assert proc.returncode in (0, 1), proc.stderr
            assert "active at startup: yes" not in proc.stdout, proc.stdout
            assert "SITEWARDEN_DISABLE=%s in this environment: the guard is off" % (
                env["SITEWARDEN_DISABLE"]) in proc.stdout, proc.stdout
        data = json.loads(t.cli("status", "--python", t.executable, "--json", env=env).stdout)
        assert data["active"] and data["disabled_by"] == "SITEWARDEN_DISABLE"
    proc = t.cli("status", "--python", t.executable, env={"SITEWARDEN_DISABLE": "0"})
    assert "active at startup: yes" in proc.stdout, proc.stdout


@rotated()
def test_standard_filters_silence_warnings_without_invalid_option_noise(guarded_target):
    """``-W ignore:::sitewarden`` / ``PYTHONWARNINGS=ignore:::sitewarden`` silence every
    sitewarden warning and print nothing else; the category spelling still works (CPython
    prints its "Invalid -W option" line for it, as the README says)."""
    t = guarded_target
    t.add_shadowed(["swr_shadowed"])
    app = workdir(t, "app")
    script = app / "main.py"
    script.write_text("import colorsys\nimport swr_shadowed\n")
    (app / "random.py").write_text("")
    (app / "main2.py").write_text("import colorsys\nimport random\n")
    proc = t.python(str(script))
    assert [w[:3] for w in warnings_of(proc)] == [(str(script), 2, "ShadowWarning")]
    for flags, env in ((["-W", "ignore:::sitewarden"], {}),
                       ([], {"PYTHONWARNINGS": "ignore:::sitewarden"}),
                       ([], {"PYTHONWARNINGS": "default,ignore:::sitewarden"})):
        for s in (script, app / "main2.py"):
            proc = t.python(*flags, str(s), env=env)
            assert proc.returncode == 0 and proc.stderr == "", (flags, env, proc.stderr)
    for flags, env in ((["-W", "ignore::sitewarden.ShadowWarning"], {}),
                       ([], {"PYTHONWARNINGS": "ignore::sitewarden.SitewardenWarning"})):
        proc = t.python(*flags, str(script), env=env)
        assert proc.returncode == 0 and warnings_of(proc) == [], proc.stderr
        assert "Invalid -W option ignored" in proc.stderr
    # The module field names sitewarden; an "error" action still cannot fail an import.
    proc = t.python("-W", "error:::sitewarden", str(script))
    assert proc.returncode == 0 and len(warnings_of(proc)) == 1, proc.stderr
    # Other modules' filters do not catch it; a program's own filter on sitewarden does.
    proc = t.python("-W", "ignore:::__main__", str(script))
    assert len(warnings_of(proc)) == 1
    proc = t.python("-c", "import warnings; warnings.filterwarnings('ignore', module='sitewarden')"
                    "; import swr_shadowed")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@rotated()
def test_debug_says_which_setting_or_file_silenced_a_warning(guarded_target):
    """``SITEWARDEN_DEBUG=1`` explains a warning that did not come: the setting, or the
    silence file and its line, that silenced it; without it, nothing is printed."""
    t = guarded_target
    t.add_shadowed(["swr_shadowed"])
    debug = {"SITEWARDEN_DEBUG": "1"}
    proc = t.python("-c", "import swr_shadowed", env={**debug, "SITEWARDEN_SILENCE": "shadow"})
    assert "sitewarden: debug: shadow warnings are off in this process: silenced by " \
        "SITEWARDEN_SILENCE=shadow" in proc.stderr, proc.stderr
    proc = t.python("-c", "import swr_shadowed",
                    env={**debug, "SITEWARDEN_SILENCE": "shadow:swr_shadowed"})
    assert "silenced by shadow:swr_shadowed in SITEWARDEN_SILENCE" in proc.stderr, proc.stderr
    silence = "%s/sitewarden.silence" % t.local_dir
    t.put(silence, data=b"shadow:swr_shadowed\n")
    proc = t.python("-c", "import swr_shadowed", env=debug)
    assert "silenced by shadow:swr_shadowed in %s" % silence in proc.stderr, proc.stderr
    assert warnings_of(proc) == []
    proc = t.python("-c", "import swr_shadowed")
    assert proc.returncode == 0 and "debug" not in proc.stderr and warnings_of(proc) == []


@rotated("bare_target")
def test_uninstall_takes_the_options_install_took(bare_target):
    t = bare_target
    for hook in ("sitecustomize", "pth"):
        t.install("--hook", hook)
        proc = t.cli("uninstall", "--python", t.executable, "--hook", hook)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "removed sitewarden" in proc.stdout
    # A hook other than the deployed one: removed all the same, and said so.
    t.install("--hook", "pth")
    proc = t.cli("uninstall", "--python", t.executable, "--hook", "sitecustomize")
    assert proc.returncode == 0 and "removed sitewarden" in proc.stdout, proc.stderr
    assert "deployed with --hook pth" in proc.stdout


def test_status_and_check_without_python_name_the_interpreter(cli, tmp_path):
    """From a venv (pipx's, or this checkout's .venv) without ``--python``, the report is
    about that venv's python: say so, and how to look at the system's."""
    assert sys.prefix != sys.base_prefix, "the test suite runs in a virtual environment"
    for args in (["status"], ["check"], ["status", "--json"], ["check", "--json"]):
        proc = cli(*args, cwd=str(tmp_path))
        assert proc.returncode in (0, 1), proc.stderr
        out = proc.stderr if "--json" in args else proc.stdout
        assert "no --python given: this is %s" % sys.executable in out, out
        assert "the virtual environment sitewarden runs in" in out
        assert "--python /usr/bin/python3" in out, out
        if "--json" in args:
            json.loads(proc.stdout)
    proc = cli("status", "--python", sys.executable)
    assert "no --python given" not in proc.stdout + proc.stderr
