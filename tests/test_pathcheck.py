"""``sys.path`` order findings: runtime PathWarnings and the ``check`` report.

Real interpreters (hermetic Debian-shaped copies with the guard deployed),
real ``PYTHONPATH``, real ``.pth`` files, real current directories.
"""

from __future__ import annotations

import os

import pytest

from harness import make_dist
from harness.spread import spread

#: A module that shadows a standard library module and still works (the way
#: enum34 shadows enum): it runs the standard library's code in its own
#: namespace.  The probe of ``check`` can then still import json, re...
SHIM = """\
import os as _os, sys as _sys
from importlib.machinery import PathFinder as _PathFinder
_here = _os.path.dirname(_os.path.abspath(__file__))
_rest = [p for p in _sys.path if _os.path.abspath(p or _os.curdir) != _here]
_spec = _PathFinder.find_spec(__name__, _rest)
SHADOWED_BY_TEST = True
exec(_spec.loader.get_code(__name__), globals())
"""



def shim_dir(path, *names):
    path.mkdir(parents=True, exist_ok=True)
    for name in names:
        (path / (name + ".py")).write_text(SHIM)
    return path


@pytest.mark.parametrize("interp", spread(targets="hermetic"))
def test_runtime_path_warnings_on_every_python(interp, guarded, tmp_path):
    g = guarded(interp)
    pp = shim_dir(tmp_path / "pp", "enum")
    cwd = shim_dir(tmp_path / "cwd", "random")
    py2 = shim_dir(tmp_path / "py2" / "lib" / "python2.7" / "dist-packages", "enum")

    # PYTHONPATH with an enum.py: warned when enum is imported, from there.
    r = g.imports("colorsys", "enum", env={"PYTHONPATH": str(pp)})
    (msg,) = r.warnings("PathWarning")
    assert msg.startswith("'enum' is imported from %s instead of the standard library's " % (
        pp / "enum.py"))
    assert "the PYTHONPATH entry %s comes first on sys.path" % pp in msg
    assert "consider renaming '%s'" % (pp / "enum.py") in msg.lower()
    assert r.imported("enum")[0] == str(pp / "enum.py")
    assert r.warnings() == []

    # The file merely existing is not enough: no import of enum, no warning.
    assert g.imports("colorsys", env={"PYTHONPATH": str(pp)}).warnings("PathWarning") == []

    # random.py in the current directory under -c.
    r = g.imports("random", cwd=str(cwd))
    (msg,) = r.warnings("PathWarning")
    assert "the current directory ('' at sys.path[0])" in msg
    assert r.imported("random")[0] == str(cwd / "random.py")
    # No script entry under -I, nor -P / PYTHONSAFEPATH (3.11+).
    assert g.imports("random", cwd=str(cwd), flags=["-I"]).warnings("PathWarning") == []
    if g.version[:2] >= (3, 11):
        assert g.imports("random", cwd=str(cwd), flags=["-P"]).warnings("PathWarning") == []
        assert g.imports("random", cwd=str(cwd), env={"PYTHONSAFEPATH": "1"}).warnings(
            "PathWarning") == []

    # Another interpreter's directory on PYTHONPATH: warned at the first import,
    # and its enum when imported.
    r = g.imports("colorsys", "enum", env={"PYTHONPATH": str(py2)})
    foreign, shadow = r.warnings("PathWarning")
    assert foreign.startswith("sys.path entry %s (from PYTHONPATH) belongs to Python 2.7, "
                              "not to this Python %d.%d" % ((py2,) + g.version[:2]))
    # (showing the first warning imports linecache -> tokenize -> re -> enum itself)
    assert shadow.startswith(("'enum' is imported from %s" % (py2 / "enum.py"),
                              "'enum' was already imported from %s" % (py2 / "enum.py")))

    # Medium and low findings never warn at runtime; silencing works.
    env = {"PYTHONPATH": os.pathsep.join([str(g.distro_dir), "/nonexistent", str(g.distro_dir)])}
    assert g.imports("colorsys", env=env).warnings("PathWarning") == []
    env = {"PYTHONPATH": str(py2), "SITEWARDEN_SILENCE": "path"}
    assert g.imports("colorsys", "enum", env=env).warnings("PathWarning") == []


