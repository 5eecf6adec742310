"""``check`` files nothing above ``low`` about the startup files real distributions ship.

A false alarm about a popular package's ``.pth`` teaches users to ignore ``check``.  Here
a real pip (the newest of ``harness.wheels.MATRIX``, from its wheel) installs real wheels
from PyPI (``--no-index --no-deps``, from the wheel cache) into the local directory of
Debian 12's ``/usr/bin/python3`` (in its namespace), then ``pip install -e`` (PEP 660,
that pip and the setuptools it just installed) of a small flat-layout project.  Each
wheel was chosen because it ships a ``.pth`` with an import line, one shape each
(:data:`WHEELS`):

- setuptools 80.9.0: ``distutils-precedence.pth``, a known template (``__import__``);
- pytest-cov 6.3.0 (the last line with a ``.pth``): ``pytest-cov.pth``, ``exec`` of a
  literal importing ``pytest_cov.embed`` when ``COV_CORE_SOURCE`` is set, a known template
  (the line and its modules pinned per release);
- coverage-enable-subprocess 1.0 (with coverage 7.10.6, its pure wheel, so the import
  resolves): ``exec`` of a literal calling ``coverage.process_startup()``;
- future-fstrings 1.2.0: ``aaaaa_future_fstrings.pth``, ``exec`` of a literal registering
  a codec, a known template (the line and its one module pinned per release);
- pdbpp 0.11.6: ``pdbpp_hijack_pdb.pth``, ``sys.path.insert`` of its ``pdb`` directory
  (site's own ``makepath`` and ``sitedir``);
- protobuf 3.20.3 and zope.event 4.5.0: setuptools' ``-nspkg.pth`` namespace lines;
- the editable install: ``__editable__.*.pth`` importing its ``__editable___*_finder``.

Each of those files is listed with its distribution as owner, verified against the
RECORD pip wrote, and no finding of severity ``medium`` or ``high`` names it (a template,
or ``distribution-startup-code``, info), but for pdbpp's hijack of ``pdb``, which the
prover says as such (``unproven-startup-code``, medium: its directory ahead of the
standard library's, ``pdb`` named); a normal start runs them all without a word on
stderr, and each visibly did its job.  A ``.pth`` of the
user's holding coverage's documented line is the coverage template (coverage's own module
runs it), and Debian's own startup files draw nothing above ``low``.

Then venvs of the same python: one per setuptools release of :data:`SETUPTOOLS` with its
``distutils-precedence.pth`` and an editable install setuptools serves with its finder
(both the templates: their modules are pinned per release in
``audit/template_digests.py``), and one per virtualenv release of :data:`VIRTUALENVS` (the
old one's ``_virtualenv.pth`` is the template; the new one writes none on 3.10+), and one
``uv venv`` makes (uv's own ``_virtualenv.pth``, the template too): nothing about their
startup files above ``low``.

coverage.py (a recent release, pinned per release): its documented line and pytest-cov's
``.pth`` stay below ``medium``; the same release with a module changed by its own wheel is
judged as code (high).  future-fstrings (its release pinned by the digest of its two
files, ``template_digests.FUTURE_FSTRINGS``, regenerated here from its wheel) is its
template; with one byte of its module or of its ``.pth`` changed by its own wheel (a RECORD
that vouches for it) it is judged as code, high (a hermetic CPython).  And editable installs
other backends build: hatchling and pdm-backend through ``editables``, scikit-build-core's
redirecting loader (a CMake project of no language): each its template, below ``medium``;
the loader with a payload is high.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from harness.interpreters import pyenv_interpreters
from harness.spread import DEBIAN, spread
from harness.wheels import cache_dir, pip_dir, pip_versions_for, wheel

#: (distribution, version): real wheels from PyPI whose startup files are judged.
WHEELS: Tuple[Tuple[str, str], ...] = (
    ("setuptools", "80.9.0"),
    ("pytest-cov", "6.3.0"),
    ("coverage-enable-subprocess", "1.0"),
    ("future-fstrings", "1.2.0"),
    ("pdbpp", "0.11.6"),
    ("protobuf", "3.20.3"),
    ("zope.event", "4.5.0"),
)
#: Installed beside them, shipping no startup file: what an import line imports.
SUPPORT: Tuple[Tuple[str, str], ...] = (("coverage", "7.10.6"),)

EDITABLE = ("swr-benign-edit", "1.0")
PROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"
[project]
name = "{0}"
version = "{1}"
[tool.setuptools]
packages = ["swr_benign_edit"]
"""

