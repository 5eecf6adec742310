"""``check`` lists the code every start of the target runs, who installed it, and what fails.

The field report (issue 22): on Debian 12, a ``.pth`` failing at every start, a ``.pth``
naming a world-writable directory and an unowned ``.pth`` that ``exec``'s a payload, and
``sitewarden check`` said "clean".  One scenario per target (``guarded_target``: the
hermetic CPythons, Debian 12's python in a mount namespace, Debian 13, sid's 3.14 and
3.15), with every fixture built here, never fetched:

- ``swr-broken.pth``: ``import`` of a module that does not exist (``startup-line-fails``,
  high, with the error CPython prints at the same start), then a line that 3.8-3.14 never
  reach ("Remainder of file ignored") and 3.15 runs;
- ``swr-payload.pth``: an executable line no package installed (``unowned-startup-code``);
- a pip-installed distribution whose RECORD ships ``swr_dist_init.pth``
  (``distribution-startup-code``, info, with the distribution and version);
- ``swr-paths.pth``: path lines naming a world-writable directory (high: the target runs
  as root), a group-writable one (medium) and a missing one (``missing-pth-directory``);
- an editable install's finder (``__editable__.*.pth``, RECORD-owned, the finder setuptools
  69.5.1 generates, in a wheel setuptools built: a known template, listed, not flagged);
- Debian's own startup files (its ``sitecustomize``, setuptools' ``distutils-precedence.pth``
  where installed) and sitewarden's own ``sitewarden.pth``: listed with their owners, never
  flagged;
- on 3.15: a ``.start`` file turning off its ``.pth``'s import line, and an entry point
  naming a missing module (``startup-line-fails``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

import sitewarden
from harness.dists import make_dist
from harness.interpreters import pyenv_interpreters
from harness.startup_lines import KNOWN_CHECK
from harness.wheels import wheel

BROKEN = b"import swr_no_such_module_xyz\nimport sys; sys.swr_after = 1\n"
PAYLOAD = b"import sys; exec('sys.swr_payload_ran = 1')\n"
FINDER = "__editable___swr_edit_1_0_finder"
EDITABLE_LINE = "import %s; %s.install()\n" % (FINDER, FINDER)
SETUPTOOLS_WHEEL = ("Wheel-Version: 1.0\nGenerator: setuptools (69.5.1)\nRoot-Is-Purelib: false\n"
                    "Tag: py3-none-any\n")


def _setuptools_finder() -> str:
    """The finder setuptools 69.5.1 writes for an editable install of ``swr_edit``: its own
    ``_FINDER_TEMPLATE``, read from its wheel (a known template only as its generator
    writes it)."""
    with zipfile.ZipFile(wheel("setuptools", "69.5.1")) as z:
        tree = ast.parse(z.read("setuptools/command/editable_wheel.py").decode())
    template = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and getattr(n.targets[0], "id", None) == "_FINDER_TEMPLATE")
    return template.format(name=FINDER, mapping={"swr_edit": "/nonexistent/swr_edit"},
                           namespaces={})


def _fixtures(t) -> dict[str, str]:
    """Put every fixture into ``t`` (its default-scheme directory and its staging dir);
    ``{name: path}`` of the directories the path lines name."""
    local = t.local_dir
    world, group, missing = t.tmp / "swr-world", t.tmp / "swr-group", t.tmp / "swr-missing"
    t.put(world, "dir", mode=0o777)
    t.put(group, "dir", mode=0o775)
    t.chmod(world, 0o777)
    t.chmod(group, 0o775)
    t.put(local / "swr-broken.pth", data=BROKEN)
    t.put(local / "swr-payload.pth", data=PAYLOAD)
    t.put(local / "swr-paths.pth",
          data=("# shared checkouts\n%s\n%s\n%s\n" % (world, group, missing)).encode())

    def build(stage):
        make_dist(stage, "swr-dist", "1.2.3", {
            "swr_dist.py": "def hello():\n    pass\n",
            "swr_dist_init.pth": "import swr_dist; swr_dist.hello()\n"}, installer="pip")
        make_dist(stage, "swr-edit", "1.0", {
            "__editable___swr_edit_1_0_finder.py": _setuptools_finder(),
            "__editable__.swr_edit-1.0.pth": EDITABLE_LINE,
            "swr_edit-1.0.dist-info/WHEEL": SETUPTOOLS_WHEEL}, installer="pip")

    t.copy_in(build, local)
    if t.version >= (3, 15):
        t.put(local / "swr-started.pth", data=b"import swr_started_not_run\n")
        t.put(local / "swr-started.start", data=b"swr_entry_missing:main\n")
    return {"world": str(world), "group": str(group), "missing": str(missing)}


def _kinds(report, kind):
    """The findings of ``kind`` about the fixtures (``swr`` names): the machine running the
    tests may have startup files of its own (this one's sandbox has an unowned ``.pth``)."""
    return [f for f in report["findings"] if f["kind"] == kind
            and "swr" in str(f.get("file") or f.get("entry") or "")]


def _file(report, name):
    found = [f for f in report["startup"]["files"] if f["path"].endswith("/" + name)]
    assert len(found) == 1, (name, [f["path"] for f in report["startup"]["files"]])
    return found[0]


def test_check_lists_startup_code_owners_and_what_fails(guarded_target):
    t = guarded_target
    dirs = _fixtures(t)
    local = str(t.local_dir)
    start = t.python("-c", "pass")  # what CPython itself prints at every start
    status, report, text = t.cli_check()
    assert status == 1, text
    startup = report["startup"]
    assert startup["site"] is True and startup["pep829"] == (t.version >= (3, 15)), startup

    # 1. a line that fails at every start: high, with CPython's own error
    broken = [f for f in _kinds(report, "startup-line-fails")
              if f["file"] == local + "/swr-broken.pth"]
    assert len(broken) == 1 and broken[0]["severity"] == "high", report["findings"]
    error = "ModuleNotFoundError: No module named 'swr_no_such_module_xyz'"
    assert broken[0]["error"] == error and broken[0]["line"] == 1, broken
    assert error in start.stderr and local + "/swr-broken.pth" in start.stderr, start.stderr
    said = ("Error in import line from %s/swr-broken.pth" % local if t.version >= (3, 15)
            else "Error processing line 1 of %s/swr-broken.pth" % local)
    assert said in start.stderr and said in broken[0]["message"], (start.stderr, broken)
    # The file's block names its finding; its lines are --verbose's (each fact once).
    assert "swr-broken.pth [owned by nobody] (finding %s" % broken[0]["id"][:12] in text, text
    assert "fails at every start: " not in text, text
    verbose = t.cli("check", "--python", t.executable, "--verbose").stdout
    assert "fails at every start: " + error in verbose, verbose
    assert "    line 1: runs import swr_no_such_module_xyz\n" in verbose, verbose
    after = _file(report, "swr-broken.pth")["lines"][1]
    if t.version >= (3, 15):  # PEP 829: a failing line no longer abandons the file
        assert after["runs"] is True and after["error"] is None, after
    else:
        assert "Remainder of file ignored" in start.stderr, start.stderr
        assert after["runs"] is False and after["note"].startswith("not processed"), after

    # 2. an executable line nobody installed: medium
    unowned = _kinds(report, "unowned-startup-code")
    # (on 3.15, swr-broken.pth's second line runs: code nobody installed, too)
    expected = ["swr-broken.pth"] if t.version >= (3, 15) else []
    assert [f["file"] for f in unowned] == [local + "/" + n for n in expected
                                            + ["swr-payload.pth"]], unowned
    assert unowned[-1]["severity"] == "medium" and unowned[-1]["lines"] == [1], unowned
    assert _file(report, "swr-payload.pth")["owner"]["kind"] is None

    # 3. shipped by a pip-installed distribution, not a template: info, with its version
    dist = _kinds(report, "distribution-startup-code")
    assert [(f["file"], f["owner"]["distribution"], f["owner"]["version"], f["severity"])
            for f in dist] == [
        (local + "/swr_dist_init.pth", "swr-dist", "1.2.3", "info")], dist
    assert "swr-dist 1.2.3" in text, text
    # sitewarden's own hook: owner and template are one name, said once
    assert "pth %s/sitewarden.pth [sitewarden]" % local in text, text

    # 4. writable directories on sys.path (the interpreter runs as root), a missing one
    writable = {f["entry"]: f for f in _kinds(report, "writable-path-entry")}
    assert writable[dirs["world"]]["severity"] == "high", writable
    assert writable[dirs["world"]]["scope"] == "others", writable
    assert writable[dirs["group"]]["severity"] == "medium", writable
    assert writable[dirs["world"]]["source"] == local + "/swr-paths.pth", writable
    assert set(writable) == {dirs["world"], dirs["group"]}, writable
    missing = _kinds(report, "missing-pth-directory")
    assert [(f["directory"], f["severity"]) for f in missing] == [(dirs["missing"], "info")]
    paths = [x for x in _file(report, "swr-paths.pth")["lines"] if x["kind"] == "path"]
    assert [(x["directory"], x["exists"]) for x in paths] == [
        (dirs["world"], True), (dirs["group"], True), (dirs["missing"], False)], paths
    assert paths[0]["writers"]["how"] == "write" and paths[1]["writers"]["scope"] == "group"

    # 5. the editable finder and sitewarden's own hook: listed, owned, not flagged
    editable = _file(report, "__editable__.swr_edit-1.0.pth")
    assert editable["template"] == "editable install finder", editable
    assert editable["owner"]["distribution"] == "swr-edit", editable
    flagged = {f.get("file") for f in report["findings"]}
    assert editable["path"] not in flagged, report["findings"]
    if t.version < (3, 18):
        own = _file(report, "sitewarden.pth")
        assert own["owner"]["kind"] == "sitewarden" and own["template"] == "sitewarden", own
        assert own["path"] not in flagged and own["lines"][0]["error"] is None, own

    # 6. Debian's own files: listed with their Debian package, never flagged
    if t.interp.is_debian_system or t.release:
        sc = _file(report, "sitecustomize.py")
        assert sc["kind"] == "sitecustomize" and sc["owner"]["kind"] == "dpkg", sc
        assert sc["owner"]["package"].startswith("libpython3"), sc
        assert sc["realpath"].startswith("/etc/python3"), sc
        assert sc["path"] not in flagged and sc["realpath"] not in flagged
        hack = [f for f in startup["files"]
                if f["path"] == "/usr/lib/python3/dist-packages/distutils-precedence.pth"]
        for f in hack:  # where python3-setuptools is installed
            assert f["owner"] == dict(f["owner"], kind="dpkg", package="python3-setuptools")
            assert f["template"] == "setuptools distutils-precedence", f
            assert f["path"] not in flagged
        assert "[Debian package libpython3" in text, text

    # 7. 3.15: a .start file turns off its .pth's import lines; its entry point fails
    if t.version >= (3, 15):
        pth = _file(report, "swr-started.pth")
        assert pth["disabled_by"] == local + "/swr-started.start", pth
        assert pth["lines"][0]["runs"] is False, pth
        failed = [f for f in _kinds(report, "startup-line-fails")
                  if f["file"] == local + "/swr-started.start"]
        assert failed and failed[0]["error"] == (
            "ModuleNotFoundError: No module named 'swr_entry_missing'"), failed
        assert ("Error resolving entry point swr_entry_missing:main from %s/swr-started.start"
                % local) in start.stderr, start.stderr
        assert "swr_started_not_run" not in start.stderr, start.stderr
    json.dumps(report)  # the whole report stays JSON


# ------------------------------------------- judged without compile() where the line is known

@pytest.mark.parametrize("python", [pytest.param(i.executable, id=i.id)
                                    for i in pyenv_interpreters()])
def test_known_lines_are_judged_as_their_syntax_tree_says(python):
    """``line_checks.KNOWN_LINES`` (setuptools' ``distutils-precedence.pth`` line, which
    every stock Debian has: judged without a first ``compile()``) is what
    ``line_imports`` reads from the line on this interpreter; and judged so, a missing
    ``_distutils_hack`` (no site-packages here: ``-S``) still fails at every start."""
    src = Path(sitewarden.__file__).resolve().parent.parent
    proc = subprocess.run([python, "-I", "-S", "-c", KNOWN_CHECK, str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == (
        "ModuleNotFoundError: No module named '_distutils_hack'"), proc.stdout


# ------------------------------------------- verdicts kept from one check to the next

MEMO_CHECK = r"""
import builtins, json, sys
sys.path.insert(0, sys.argv[1])
from sitewarden.audit import line_checks as sc
lines = ["import swr_no_such_module_xyz", "import os; os.swr = 1", "import (",
         "import sys; exec('1')"]
memo = sc.LineMemo(sys.argv[2])
first = [sc.line_error(line, memo) for line in lines]
memo.save()
plain = [sc.line_error(line) for line in lines]
def refused(*args, **kwargs):
    raise AssertionError("compile() of a kept line")
builtins.compile = refused
again = sc.LineMemo(sys.argv[2])
second = [sc.line_error(line, again) for line in lines]
again.save()
print(json.dumps({"first": first, "second": second, "plain": plain}))
"""


@pytest.mark.parametrize("python", [pytest.param(i.executable, id=i.id)
                                    for i in pyenv_interpreters()])
def test_kept_verdicts_spare_the_next_check_its_compile(python, tmp_path):
    """A check keeps its verdicts on startup lines in its private cache: the next check
    on the same interpreter reads them (no ``compile()``: the process's first costs ~10M
    instructions) and judges each line exactly as reading its syntax tree does."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    src = Path(sitewarden.__file__).resolve().parent.parent
    proc = subprocess.run([python, "-I", "-S", "-c", MEMO_CHECK, str(src), str(cache)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["first"] == out["second"] == out["plain"], out
    assert out["first"][0] == (
        "ModuleNotFoundError: No module named 'swr_no_such_module_xyz'")
    assert out["first"][1] is None and out["first"][3] is None, out
    assert out["first"][2].startswith("SyntaxError: "), out
    (kept,) = cache.iterdir()
    assert kept.name.startswith("startup-lines-") and kept.stat().st_mode & 0o777 == 0o600


def _judge_with(cache: Path, data: bytes, mode: int = 0o600, via: Path | None = None):
    """How ``import swr_no_such_module_xyz`` is judged with ``data`` kept in ``cache``
    as the verdict file, read through ``via`` (else ``cache``)."""
    from sitewarden.audit import line_checks as sc

    path = cache / sc.LineMemo.NAME
    path.write_bytes(data)
    path.chmod(mode)
    return sc.line_error("import swr_no_such_module_xyz", sc.LineMemo(str(via or cache)))


def test_kept_verdicts_are_trusted_only_from_a_private_whole_file(tmp_path):
    """A verdict file is read only when it is this user's alone, in a directory that is,
    and holds what a check writes; anything else is read as no file at all (the lines
    are judged from their syntax trees)."""
    import marshal

    fails = "ModuleNotFoundError: No module named 'swr_no_such_module_xyz'"
    forged = marshal.dumps({"import swr_no_such_module_xyz": ()})
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert _judge_with(private, forged) is None  # what this user's own cache says
    assert _judge_with(private, forged, mode=0o666) == fails
    for junk in (b"", b"\x00garbage", marshal.dumps([1, 2]),
                 marshal.dumps({"import swr_no_such_module_xyz": ((1, True, None),)}),
                 marshal.dumps({"import swr_no_such_module_xyz": (("x", 1, None),)})):
        assert _judge_with(private, junk) == fails, junk
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert _judge_with(shared, forged) == fails
    link = tmp_path / "link"
    link.symlink_to(private)
    assert _judge_with(private, forged, via=link) == fails
    from sitewarden.audit import line_checks as sc

    memo = sc.LineMemo(None)  # outside a probe: nothing kept, nothing read
    assert memo.path is None and sc.line_error("import swr_no_such_module_xyz", memo) == fails
    memo.save()