def test_check_lists_every_path_finding(guarded, tmp_path):
    g = guarded()
    pp = shim_dir(tmp_path / "pp", "enum")
    cwd = shim_dir(tmp_path / "cwd", "random")
    py2 = tmp_path / "py2" / "lib" / "python2.7" / "dist-packages"
    py2.mkdir(parents=True)
    env = {"PYTHONPATH": os.pathsep.join(
        [str(pp), str(py2), str(g.distro_dir), str(tmp_path / "missing")])}
    # site removes duplicates before it processes .pth files; an import line can add one.
    g.user_site.mkdir(parents=True)
    (g.user_site / "dup.pth").write_text("import sys; sys.path.append(%r)\n" % str(pp))
    # check runs no startup code: dup.pth's line is listed, "not applied"; what a start
    # makes of it (the duplicate) is what the same collectors find after a normal start.
    static = g.check(env=env, cwd=str(cwd))
    (dup,) = [f for f in static["startup"]["files"] if f["path"] == str(g.user_site / "dup.pth")]
    assert dup["lines"][0]["note"] == "changes sys.path when it runs: not applied by check", dup
    assert "duplicate-entry" not in [f["kind"] for f in static["findings"]]
    report = g.live_check(env=env, cwd=str(cwd))
    found = sorted((f["kind"], f["severity"], f.get("module") or f.get("entry") or f.get("file"))
                   for f in report["findings"] if f["severity"] != "info")
    assert found == [
        ("distro-before-local", "medium", str(g.distro_dir)),
        ("duplicate-entry", "low", str(pp)),
        ("foreign-entry", "high", str(py2)),
        ("missing-entry", "low", str(tmp_path / "missing")),
        ("stdlib-shadowed", "high", "enum"),
        ("stdlib-shadowed", "high", "random"),
        # dup.pth's import line is code nobody installed: the startup inventory says so.
        ("unowned-startup-code", "medium", str(g.user_site / "dup.pth")),
    ]
    assert report["path"]["findings"] == [
        f for f in report["findings"]
        if f["kind"] in {k for k, _, _ in found} and f["kind"] != "unowned-startup-code"]
    shadowed = {f["module"]: f for f in report["findings"] if f["kind"] == "stdlib-shadowed"}
    assert shadowed["enum"]["entry_class"] == "pythonpath"
    assert shadowed["random"]["entry_class"] == "script"
    assert shadowed["random"]["path"] == str(cwd / "random.py")
    classes = {e["path"]: e["class"] for e in report["layout"]["entries"]}
    assert classes[str(py2)] == "foreign" and classes[str(g.distro_dir)] == "distro"
    # The missing pythonXY.zip is normal.
    assert not any(f["kind"] == "missing-entry" and f["entry"].endswith(".zip")
                   for f in report["findings"])
    if g.version[:2] >= (3, 11):
        report = g.live_check(env=dict(env, PYTHONSAFEPATH="1"), cwd=str(cwd))
        assert "random" not in [f.get("module") for f in report["findings"]]