BAD = ("medium", "high")
COVERAGE_PTH = "zz-swr-coverage.pth"

#: What a normal start did (run by the target: ``-c``, so sys.path[0] is "").
LIVE = """\
import codecs, json, sys
import setuptools, swr_benign_edit
print(json.dumps({
    "pdbpp": sys.path[1].endswith("_pdbpp_path_hack"),
    "namespaces": [n in sys.modules for n in ("google", "zope")],
    "codec": codecs.lookup("future-fstrings").name,
    "editable": swr_benign_edit.WHO, "setuptools": setuptools.__version__}))
"""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pure_wheel(name: str, version: str) -> Path:
    """The ``py3-none-any`` (or ``py2.py3``) wheel of ``name==version`` from PyPI, cached
    under ``<wheel cache>/any`` (``harness.wheels.wheel`` takes the running Python's
    platform wheel where there is one; these go to other Pythons too)."""
    directory = cache_dir() / "any"
    directory.mkdir(exist_ok=True)

    def cached():
        return next((p for p in sorted(directory.glob("*-none-any.whl"))
                     if [_norm(p.name.split("-")[0]), p.name.split("-")[1]]
                     == [_norm(name), version]), None)

    found = cached()
    if found:
        return found
    # No lock: a wheel appears by an atomic rename, two workers at worst download it twice.
    with tempfile.TemporaryDirectory(dir=directory, prefix=".download-") as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "--platform", "any", "--implementation", "py", "--abi", "none",
             "--python-version", "3", "--ignore-requires-python",
             "--disable-pip-version-check", "--no-input", "%s==%s" % (name, version),
             "-d", tmp],
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        got = list(Path(tmp).glob("*-none-any.whl"))
        if proc.returncode != 0 or len(got) != 1:
            raise RuntimeError("downloading %s==%s failed:\n%s%s" % (
                name, version, proc.stdout, proc.stderr))
        os.replace(got[0], directory / got[0].name)
    return directory / got[0].name


def startup_files_of(whl: Path) -> Dict[str, str]:
    """The ``.pth`` files at the top of a wheel's purelib: name -> text."""
    with zipfile.ZipFile(whl) as archive:
        return {n: archive.read(n).decode() for n in archive.namelist()
                if "/" not in n and n.endswith(".pth")}


def _targets() -> List:
    """Debian 12's python (its namespace): the benign set's verdicts do not depend on the
    interpreter (each target's own startup files are held to it by test_startup_integrity)."""
    return [p for p in spread() if p.values[0] == DEBIAN]


