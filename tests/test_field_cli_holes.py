"""CLI holes found in the field: ``install --site-dir`` into the distro's or the standard
library's directories, a closed pipe, ``check``'s counts and wording, the JSON schema
page, and one exit-status rule for every command.

Each scenario runs the real CLI of this checkout: on the host against hermetic pythons,
and on Debian's own interpreters (Debian 12's ``/usr/bin/python3`` in a mount namespace,
the roots' Debian 13, sid 3.14 and sid 3.15) where the distro's directories matter.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

import pytest

from harness import make_dist, pyenv_interpreters
from harness.cli import CLI, run_cli
from harness.guarded import make_guarded
from harness.printed import runs_as_printed
from harness.spread import spread
from sitewarden.facts.text import unwrap_lines

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "sitewarden"
SCHEMA_PAGE = ROOT / "docs" / "check-schema.md"

@pytest.fixture(params=spread(targets="debian"))
def debian_target(request) -> Iterator[Any]:
    """As ``debian_any``, through the ``GuardedPython`` interface, guard not deployed."""
    target = make_guarded(request.param, deploy=False)
    yield target
    target.close()


def pkg(name: str, version: str) -> Dict[str, str]:
    return {"%s/__init__.py" % name: "__version__ = %r\n" % version}


# ------------------------------------------------------------------ 1. distro directories


def test_install_refuses_distro_and_stdlib_site_dirs(debian_any):
    """``install --site-dir`` naming dpkg's directory, a site directory inside the
    standard library (Debian's ``/usr/lib/python3.X/dist-packages``, which does not
    exist), the standard library itself, or a symbolic link to dpkg's directory is
    refused with exit status 2 before anything is written, naming the Debian package."""
    ns = debian_any
    stdlib = str(ns.stdlib)
    in_stdlib = stdlib + "/dist-packages"
    link = str(ns.home / "site-link")
    ns.root("import os, sys; os.symlink(sys.argv[1], sys.argv[2])",
                  str(ns.distro_dir), link)
    watched = (str(ns.distro_dir), stdlib, str(ns.local_dir))
    before = {d: ns.tree_digest(d) for d in watched}
    assert not ns.exists(in_stdlib)
    for site_dir, why in ((str(ns.distro_dir), "the distribution's site directory"),
                          (in_stdlib, "inside the standard library"),
                          (stdlib, "is the standard library of"),
                          (link, "the distribution's site directory")):
        proc = ns.run([*ns.cli_argv, "install", "--python", ns.executable, "--site-dir", site_dir])
        assert proc.returncode == 2, (site_dir, proc.stdout + proc.stderr)
        assert proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.startswith("sitewarden: error: %s " % site_dir), proc.stderr
        assert why in proc.stderr and "apt install sitewarden" in proc.stderr, proc.stderr
        assert "sitewarden install --python %s" % ns.executable in proc.stderr, proc.stderr
    for d in watched:
        assert ns.tree_digest(d) == before[d], d
    assert not ns.exists(in_stdlib)
    # The install scheme's directory (the default) is still where the guard goes.
    proc = ns.run([*ns.cli_argv, "install", "--python", ns.executable, "--site-dir",
                   str(ns.local_dir)])
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------------------------ 2. a closed pipe


@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["check"],
                                  ["check", "--json"], ["--help"]])
def test_closed_pipe_ends_quietly(args):
    """``sitewarden status | true``: the reader is gone before the CLI writes. The CLI
    ends quietly with exit status 141 (128 + SIGPIPE, what a shell reports for a command
    that a closed pipe ended), no traceback and no "Exception ignored" on stderr."""
    if args[0] != "--help":
        args = [*args, "--python", sys.executable]
    proc = subprocess.Popen([*CLI, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the only read end: every write to stdout fails with EPIPE
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    # argparse writes --help itself, and ignores a failed write (OSError): exit status 0.
    assert proc.wait(timeout=300) == (0 if args == ["--help"] else 141), stderr
    for text in ("Traceback", "BrokenPipeError", "Exception ignored", "Errno 32"):
        assert text not in stderr, stderr


def test_pipeline_into_head_ends_quietly(tmp_path):
    """The same through a shell: ``sitewarden check --json ... | head -c1``, the output
    made longer than any pipe buffer by a PYTHONPATH of many directories."""
    dirs = []
    for n in range(400):
        d = tmp_path / ("entry-%03d-%s" % (n, "x" * 60))
        d.mkdir()
        dirs.append(str(d))
    env = {"PYTHONPATH": ":".join(dirs), "PATH": "/usr/bin:/bin"}
    command = " ".join([*map(_quote, CLI), "check", "--json", "--python", _quote(sys.executable),
                        "| head -c1 >/dev/null; echo \"${PIPESTATUS[0]}\" >&2"])
    proc = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.stderr.strip().splitlines()[-1] == "141", proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr


@pytest.mark.parametrize("how", ["script", "-m"])
def test_current_directory_on_pythonpath_does_not_break_the_cli(how, tmp_path):
    """``PYTHONPATH=:/x`` in a directory holding ``random.py``, ``tempfile.py`` and
    ``json.py``: what ``check`` is run to report.  The CLI, with a cold runtime cache
    (it builds the deployed tree: ``tempfile`` imports ``random``), imports none of them
    and reports them in the target."""
    here = tmp_path / "here"
    here.mkdir()
    for name in ("random", "tempfile", "json", "shutil", "subprocess"):
        (here / (name + ".py")).write_text("raise SystemExit('the CLI imported %s.py')\n" % name)
    script = Path(sys.executable).parent / "sitewarden"
    if how == "script" and not script.exists():
        pytest.skip("no sitewarden command beside %s (the CLI is not pip-installed)"
                    % sys.executable)
    argv = [str(script)] if how == "script" else CLI
    env = {"PYTHONPATH": ":/nonexistent-x", "XDG_CACHE_HOME": str(tmp_path / "cold-cache")}
    proc = run_cli("check", "--json", "--python", sys.executable, env=env, cwd=str(here),
                   argv=argv)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    classes = {e["path"]: e["class"] for e in report["layout"]["entries"]}
    assert classes[str(here)] == "pythonpath", classes
    shadowed = {f["module"] for f in report["findings"] if f["kind"] == "stdlib-shadowed"}
    assert {"random", "tempfile", "json"} <= shadowed, report["findings"]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


# ------------------------------------------------------------------ 3. check's counts


#: A counted heading of the text report: ``Title (N)`` at the start of a line.
HEADING = re.compile(r"^([A-Z][A-Za-z ]*) \((\d+)\)$")


def counted_sections(text: str) -> Dict[str, Tuple[int, List[str]]]:
    """``{title: (count, entries)}`` of every counted heading of a text report: its
    entries are the lines indented by two spaces below it (deeper lines are an entry's
    details), a lone ``none...`` line being no entry."""
    sections: Dict[str, Tuple[int, List[str]]] = {}
    current = None
    for line in text.splitlines():
        m = HEADING.match(line)
        if m:
            current = m.group(1)
            assert current not in sections, "heading %r twice" % current
            sections[current] = (int(m.group(2)), [])
        elif not line.startswith(" "):
            current = None
        elif current is not None and line.startswith("  ") and line[2] != " ":
            sections[current][1].append(line.strip())
    for title, (count, entries) in list(sections.items()):
        if count == 0:
            assert len(entries) == 1 and entries[0].startswith("none"), (title, entries)
            sections[title] = (0, [])
    return sections


def assert_counts_match(report: Dict[str, Any], text: str) -> Dict[str, Tuple[int, List[str]]]:
    """Every heading's count is the number of entries under it; the findings and the
    informational ones are counted apart, each as the JSON report has them."""
    sections = counted_sections(text)
    for title, (count, entries) in sections.items():
        assert count == len(entries), (title, count, entries, text)
    findings = [f for f in report["findings"] if f["severity"] != "info"]
    # The marker's state is said once, by the PEP 668 line, not as information too.
    infos = [f for f in report["findings"] if f["severity"] == "info" and f["kind"] not in (
        "externally-managed", "not-externally-managed", "virtualenv")]
    assert sections["Findings"][0] == len(findings), text
    assert [e.split()[0] for e in sections["Findings"][1]] == [
        f["severity"] for f in sorted(findings, key=lambda f: ["high", "medium", "low"].index(
            f["severity"]))], text
    assert sections.get("Information", (0, []))[0] == len(infos), text
    assert all(e.startswith("info ") for e in sections.get("Information", (0, []))[1])
    shadowing = report["shadowing"]
    assert sections.get("Shadowed modules", (0, []))[0] == (
        len(shadowing["modules"]) + len(shadowing["hidden_namespaces"])), text
    assert " is cannot " not in text and "  requires" not in text, text
    return sections


def test_check_counts_match_what_is_listed(debian_target):
    """``check`` on Debian's interpreters with 1 finding (no guard), 0 (guarded) and
    several (shadowed modules, versions that cannot be compared, stale metadata): each
    heading counts what it lists, the informational findings under their own heading."""
    t = debian_target
    seen = []
    for step in ("bare", "guarded", "shadowed"):
        if step == "guarded":
            t.install()
        elif step == "shadowed":
            t.add_shadowed(["swch_alpha", "swch_beta"])
            t.copy_in(lambda stage: (
                make_dist(stage, "swch-info", "1.1build1", pkg("swch_info", "1.1build1")),
                make_dist(stage, "swch-upgrader", "1:23.04", {"swch_upgrader/__init__.py": ""},
                          requires=["swch-info>=1.0"])), t.distro_dir)
            t.copy_in(lambda stage: (
                make_dist(stage, "swch-info", "0.23ubuntu1", pkg("swch_info", "x"),
                          installer="pip"),
                make_dist(stage, "swch-stale", "1.0", {}, installer="pip")), t.local_dir)
            t.copy_in(lambda stage: make_dist(stage, "swch-stale", "0.9",
                                              {"swch_stale.py": ""}), t.distro_dir)
        status, report, text = t.cli_check()
        sections = assert_counts_match(report, text)
        seen.append(sections["Findings"][0])
        attention = [f for f in report["findings"] if f["severity"] in ("medium", "high")]
        assert status == (1 if attention else 0), text  # check's default: --fail-on medium
        if step == "shadowed":
            assert "swch_info (versions cannot be compared)" in text, text
            assert "metadata without modules" in text.lower() or \
                "Stale metadata" in text, text
    assert seen[0] == 1 and seen[1] == 0 and seen[2] >= 3, seen


# ------------------------------------------------------------------ 4. the schema page


def _source_findings() -> Dict[str, Set[str]]:
    """``{kind: detail keys}`` of every ``Finding(...)``/``finding(...)`` written in the
    source with a literal kind (an AST walk of src/sitewarden)."""
    out: Dict[str, Set[str]] = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        # records.finding(kind, ...) is the JSON form's constructor: it passes a name on.
        wrappers = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                    and n.name == "finding"]
        passed_on = {id(c) for w in wrappers for c in ast.walk(w)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or id(node) in passed_on:
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name not in ("Finding", "finding") or not node.args:
                continue
            kind = node.args[0]
            assert isinstance(kind, ast.Constant) and isinstance(kind.value, str), (
                "%s:%d: a finding's kind must be a literal" % (path, node.lineno))
            out.setdefault(kind.value, set()).update(k.arg for k in node.keywords if k.arg)
    return out


def _source_keys() -> Set[str]:
    """The string keys of the dicts that ``as_dict``/``as_json`` return (the records'
    and deployments' JSON forms) and of :func:`sitewarden.cli.deployed.find_orphans`."""
    keys: Set[str] = set()
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name in ("as_dict", "as_json",
                                                               "find_orphans"):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Dict):
                        keys.update(k.value for k in node.keys
                                    if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return keys | _record_keys()


def _record_keys() -> Set[str]:
    """The keys the records that make ``check``'s report always write (each record's
    ``FIELDS`` but its ``OPTIONAL``, see ``sitewarden.facts.records.Record``)."""
    from sitewarden.cli.state import GuardState, Setting
    from sitewarden.facts.records import CheckReport

    keys: Set[str] = set()
    todo, seen = [CheckReport, GuardState, Setting], set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for key, _attr, kind in cls.FIELDS:
            if key not in cls.OPTIONAL:  # checked where a real report has them
                keys.add(key)
            if kind is not None:
                todo.append(kind)
    return keys


def _json_keys(value: Any, out: Set[str]) -> Set[str]:
    """Every key of a report but the findings' (checked against their kind's row)."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(key)
            if key != "findings":
                _json_keys(item, out)
    elif isinstance(value, list):
        for item in value:
            _json_keys(item, out)
    return out


def _schema() -> Tuple[Set[str], Dict[str, str]]:
    """The backticked names of the schema page outside its finding-kind table (a key
    documented as a finding's detail only is not documented where it is emitted), and
    that table's rows."""
    page = SCHEMA_PAGE.read_text(encoding="utf-8")
    before, rest = page.split("### Finding kinds", 1)
    table, _, after = rest.partition("\n#")
    names = set(re.findall(r"`([^`\s]+)`", before + after))
    rows = {}
    for line in table.splitlines():
        m = re.match(r"^\| `([a-z-]+)` \|(.*)$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return names, rows


def test_schema_page_documents_every_kind_and_key(guarded, cli):
    """Every finding kind and detail key written in the source, and every key of real
    ``check --json`` reports (guarded, shadowed, stale metadata, an incomplete
    deployment, an orphaned hook, a foreign and a missing ``PYTHONPATH`` entry, a
    virtual environment), is on docs/check-schema.md: each kind a row of its finding
    table naming the kind's details, each key in backticks."""
    kinds = _source_findings()
    keys = _source_keys()
    g = guarded()
    g.add_shadowed(["swsc_alpha"])
    make_dist(g.distro_dir, "swsc-info", "1.1build1", pkg("swsc_info", "1.1build1"))
    make_dist(g.distro_dir, "swsc-upgrader", "1.0", {"swsc_upgrader/__init__.py": ""},
              requires=["swsc-info>=1.0"])
    make_dist(g.local_dir, "swsc-info", "0.2", pkg("swsc_info", "0.2"), installer="pip")
    make_dist(g.local_dir, "swsc-stale", "1.0", {}, installer="pip")
    make_dist(g.distro_dir, "swsc-stale", "0.9", {"swsc_stale.py": ""})
    # A requirement broken by metadata alone (no shadow causes it): a finding of its own.
    make_dist(g.distro_dir, "swsc-stalereq", "1.0", {"swsc_stalereq.py": ""},
              requires=["swsc-stale<1"])
    foreign = g.tmp / "lib" / "python2.7" / "site-packages"
    foreign.mkdir(parents=True)
    env = {"PYTHONPATH": "%s:%s" % (foreign, g.tmp / "missing")}
    reports = []
    proc = g.cli("check", "--python", g.executable, "--json", env=env)
    reports.append(json.loads(proc.stdout))
    # An incomplete deployment, then an orphaned hook.
    runtime = g.local_dir / "sitewarden"
    (runtime / "guard" / "refusal.py").unlink()
    reports.append(json.loads(g.cli("check", "--python", g.executable, "--json").stdout))
    for child in sorted(runtime.rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    runtime.rmdir()
    reports.append(json.loads(g.cli("check", "--python", g.executable, "--json").stdout))
    # A virtual environment of that python.
    venv = g.tmp / "venv"
    subprocess.run([g.executable, "-m", "venv", "--without-pip", str(venv)], env=g.env(),
                   check=True, capture_output=True)
    reports.append(json.loads(g.cli("check", "--python", str(venv / "bin" / "python"),
                                    "--json").stdout))
    for report in reports:
        _json_keys(report, keys)
        for f in report["findings"]:
            kinds.setdefault(f["kind"], set()).update(  # fix, fix_reason: on every finding
                set(f) - {"id", "kind", "severity", "message", "fix", "fix_reason"})
    emitted = {f["kind"] for r in reports for f in r["findings"]}
    assert {"shadowed-module", "stale-metadata", "requirement-violated", "foreign-entry",
            "missing-entry", "orphaned-hook", "externally-managed", "virtualenv",
            "incomplete-deployment"} <= emitted, emitted
    deployments = [d for r in reports for d in r["guard"]["deployments"]]
    assert any(d["missing"] for d in deployments), deployments

    names, rows = _schema()
    undocumented_kinds = sorted(k for k in kinds if k not in rows)
    assert not undocumented_kinds, "finding kinds missing from %s" % SCHEMA_PAGE
    missing_details = sorted((k, d) for k, details in kinds.items() for d in details
                             if "`%s`" % d not in rows[k])
    assert not missing_details, "finding details missing from their kind's row"
    undocumented_keys = sorted(keys - names)
    assert not undocumented_keys, "keys missing from %s" % SCHEMA_PAGE


# ------------------------------------------------------------------ 5. exit statuses


def test_exit_statuses_on_debian(debian_any):
    """0: every target guarded and clean; 1: a target not guarded (status), a finding at
    or above --fail-on (check: medium by default, low counts the guard); the same rule
    with ``--all`` over every python3 of the machine; install 0
    once the guard loads, uninstall 0, 2 when there is nothing to uninstall."""
    ns = debian_any

    def run(*args: str) -> subprocess.CompletedProcess:
        return ns.run([*ns.cli_argv, *args])

    proc = run("status", "--python", ns.executable)
    assert proc.returncode == 1 and "active at startup: no" in proc.stdout, proc.stdout
    # What is lost without it, for every installer, and the command that deploys it.
    proc = run("check", "--python", ns.executable)
    proc.stdout = unwrap_lines(proc.stdout)
    assert ("not loaded at startup of %s: only pip 23+ refuses installs here by itself "
            "(older pips, setuptools and installer do not)" % ns.executable) in proc.stdout
    # The full path, on one line; no sudo for root (a minimal Debian has none).
    printed = re.search(r"`((\S+ -m )?sitewarden install --python %s)`" % re.escape(
        ns.executable), proc.stdout)
    assert printed, proc.stdout
    proc = run("status", "--all")
    assert proc.returncode == 1 and "NOT GUARDED" in proc.stdout, proc.stdout
    # Unguarded is low: check exits 0 by default (--fail-on medium), 1 with --fail-on low.
    assert run("check", "--python", ns.executable).returncode == 0
    assert run("check", "--python", ns.executable, "--fail-on", "low").returncode == 1
    proc = runs_as_printed(ns, printed.group(1))  # the advice, as printed
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run("status", "--python", ns.executable)
    assert proc.returncode == 0, proc.stdout
    proc = run("status", "--all")
    others = "NOT GUARDED" in proc.stdout  # sid: python3.15 beside python3 (3.14)
    assert proc.returncode == (1 if others else 0), proc.stdout
    proc = run("check", "--python", ns.executable)
    assert proc.returncode == 0, proc.stdout
    proc = run("uninstall", "--python", ns.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run("uninstall", "--python", ns.executable)
    assert proc.returncode == 2 and "no sitewarden deployment" in proc.stderr, proc.stderr


def test_exit_statuses_on_the_host(make_hermetic, cli, tmp_path):
    """The rule on hermetic pythons: not guarded where PEP 668 applies is 1 for status
    and check --fail-on low alike (0 for check's default, medium); without a marker an
    unguarded python is 0 for both (check's
    guard-not-active is informational there); an incomplete deployment and an orphaned
    hook are 1 for both; an install whose guard a start would not load is 1;
    errors are 2 (a target that does not exist, options that exclude each other)."""
    hp = make_hermetic(pyenv_interpreters()[-1])
    env = hp.env()
    py = hp.executable

    def statuses(extra: Optional[Dict[str, str]] = None) -> Tuple[int, int]:
        e = dict(env, **(extra or {}))
        return (cli("status", "--python", py, env=e).returncode,
                cli("check", "--python", py, "--fail-on", "low", env=e).returncode)

    assert statuses() == (1, 1)
    assert cli("check", "--python", py, env=env).returncode == 0  # unguarded alone: low
    # Another user than root, who may not write the site directory, is told sudo.
    public = make_guarded(pyenv_interpreters()[-1], deploy=False)  # nobody may traverse it
    try:
        proc = subprocess.run(public.nobody([*CLI, "check", "--python", public.executable,
                                             "--json"]), env=public.env(), text=True,
                              capture_output=True, stdin=subprocess.DEVNULL)
        assert proc.stdout, proc.stderr
        (guard,) = [f for f in json.loads(proc.stdout)["findings"]
                    if f["kind"] == "guard-not-active"]
        assert guard["fix"].startswith("sudo ") and guard["fix"].endswith(
            " install --python %s" % public.executable), guard
    finally:
        public.close()
    bare = make_hermetic(pyenv_interpreters()[-1], marker=None)
    e = bare.env()
    assert (cli("status", "--python", bare.executable, env=e).returncode,
            cli("check", "--python", bare.executable, env=e).returncode) == (0, 0)
    # --user while the user site is off: deployed, but no start loads it.
    no_user = dict(env, PYTHONNOUSERSITE="1")
    proc = cli("install", "--python", py, "--user", env=no_user)
    assert proc.returncode == 1 and "active: no" in proc.stdout, proc.stdout + proc.stderr
    assert statuses({"PYTHONNOUSERSITE": "1"}) == (1, 1)
    assert cli("uninstall", "--python", py, "--user", env=no_user).returncode == 0
    assert cli("install", "--python", py, env=env).returncode == 0
    assert statuses() == (0, 0)
    runtime = hp.local_dir / "sitewarden"
    (runtime / "guard" / "refusal.py").unlink()
    assert statuses() == (1, 1)
    report = json.loads(cli("check", "--python", py, "--json", env=env).stdout)
    assert "incomplete-deployment" in [f["kind"] for f in report["findings"]], report
    for child in sorted(runtime.rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    runtime.rmdir()
    assert statuses() == (1, 1)
    for args in (["status", "--python", str(tmp_path / "nothing")],
                 ["check", "--python", str(tmp_path / "nothing")],
                 ["status", "--all", "--python", py],
                 ["install", "--python", py, "--site-dir", str(tmp_path)]):
        proc = cli(*args, env=env)
        assert proc.returncode == 2 and proc.stderr.startswith("sitewarden: error: "), (
            args, proc.stderr)


def test_help_states_the_exit_status_rule(cli):
    proc = cli("--help")
    assert proc.returncode == 0
    text = proc.stdout
    rule = text[text.index("exit status"):]
    for status in ("0", "1", "2", "130", "141"):
        assert re.search(r"^  %s +\S" % status, rule, re.M), rule
    assert "status: the guard's findings at low or above" in rule
    assert "check's default gate, --fail-on medium" in rule