@pytest.mark.parametrize("interp", spread(targets="hermetic"))
def test_check_reports_broken_stdlib_shadows_instead_of_dying_of_them(interp, guarded,
                                                                      tmp_path):
    """An ``enum.py`` or ``json.py`` that breaks on import, in the directory ``check``
    runs in (``sys.path[0]`` of the probe) or on ``PYTHONPATH``: the probe imports what
    it needs of the standard library first, so the shadowing is reported, not fatal."""
    g = guarded(interp)
    broken = "raise ImportError('not the standard library')\n"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "enum.py").write_text(broken)
    (cwd / "json.py").write_text(broken)
    status, report, text = g.cli_check(cwd=str(cwd))
    assert status == 1
    shadowed = sorted((f["module"], f["entry_class"]) for f in report["findings"]
                      if f["kind"] == "stdlib-shadowed")
    assert shadowed == [("enum", "script"), ("json", "script")]
    assert "Consider renaming '%s'" % (cwd / "json.py") in text
    # PYTHONPATH reaches the probe too (the CLI's own process would die of it, as any
    # Python program does: `python3 -I -m sitewarden check` keeps it for the target).
    pp = tmp_path / "pp"
    pp.mkdir()
    (pp / "re.py").write_text(broken)
    report = g.check(env={"PYTHONPATH": str(pp)}, cwd=str(cwd))
    shadowed = sorted((f["module"], f["entry_class"]) for f in report["findings"]
                      if f["kind"] == "stdlib-shadowed")
    assert shadowed == [("enum", "script"), ("json", "script"), ("re", "pythonpath")]


def test_pth_import_line_inserting_ahead_of_the_stdlib(guarded, tmp_path):
    g = guarded()
    front = shim_dir(tmp_path / "front", "colorsys")
    extra = tmp_path / "extra"
    extra.mkdir()
    g.user_site.mkdir(parents=True)
    (g.user_site / "zz-front.pth").write_text("import sys; sys.path.insert(0, %r)\n" % str(front))
    (g.user_site / "extra.pth").write_text(str(extra) + "\n")
    r = g.imports("colorsys")
    (msg,) = r.warnings("PathWarning")
    # The .pth that can have put it there, and its owner; never "rename" a file startup
    # code put there: what put it there goes.
    assert "%s, put ahead of the standard library at startup by %s (no package's record " \
        "lists it)" % (front, g.user_site / "zz-front.pth") in msg, msg
    assert "renam" not in msg.replace("do not rename", ""), msg
    assert "`sitewarden check` names it" in msg and "SITEWARDEN_SILENCE=path" in msg, msg
    static = g.check()  # check runs no startup code: the line is "not applied"
    assert str(front) not in [e["path"] for e in static["layout"]["entries"]]
    (line,) = [f for f in static["startup"]["files"]
               if f["path"] == str(g.user_site / "zz-front.pth")][0]["lines"]
    assert line["note"] == "changes sys.path when it runs: not applied by check", line
    report = g.live_check()  # the same collectors after a normal start
    entries = {e["path"]: e for e in report["layout"]["entries"]}
    # index 1: the script entry ('') is put at sys.path[0] after site ran.
    assert entries[str(front)]["class"] == "pth" and entries[str(front)]["index"] == 1
    assert entries[str(extra)]["class"] == "pth"
    assert entries[str(extra)]["source"] == str(g.user_site / "extra.pth")
    assert entries[str(g.user_site)]["class"] == "user"
    found = sorted((f["kind"], f["severity"]) for f in report["findings"]
                   if f["severity"] != "info")
    # zz-front.pth's import line is also code nobody installed (startup inventory).
    assert found == [("inserted-ahead-of-stdlib", "medium"), ("stdlib-shadowed", "high"),
                     ("unowned-startup-code", "medium")]


def test_foreign_entry_added_by_a_pth_file_is_warned_after_startup(guarded, tmp_path):
    g = guarded()
    old = tmp_path / "venv39" / "lib" / "python3.9" / "site-packages"
    make_dist(old, "six", "1.16.0", {"six.py": ""})
    g.user_site.mkdir(parents=True)
    (g.user_site / "old.pth").write_text(str(old) + "\n")
    r = g.imports("colorsys")
    (msg,) = r.warnings("PathWarning")
    assert msg.startswith("sys.path entry %s belongs to Python 3.9" % old)
    assert "consider removing it from sys.path" in msg.lower()