def _pip(t, *args: str) -> subprocess.CompletedProcess:
    pip = pip_dir(pip_versions_for(t.version)[-1])
    proc = t.python("-m", "pip", *args, "--no-index", "--no-deps", "--break-system-packages",
                    "--disable-pip-version-check", "--no-cache-dir", "-q",
                    env={"PYTHONPATH": str(pip)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _judged(f: dict, about: List[dict]) -> str:
    """One startup file as ``check`` judged it: owner, template, each code line's
    capabilities, the findings naming it."""
    o = f["owner"]
    lines = ["%s: owner %s %s %s verified=%s (%s), template=%r" % (
        f["path"], o["kind"], o.get("distribution") or o.get("package"), o.get("version"),
        o.get("verified"), o.get("mismatch"), f.get("template"))]
    for x in f["lines"]:
        if x["kind"] in ("import", "entry-point"):
            lines.append("  line %d runs=%s error=%s capabilities=%s evidence=%s note=%s" % (
                x["number"], x.get("runs"), x.get("error"), x.get("capabilities"),
                x.get("evidence"), x.get("note")))
    lines.extend("  FINDING %s %s: %s" % (x["severity"], x["kind"], x["message"])
                 for x in about)
    return "\n".join(lines)


@pytest.mark.parametrize("bare_target", _targets(), indirect=True)
def test_real_distributions_startup_files_are_not_flagged(bare_target):
    t = bare_target
    wheels = {name: pure_wheel(name, version) for name, version in WHEELS + SUPPORT}
    shipped = {_norm(name): startup_files_of(wheels[name]) for name, _v in WHEELS}
    for name, files in shipped.items():  # each ships startup code, not only path lines
        assert any(re.search(r"^import[ \t]", text, re.M) for text in files.values()), \
            (name, files)
    _pip(t, "install", *map(str, wheels.values()))

    proj = t.tmp / "benign-edit"
    (proj / "swr_benign_edit").mkdir(parents=True)
    (proj / "swr_benign_edit" / "__init__.py").write_text("WHO = 'editable'\n")
    (proj / "pyproject.toml").write_text(PROJECT.format(*EDITABLE))
    for d in (t.tmp, proj, proj / "swr_benign_edit"):
        d.chmod(0o755)
    _pip(t, "install", "--no-build-isolation", "-e", str(proj))
    edit_pth = "__editable__.%s-%s.pth" % (EDITABLE[0].replace("-", "_"), EDITABLE[1])
    shipped[_norm(EDITABLE[0])] = {edit_pth: t.read_bytes(t.local_dir / edit_pth).decode()}
    # coverage's documented line, in a .pth of the user's: coverage's own module runs it
    t.put(t.local_dir / COVERAGE_PTH, data=b"import coverage; coverage.process_startup()\n")

    # A normal start runs every one of them without a word: pdbpp's directory comes first
    # on sys.path, the namespaces are set up, the codec registered, the editable finder
    # finds its package, and setuptools is the one just installed.
    proc = t.python("-c", LIVE)
    assert (proc.returncode, proc.stderr) == (0, ""), proc
    assert json.loads(proc.stdout) == {
        "pdbpp": True, "namespaces": [True, True], "codec": "future_fstrings",
        "editable": "editable", "setuptools": dict(WHEELS)["setuptools"]}, proc.stdout

    # The CLI's own run (not ``cli_check``: its live reference is the start just checked).
    proc = t.cli("check", "--python", t.executable, "--json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    files = {f["path"]: f for f in report["startup"]["files"]}

    def about(path):
        return [x for x in report["findings"]
                if path in (x.get("file"), (x.get("details") or {}).get("file"))]

    ours = {str(t.local_dir / n): name for name, names in shipped.items() for n in names}
    judged = "\n".join(_judged(files[p], about(p)) for p in sorted(ours) if p in files)
    missing = sorted(p for p in ours if p not in files)
    assert not missing, "not listed: %s\n%s" % (missing, judged)
    user = str(t.local_dir / COVERAGE_PTH)
    assert files[user]["owner"]["kind"] is None, judged
    assert files[user]["template"] == "coverage.py process_startup", _judged(
        files[user], about(user))
    assert not [x for x in about(user) if x["severity"] in BAD], about(user)
    debian = [x for x in report["findings"] if (x.get("file") or "").startswith("/usr/lib/")
              and x["severity"] in BAD]  # Debian's own startup files
    assert not debian, debian
    for path, name in sorted(ours.items()):
        owner = files[path]["owner"]
        assert owner["kind"] == "distribution" and _norm(owner["distribution"]) == name, judged
        assert owner["verified"] is True, judged
    # future-fstrings' codec: its template (a pinned release's .pth and module)
    fstrings = [p for p, n in ours.items() if n == "future-fstrings"]
    assert [files[p]["template"] for p in fstrings] == ["future-fstrings codec"], judged
    # What the prover cannot prove of pdbpp is said, at its own severity: it puts its own
    # pdb ahead of the standard library's.
    judged_by_rules = {_norm(n): p for p, n in ours.items() if _norm(n) == "pdbpp"}
    (hijack,) = [x for x in about(judged_by_rules["pdbpp"]) if x["severity"] in BAD]
    assert (hijack["kind"], hijack["severity"]) == ("unproven-startup-code", "medium"), hijack
    assert any("ahead of the standard library on sys.path: its pdb replaces" in r
               for r in hijack["unproven"]), hijack
    bad = ["%s %s %s: %s" % (x["severity"], x["kind"], x.get("file"), x["message"])
           for p in sorted(ours) for x in about(p) if x["severity"] in BAD
           and p not in judged_by_rules.values()]
    assert not bad, "\n".join(bad) + "\n\n" + judged
    print(judged)  # shown with -s / -rP


# ------------------------------------- what setuptools and virtualenv write, version by version

#: setuptools versions whose ``distutils-precedence.pth`` and editable finder (each a
#: different pinned ``_distutils_hack`` and finder form) a venv of its own holds; setuptools
#: before 70.1 builds editable wheels with ``wheel``'s ``bdist_wheel``.
SETUPTOOLS = ("65.5.0", "70.3.0", "84.2.1")
WHEEL_PKG = ("wheel", "0.45.1")
#: A project whose package lives elsewhere than its name says: setuptools' finder, not a
#: path line, installs it.
FINDER_PROJECT = PROJECT.replace(
    '[tool.setuptools]\npackages = ["swr_benign_edit"]\n',
    '[tool.setuptools]\npackages = ["swr_benign_edit"]\n'
    '[tool.setuptools.package-dir]\nswr_benign_edit = "lib/edit"\n')
#: uv (its binary, from its wheel for this machine): the last release writing
#: ``_virtualenv.pth`` on every Python.
UV = ("uv", "0.12.24")
#: (virtualenv and what it imports): an old release (writes ``_virtualenv.pth`` on every
#: Python) and a new one (only below 3.10: none on Debian 12's 3.11).
VIRTUALENVS = (
    (("virtualenv", "20.21.1"), ("distlib", "0.3.6"), ("filelock", "3.12.0"),
     ("platformdirs", "3.5.0")),
    (("virtualenv", "21.15.14"), ("distlib", "0.4.4"), ("filelock", "4.3.2"),
     ("platformdirs", "4.14.9"), ("packaging", "26.4"), ("python-discovery", "1.9.9")),
)


def _pip_in(t, python: str, *args: str) -> None:
    pip = pip_dir(pip_versions_for(t.version)[-1])
    proc = t.run([python, "-m", "pip", *args, "--no-index", "--no-deps",
                  "--disable-pip-version-check", "--no-cache-dir", "-q"],
                 env={"PYTHONPATH": str(pip)})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _venv_report(t, python: str) -> Tuple[dict, str]:
    """``check`` of ``python`` (a venv's): its report, and how it judged the files of the
    venv's site directory (for the failure message)."""
    proc = t.cli("check", "--python", python, "--json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    about = {f["path"]: [x for x in report["findings"] if x.get("file") == f["path"]]
             for f in report["startup"]["files"]}
    judged = "\n".join(_judged(f, about[f["path"]]) for f in report["startup"]["files"])
    return report, judged


def _bad(report: dict) -> List[str]:
    return ["%s %s %s: %s" % (x["severity"], x["kind"], x.get("file"), x["message"])
            for x in report["findings"] if x["severity"] in BAD and x.get("file")]


@pytest.mark.parametrize("bare_target", _targets(), indirect=True)
def test_setuptools_and_virtualenv_venvs_are_templates(bare_target):
    """Venvs of Debian 12's python: one per setuptools release with its
    ``distutils-precedence.pth`` and an editable install's finder (the templates, pinned
    per release), and one per virtualenv release (its ``_virtualenv.pth``, the template):
    nothing about their startup files above ``low``."""
    t = bare_target
    bdist = pure_wheel(*WHEEL_PKG)
    proj = t.tmp / "finder-edit"
    (proj / "lib" / "edit").mkdir(parents=True)
    (proj / "lib" / "edit" / "__init__.py").write_text("WHO = 'finder'\n")
    (proj / "pyproject.toml").write_text(FINDER_PROJECT.format(*EDITABLE))
    for d in (t.tmp, proj, proj / "lib", proj / "lib" / "edit"):
        d.chmod(0o755)
    for version in SETUPTOOLS:
        venv = t.tmp / ("st-" + version)
        assert t.python("-m", "venv", "--without-pip", str(venv)).returncode == 0
        python = str(venv / "bin" / "python")
        _pip_in(t, python, "install", str(pure_wheel("setuptools", version)), str(bdist))
        _pip_in(t, python, "install", "--no-build-isolation", "-e", str(proj))
        proc = t.run([python, "-c", "import swr_benign_edit as m; print(m.WHO)"])
        assert proc.stdout.strip() == "finder", proc
        report, judged = _venv_report(t, python)
        templates = {os.path.basename(f["path"]): f["template"]
                     for f in report["startup"]["files"] if f["path"].startswith(str(venv))}
        assert templates.get("distutils-precedence.pth") == \
            "setuptools distutils-precedence", (version, judged)
        finder = [n for n in templates if n.startswith("__editable__.")]
        assert finder and templates[finder[0]] == "editable install finder", (version, judged)
        assert not _bad(report), "\n".join(_bad(report)) + "\n\n" + judged
    uv = t.tmp / "uv"
    with zipfile.ZipFile(wheel(*UV)) as z:  # the running platform's wheel: its binary
        uv.write_bytes(z.read("uv-%s.data/scripts/uv" % UV[1]))
    uv.chmod(0o755)
    venv = t.tmp / "uv-venv"
    proc = t.run([str(uv), "venv", str(venv), "--python", t.executable, "--no-python-downloads",
                  "-q"], env={"UV_NO_CACHE": "1", "UV_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report, judged = _venv_report(t, str(venv / "bin" / "python"))
    assert [(os.path.basename(f["path"]), f["template"]) for f in report["startup"]["files"]
            if f["path"].startswith(str(venv))] == [("_virtualenv.pth", "virtualenv")], judged
    assert not _bad(report), "\n".join(_bad(report)) + "\n\n" + judged
    for wheels in VIRTUALENVS:
        name = "virtualenv-" + wheels[0][1]
        lib = t.tmp / (name + "-lib")
        lib.mkdir()
        lib.chmod(0o755)
        _pip(t, "install", "--target", str(lib), *(str(pure_wheel(*w)) for w in wheels))
        venv = t.tmp / name
        proc = t.python("-m", "virtualenv", "--no-seed", str(venv), env={
            "PYTHONPATH": str(lib), "VIRTUALENV_OVERRIDE_APP_DATA": str(t.tmp / "app-data")})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report, judged = _venv_report(t, str(venv / "bin" / "python"))
        mine = [f for f in report["startup"]["files"] if f["path"].startswith(str(venv))]
        if wheels[0][1].startswith("20."):
            assert [(os.path.basename(f["path"]), f["template"]) for f in mine] == [
                ("_virtualenv.pth", "virtualenv")], judged
        assert not _bad(report), "\n".join(_bad(report)) + "\n\n" + judged


# ---------------------------------------------------------------- coverage.py, pinned per release

#: A recent coverage.py (its pure wheel: it ships ``a1_coverage.pth`` of its own) and
#: pytest-cov; coverage's whole package runs behind its documented line.
COVERAGE = ("coverage", "7.18.0")
PYTEST_COV = ("pytest-cov", "6.3.0")


def _rebuilt(whl: Path, out: Path, edit: Dict[str, bytes]) -> Path:
    """``whl`` with the members of ``edit`` replaced and a RECORD that lists every file
    with its hash, as a wheel whose author changed them would be."""
    import base64
    import hashlib
    with zipfile.ZipFile(whl) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members.update(edit)
    record = next(n for n in members if n.endswith(".dist-info/RECORD"))
    rows = ["%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest())
                                 .rstrip(b"=").decode(), len(d))
            for n, d in sorted(members.items()) if n != record]
    members[record] = ("\n".join(rows + [record + ",,"]) + "\n").encode()
    with zipfile.ZipFile(out, "w") as z:
        for n, d in members.items():
            z.writestr(n, d)
    return out


#: A payload spliced into pytest-cov's exec literal, after ``init()`` (never run: behind
#: ``0 and``, and only with ``COV_CORE_SOURCE`` set).
SPLICE = (b"  init()\\n", b"  init()\\n  0 and os.system(\\'true\\')\\n")


@pytest.mark.parametrize("bare_target", _targets(), indirect=True)
def test_coverage_pinned_release_is_benign_and_a_changed_one_is_judged(bare_target):
    """coverage's documented line and pytest-cov's ``.pth`` (its template: the line and its
    modules pinned per release, ``template_digests.PYTEST_COV``) in a venv with a real,
    recent coverage.py (pinned: ``template_digests.COVERAGE``): coverage's own
    ``exec``/``eval`` and processes are excused, nothing above ``low``.  The same release
    with one module changed by its wheel (a RECORD of its own vouching for it): no longer
    pinned, judged as any code is: the line is high (``dangerous-startup-code``), never the
    template, and coverage's own ``a1_coverage.pth`` calling into it is unproven (high);
    pytest-cov's template holds (coverage is none of its own).  pytest-cov's wheel with a
    payload spliced into its line (its RECORD rewritten to match): not the template, high."""
    t = bare_target
    real = pure_wheel(*COVERAGE)
    cov = pure_wheel(*PYTEST_COV)
    t.tmp.chmod(0o755)
    kinds = {"pinned": (real, cov)}
    platform = wheel(*COVERAGE)  # the running Python's: its C tracer, pinned per wheel
    if "-cp%d%d-" % t.version[:2] in platform.name:
        kinds["platform"] = (platform, cov)
    with zipfile.ZipFile(real) as z:
        version = z.read("coverage/version.py") + b"\n# rebuilt\n"
    kinds["changed"] = (_rebuilt(real, t.tmp / real.name, {"coverage/version.py": version}),
                        cov)
    with zipfile.ZipFile(cov) as z:
        line = z.read("pytest-cov.pth")
    assert line.count(SPLICE[0]) == 1, line
    kinds["spliced"] = (real, _rebuilt(cov, t.tmp / cov.name, {
        "pytest-cov.pth": line.replace(*SPLICE)}))
    for kind, (whl, cov_whl) in kinds.items():
        venv = t.tmp / ("cov-" + kind)
        assert t.python("-m", "venv", "--without-pip", str(venv)).returncode == 0
        python = str(venv / "bin" / "python")
        _pip_in(t, python, "install", str(whl), str(cov_whl))
        site = next(venv.glob("lib/python3*/site-packages"))
        t.put(site / COVERAGE_PTH, data=b"import coverage; coverage.process_startup()\n")
        proc = t.run([python, "-c", "import coverage; print(coverage.__version__)"])
        assert (proc.returncode, proc.stdout.strip()) == (0, COVERAGE[1]), proc
        report, judged = _venv_report(t, python)
        files = {os.path.basename(f["path"]): f for f in report["startup"]["files"]
                 if f["path"].startswith(str(venv))}
        assert files[COVERAGE_PTH]["owner"]["kind"] is None, judged
        assert files["pytest-cov.pth"]["owner"]["verified"] is True, judged
        high = {(os.path.basename(x["file"]), x["kind"]) for x in report["findings"]
                if x["severity"] == "high" and x.get("file")}
        if kind == "spliced":
            assert files[COVERAGE_PTH]["template"] == "coverage.py process_startup", judged
            assert files["pytest-cov.pth"]["template"] is None, judged
            assert high == {("pytest-cov.pth", "dangerous-startup-code")}, judged
            continue
        assert files["pytest-cov.pth"]["template"] == "pytest-cov subprocess support", judged
        if kind != "changed":
            assert files[COVERAGE_PTH]["template"] == "coverage.py process_startup", judged
            assert not _bad(report), "\n".join(_bad(report)) + "\n\n" + judged
            continue
        assert files[COVERAGE_PTH]["template"] is None, judged
        assert (COVERAGE_PTH, "dangerous-startup-code") in high, judged
        # pytest-cov's line imports pytest_cov.embed only when asked (its exec literal):
        # read one step, it does nothing of coverage's, its template holds.  coverage's own
        # a1_coverage.pth calls into the changed coverage: judged, unproven (high).
        assert ("a1_coverage.pth", "unproven-startup-code") in high, judged
        assert not [x for x in high if x[0] not in (COVERAGE_PTH, "a1_coverage.pth")], judged


# ------------------------------------------------------- future-fstrings, pinned per release

#: future-fstrings' wheel (pure, in the wheel cache): ``aaaaa_future_fstrings.pth`` and
#: ``future_fstrings.py``, its one top-level module, pinned together per release.
FUTURE_FSTRINGS = ("future-fstrings", "1.2.0")


def release_digest(whl: Path, names: Tuple[str, ...]) -> str:
    """How ``template_digests.PYTEST_COV`` and ``FUTURE_FSTRINGS`` are generated: sha256
    over the sorted rows ``"path sha256=<urlsafe b64, unpadded>\n"`` of the files ``names``
    of a released wheel, each hashed from the wheel's own file (and found so in its
    RECORD): the rows ``audit.pinned.record_digest`` reads from an installed RECORD."""
    import base64
    import hashlib
    with zipfile.ZipFile(whl) as z:
        record = "\n" + z.read(next(n for n in z.namelist()
                                    if n.endswith(".dist-info/RECORD"))).decode()
        rows = []
        for name in names:
            digest = "sha256=" + base64.urlsafe_b64encode(
                hashlib.sha256(z.read(name)).digest()).rstrip(b"=").decode()
            assert "\n%s,%s," % (name, digest) in record, (whl, name)
            rows.append((name, digest))
    return hashlib.sha256("".join("%s %s\n" % r for r in sorted(rows)).encode()).hexdigest()


def test_future_fstrings_is_pinned_by_its_files_and_one_changed_byte_is_judged(
        make_hermetic, tmp_path):
    """future-fstrings' ``.pth`` and its module ``future_fstrings.py`` are pinned together
    per release (``template_digests.FUTURE_FSTRINGS``, regenerated here from the released
    wheel): installed with its RECORD in the oldest hermetic CPython, the ``.pth`` is the
    template ``future-fstrings codec`` and no finding names it.  The same wheel with one
    byte of its module changed (in a comment: the same code), or one byte of its ``.pth``
    (its last newline a space: the same lines), its RECORD rewritten to match (a wheel of
    the same name anyone can build): verified, but no release's, so judged as code: high
    (``unproven-startup-code``: the module's calls the prover cannot resolve), never the
    template."""
    from sitewarden.audit import pinned, template_digests
    real = wheel(*FUTURE_FSTRINGS)
    assert template_digests.FUTURE_FSTRINGS.get(release_digest(
        real, pinned.FILES["future-fstrings"][0])) == "future-fstrings %s" % FUTURE_FSTRINGS[1]
    with zipfile.ZipFile(real) as z:
        module, pth = z.read("future_fstrings.py"), z.read("aaaaa_future_fstrings.pth")
    assert module.count(b"# codec api") == 1 and pth.endswith(b"')\n\n"), pth
    kinds = {"pinned": {},
             "module": {"future_fstrings.py": module.replace(b"# codec api", b"# codec apI")},
             "pth": {"aaaaa_future_fstrings.pth": pth[:-1] + b" "}}
    t = make_hermetic(pyenv_interpreters()[0])
    path = str(t.local_dir / "aaaaa_future_fstrings.pth")
    for kind, edit in kinds.items():
        whl = _rebuilt(real, tmp_path / real.name, edit) if edit else real
        stage = tmp_path / kind  # extracted here: harness.wheels.unpacked keeps one per name
        with zipfile.ZipFile(whl) as z:
            z.extractall(stage)
        for p in [stage, *stage.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        t.merge_into(stage, t.local_dir)  # over the last: its files and RECORD replaced
        proc = t.cli("check", "--python", t.executable, "--json")
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        report = json.loads(proc.stdout)
        (f,) = [x for x in report["startup"]["files"] if x["path"] == path]
        about = [x for x in report["findings"] if x.get("file") == path]
        judged = _judged(f, about)
        assert f["owner"]["verified"] is True, (kind, judged)
        if kind == "pinned":
            assert f["template"] == "future-fstrings codec" and not about, judged
            continue
        assert f["template"] is None, (kind, judged)
        assert [(x["kind"], x["severity"]) for x in about] == [
            ("unproven-startup-code", "high")], (kind, judged)
        assert any("future_fstrings.py:" in r and "cannot resolve" in r
                   for r in about[0]["unproven"]), (kind, about)


# --------------------------------------------- editable loaders other build backends generate

#: Build backends (pure wheels) and what they import: each builds an editable install here
#: whose startup file imports a module it generated.
BACKENDS: Tuple[Tuple[str, str], ...] = (
    ("hatchling", "1.33.0"), ("pdm-backend", "2.5.0"), ("scikit-build-core", "1.1.2"),
    ("editables", "0.6"), ("packaging", "26.4"), ("pathspec", "1.1.1"), ("pluggy", "1.7.0"),
    ("tomlkit", "0.15.3"), ("trove-classifiers", "2026.9.21.13"), ("meson", "1.12.1"),
    ("meson-python", "0.22.1"), ("pyproject-metadata", "0.12.1"))
#: ``(project name, build-system table and tool tables, the template its file is)``.
BACKEND_PROJECTS = (
    ("swr-hatch-edit", '[build-system]\nrequires = ["hatchling"]\nbuild-backend = '
     '"hatchling.build"\n{project}[tool.hatch.build]\ndev-mode-exact = true\n'
     '[tool.hatch.build.targets.wheel]\npackages = ["swr_hatch_edit"]\n',
     "editables redirector"),
    ("swr-pdm-edit", '[build-system]\nrequires = ["pdm-backend"]\nbuild-backend = '
     '"pdm.backend"\n{project}[tool.pdm.build]\neditable-backend = "editables"\n',
     "editables redirector"),
    ("swr-skb-edit", '[build-system]\nrequires = ["scikit-build-core"]\nbuild-backend = '
     '"scikit_build_core.build"\n{project}[tool.scikit-build]\neditable.mode = "redirect"\n'
     'wheel.packages = ["swr_skb_edit"]\n', "editable install loader"),
    ("swr-meson-edit", '[build-system]\nrequires = ["meson-python"]\nbuild-backend = '
     '"mesonpy"\n{project}', "editable install loader"),
)
#: The meson-python project's build file (meson, then ninja, from the venv and the system).
MESON_BUILD = ("project('swr-meson-edit', version: '1.0')\n"
               "py = import('python').find_installation()\n"
               "py.install_sources('swr_meson_edit/__init__.py', subdir: 'swr_meson_edit')\n")


@pytest.mark.parametrize("bare_target", _targets(), indirect=True)
def test_editable_loaders_of_build_backends_are_templates(bare_target):
    """Editable installs hatchling (``dev-mode-exact``: ``editables``' bootstrap),
    pdm-backend (its ``editables`` backend), scikit-build-core (its redirecting loader,
    a CMake project of no language) and meson-python (its loader, which rebuilds with
    ninja on import) build, in a venv of Debian 12's python: each startup
    file is its template (generated form, author per ``WHEEL``), nothing above ``low``
    (``editables`` itself, which the bootstrap runs, a pinned release:
    ``template_digests.EDITABLES``); the loader with a payload appended is judged as code:
    high; so is ``editables`` with its ``__init__.py`` changed by its wheel (a RECORD of its
    own vouching for it): no longer pinned, what it does is unproven (high)."""
    t = bare_target
    venv = t.tmp / "backends"
    assert t.python("-m", "venv", "--without-pip", str(venv)).returncode == 0
    python = str(venv / "bin" / "python")
    _pip_in(t, python, "install", *(str(pure_wheel(*w)) for w in BACKENDS))
    t.tmp.chmod(0o755)
    for name, pyproject, _template in BACKEND_PROJECTS:
        package = name.replace("-", "_")
        proj = t.tmp / name
        (proj / package).mkdir(parents=True)
        (proj / package / "__init__.py").write_text("WHO = %r\n" % name)
        (proj / "pyproject.toml").write_text(pyproject.format(
            project='[project]\nname = "%s"\nversion = "1.0"\n' % name))
        (proj / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.15)\nproject(${SKBUILD_PROJECT_NAME} "
            "LANGUAGES NONE)\n")
        (proj / "meson.build").write_text(MESON_BUILD)
        for d in (proj, proj / package):
            d.chmod(0o755)
        path = "%s:/usr/bin:/bin" % (venv / "bin")
        proc = t.run([python, "-m", "pip", "install", "--no-index", "--no-deps", "-q",
                      "--disable-pip-version-check", "--no-cache-dir", "--no-build-isolation",
                      "-e", str(proj)], env={"PATH": path, "PYTHONPATH": str(
                          pip_dir(pip_versions_for(t.version)[-1]))})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        proc = t.run([python, "-c", "import %s as m; print(m.WHO)" % package],
                     env={"PATH": path})
        assert proc.stdout.strip() == name, proc
    report, judged = _venv_report(t, python)
    site = next(venv.glob("lib/python3*/site-packages"))
    got = {}
    for f in report["startup"]["files"]:
        for name, _p, _t in BACKEND_PROJECTS:
            if f["path"].startswith(str(site)) and (name.replace("-", "_") in f["path"]
                                                    or name in f["path"]) and \
                    any(x["kind"] == "import" for x in f["lines"]):
                got[name] = f["template"]
    assert got == {n: tpl for n, _p, tpl in BACKEND_PROJECTS}, judged
    assert not _bad(report), "\n".join(_bad(report)) + "\n\n" + judged
    # the same loader, a payload appended: no generated form, judged as any code is
    loader = next(site.glob("_editable_skbc_*.py"))
    t.put(loader, data=loader.read_bytes() + b"\ndef _later():\n    import subprocess\n"
          b"    subprocess.run(['id'])\n")
    report, judged = _venv_report(t, python)
    high = [x for x in report["findings"] if x["severity"] == "high"
            and "swr_skb_edit" in (x.get("file") or "")]
    assert {x["kind"] for x in high} >= {"dangerous-startup-code"}, judged
    # editables with a module changed (a comment: same code), its RECORD rewritten to
    # match: not a pinned release, its code judged as any code is
    real = pure_wheel(*[w for w in BACKENDS if w[0] == "editables"][0])
    with zipfile.ZipFile(real) as z:
        init = z.read("editables/__init__.py") + b"\n# rebuilt\n"
    changed = _rebuilt(real, t.tmp / real.name, {"editables/__init__.py": init})
    _pip_in(t, python, "install", "--force-reinstall", str(changed))
    assert (site / "editables" / "__init__.py").read_bytes() == init
    report, judged = _venv_report(t, python)
    files = {f["path"]: f for f in report["startup"]["files"]}
    for name in ("swr-hatch-edit", "swr-pdm-edit"):
        (pth,) = [p for p in files if p.startswith(str(site)) and
                  name.replace("-", "_") in p and p.endswith(".pth")]
        assert files[pth]["owner"]["verified"] is True, judged
        high = [x for x in report["findings"] if x["severity"] == "high"
                and x.get("file") == pth]
        assert [x["kind"] for x in high] == ["unproven-startup-code"], judged
        assert any("editables/__init__.py" in r for r in high[0]["unproven"]), high
