"""Startup is sacred: what runs at every start imports only os and sys at module level.

The tree says where code runs (docs/architecture.md): the top-level modules
run at every interpreter start and import only ``os`` and ``sys`` at module
level; ``guard/``, ``detect/`` and ``api/`` run inside a guarded process once an
installer, a shadow candidate or a probe needs them, and may also import their
sibling modules at module level (never other libraries: those are deferred to
first use and bounded by the ``sys.modules`` tests); ``cli/`` runs in the
command's own process.  An AST walk holds every module to its rule, so a lint
autofix or a typing pass cannot quietly add ``contextlib`` or ``typing`` to
startup, as happened to virtualenv and setuptools.
"""

import ast
import json
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "sitewarden"

#: Modules that only ever run in the CLI process, never inside a guarded interpreter.
CLI_PACKAGES = {"cli", "__main__"}

#: Folders whose modules run inside a guarded process, but never at every start.
ON_DEMAND_PACKAGES = {"facts", "guard", "detect", "audit", "probe", "api"}

ALLOWED = {"os", "sys"}

#: guard/ runs once an installer is imported, which has loaded these already (``stat``
#: comes with ``os``): the install report needs json and subprocess before pip 26.3,
#: which refuses new imports once it installs, so they come with the guard's modules.
INSTALLER_ALLOWED = {"stat", "json", "subprocess"}

#: A startup module may import another at module level only where every start that loads
#: it loads the other anyway: ``_watch.started`` asks ``pathfacts`` at every start.
STARTUP_SIBLINGS = {"_watch.py": {".pathfacts"}}

#: The ground floor may name ``stat``, which ``os`` itself imports: free wherever it runs.
FACTS_ALLOWED = {"stat"}


def runtime_modules():
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] in ("_vendor", "_hooks"):
            continue
        name = ".".join(rel.with_suffix("").parts)
        if rel.parts[0].replace(".py", "") not in CLI_PACKAGES:
            out.append(pytest.param(path, id=name))
    return out


def module_level_imports(tree):
    """Imports executed when the module is imported (not inside functions/classes)."""
    found = []

    def visit(nodes):
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend((a.name, node.lineno) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                mod = "." * node.level + (node.module or "")
                found.append((mod, node.lineno))
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    for child in getattr(node, field, []) or []:
                        visit(child.body if isinstance(child, ast.ExceptHandler) else [child])

    visit(tree.body)
    return found


def test_runtime_modules_found():
    names = {p.id for p in runtime_modules()}
    assert {"__init__", "settings", "facts.marker", "detect.shadowing"} <= names


def startup_modules():
    return [p for p in runtime_modules() if len(p.values[0].relative_to(SRC).parts) == 1]


def test_top_level_is_what_runs_at_every_start():
    """A newcomer reads from the tree which modules run at every start: the top level
    (and ``failopen``, which any of them may need while starting, when one fails)."""
    assert {p.id for p in startup_modules()} == {
        "__init__", "_watch", "pathfacts", "settings", "_stdlib_names", "failopen"}
    for package in (CLI_PACKAGES | ON_DEMAND_PACKAGES) - {"__main__"}:
        init = SRC / package / "__init__.py"
        body = ast.parse(init.read_text(encoding="utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(
            body[0].value, ast.Constant), "%s holds its docstring (its floor), no code" % init


def test_every_module_named_by_a_string_resolves():
    """``HOOKS`` is the one table of the installers' modules, each -> ``"hook [starts]
    [entry ...]"``: its hooks (and ``STARTED_HOOKS``) name code, its entries name a
    method (``Class.method``) or a function, and the installers importable here (pip,
    ensurepip) have them.  Detection adds callables at run time only."""
    import importlib

    import sitewarden

    def resolves(target):
        module, _, function = target.partition(":")
        return callable(getattr(importlib.import_module("sitewarden." + module), function))

    assert all(resolves(target) for target in sitewarden.STARTED_HOOKS)
    assert sitewarden.HOOKS and all(isinstance(v, str) for v in sitewarden.HOOKS.values())
    starting = []
    for watched, value in sitewarden.HOOKS.items():
        target, *entries = value.split()
        assert resolves(target), (watched, target)
        if entries[:1] == ["starts"]:
            entries = entries[1:]
            starting.append(watched)
            assert entries, "%s starts an install: what does a damaged runtime disarm?" % watched
        for entry in entries:
            owner, _, name = entry.rpartition(".")
            assert name.isidentifier() and (not owner or owner.isidentifier()), (watched, entry)
            if watched.partition(".")[0] in ("pip", "ensurepip") and _findable(watched):
                module = importlib.import_module(watched)
                assert callable(getattr(getattr(module, owner) if owner else module, name)), (
                    watched, entry)
    assert "ensurepip" in starting and "distutils.command.install" not in starting  # for paths


def _findable(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a parent package is missing (pip 9's layout)
        return False


@pytest.mark.parametrize("path", runtime_modules())
def test_module_level_imports_are_os_and_sys_only(path):
    """Startup modules: os and sys.  On-demand modules: os, sys and sitewarden's own
    modules (relative imports); guard/ also what every installer has loaded."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(SRC).parts[0]
    on_demand = package in ON_DEMAND_PACKAGES
    allowed = ALLOWED | (INSTALLER_ALLOWED if package == "guard" else
                         FACTS_ALLOWED if package == "facts" else
                         STARTUP_SIBLINGS.get(package, set()))
    bad = [(m, line) for m, line in module_level_imports(tree)
           if m not in allowed and not (on_demand and m.startswith("."))]
    assert not bad, "%s imports at module level: %s (defer them into functions)" % (
        path.name, bad)


@pytest.mark.parametrize("path", runtime_modules())
def test_runtime_is_python38_syntax(path):
    ast.parse(path.read_text(encoding="utf-8"), feature_version=(3, 8))


def test_startup_module_creates_no_class():
    """Creating a class is a third of what a start pays for a small module: the
    startup module is its own finder (module-level ``find_spec``), and the public
    classes load lazily (PEP 562)."""
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    assert not [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    import sitewarden

    assert callable(sitewarden.find_spec) and sitewarden._sitewarden_finder is True
    assert sitewarden.ShadowWarning.__module__ == "sitewarden"
    assert sitewarden.deactivate.__module__ == "sitewarden.api.activation"
    with pytest.raises(AttributeError):
        sitewarden.invalidate_caches  # noqa: B018 (importlib probes it with hasattr)


def test_hooks_only_touch_os_before_deciding():
    pth = (SRC.parent.parent / "hooks" / "sitewarden.pth").read_text()
    lines = [line for line in pth.splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith("import os;")
    # The runtime's presence is checked before it is imported (an orphaned .pth is
    # silent); every token of the line is compiled at every start, so it says no more.
    assert lines[0].index("/sitewarden/__init__.py") < lines[0].index("__import__('sitewarden')")
    assert len(lines[0]) <= 125  # measured: benchmarks/run --only startup
    start = (SRC.parent.parent / "hooks" / "sitewarden.start").read_text().split()
    from sitewarden import ENTRY_POINT

    assert start == [ENTRY_POINT] == ["sitewarden:activate"]  # the name never changes


def test_vendored_packaging_does_not_import_tags(tmp_path):
    """Parsing a requirement in the deployed runtime must not pull in packaging.tags
    (logging, subprocess, platform): it runs when a shadowed import is reported."""
    import subprocess
    import sys

    from sitewarden.cli import payload

    payload.write_tree(tmp_path, payload.runtime_files())
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from sitewarden._vendor.packaging.requirements import Requirement\n"
        "from sitewarden._vendor.packaging.utils import parse_wheel_filename\n"
        "r = Requirement('pyparsing (!=3.0.1,<4) ; python_version > \"3.0\"')\n"
        "assert r.specifier.contains('3.0.9') and not r.specifier.contains('3.0.1')\n"
        "assert 'sitewarden._vendor.packaging.tags' not in sys.modules\n"
        "assert 'logging' not in sys.modules and 'subprocess' not in sys.modules\n"
        "assert parse_wheel_filename('six-1.17.0-py2.py3-none-any.whl')[0] == 'six'\n"
        % str(tmp_path)
    )
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_startup_module_holds_no_other_module():
    """The finder (the ``sitewarden`` module) stays alive on ``sys.meta_path`` until
    the interpreter's very end; a module it holds (``os``) stays alive with it and is
    torn down the slow way: measured +0.3M instructions at every exit on Debian's 3.11.
    So ``__init__`` imports ``sys`` only, and ``activate`` reads the environment
    without keeping ``os``."""
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    assert [m for m, _ in module_level_imports(tree)] == ["sys"]


def test_imported_after_startup_does_not_activate():
    """The module activates itself only while ``site`` runs (the ``.pth`` line imports
    it then); a program, the CLI or a test importing it later gets no finder until it
    calls ``activate()``."""
    import subprocess
    import sys

    code = ("import sys, sitewarden as s; a = s in sys.meta_path; s.activate(); "
            "print(a, s in sys.meta_path, [k for k, v in vars(s).items() "
            "if type(v) is type(sys) and k != 'sys'])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split(None, 2)[:2] == ["False", "True"]
    assert proc.stdout.split(None, 2)[2].strip() == "[]"


#: Every module the first shadowed import loads in a hermetic guarded interpreter
#: (3.13): sitewarden's own (any version), and the standard library's, including what
#: showing a warning loads.  Adding an import to ``detect/`` changes it, deliberately:
#: ``_sha2`` (built in) hashes the finding's id that the warning's fix names.
FIRST_SHADOW_SITEWARDEN = {
    "sitewarden._watch", "sitewarden.api", "sitewarden.api.categories", "sitewarden.detect",
    "sitewarden.detect.cases", "sitewarden.facts.distinfo", "sitewarden.facts.distribution",
    "sitewarden.detect.emit",
    "sitewarden.detect.layout", "sitewarden.facts.metadata",
    "sitewarden.facts.records", "sitewarden.detect.shadowing", "sitewarden.detect.specs",
    "sitewarden.facts", "sitewarden.facts.text",
    "sitewarden.facts.marker", "sitewarden.pathfacts", "sitewarden.settings"}
FIRST_SHADOW_STDLIB = {
    (3, 13): {"_collections", "_sha2", "_sysconfigdata__linux_x86_64-linux-gnu", "_weakrefset",
              "itertools", "sysconfig", "threading", "types", "warnings"},
}


def test_first_shadowed_import_loads_a_fixed_set(guarded):
    from harness import make_dist

    g = guarded()
    make_dist(g.distro_dir, "six", "1.16.0", {"six.py": ""}, kind="egg-info")
    make_dist(g.distro_dir, "httplib2", "0.20.4", {"httplib2/__init__.py": ""},
              requires=["six (>=1.16)"])
    make_dist(g.local_dir, "six", "1.17.0", {"six.py": ""}, installer="pip")
    proc = g.python("-c", "import sys; before = set(sys.modules); import six; "
                          "print(' '.join(sorted(set(sys.modules) - before - {'six'})))")
    assert proc.returncode == 0 and "ShadowWarning" in proc.stderr, proc.stderr
    loaded = set(proc.stdout.split())
    assert {m for m in loaded if m.startswith("sitewarden")} == FIRST_SHADOW_SITEWARDEN
    stdlib = FIRST_SHADOW_STDLIB.get(tuple(g.version[:2]))
    if stdlib is not None:
        assert {m for m in loaded if not m.startswith("sitewarden")} == stdlib
# ------------------------------------------------------------------ inside an installer

#: sitewarden's modules loaded when a refused ``pip install`` prints its refusal:
#: the startup modules, `guard.hooked` (the spec and damage check), and the guard's modules
#: pip's hooks import (with `facts.records`: the install report reads its records, and
#: `facts.text`, which fits its lines to a screen).
REFUSED_PIP_LOADS = {
    "sitewarden", "sitewarden._watch", "sitewarden.pathfacts", "sitewarden.settings",
    "sitewarden.guard", "sitewarden.guard.hooked", "sitewarden.guard.patching",
    "sitewarden.guard.pip_guard", "sitewarden.guard.policy", "sitewarden.guard.refusal",
    "sitewarden.guard.scheme_guard", "sitewarden.facts.marker",
    "sitewarden.guard.install_report", "sitewarden.facts", "sitewarden.facts.records",
    "sitewarden.facts.text",
}

#: Run in the guarded interpreter: pip's command line, with sys.modules noted at the
#: first write of the refusal.
REFUSED_PIP = """\
import json, runpy, sys
seen = []
class Stderr:
    def __init__(self, stream):
        self.stream = stream
    def write(self, text):
        if not seen and "externally-managed-environment" in text:
            seen.append(sorted(m for m in sys.modules if m.split(".")[0] == "sitewarden"))
        return self.stream.write(text)
    def __getattr__(self, name):
        return getattr(self.stream, name)
sys.stderr = Stderr(sys.stderr)
sys.argv = ["pip", "install", "--no-index", "six"]
try:
    runpy.run_module("pip", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    print(json.dumps({"status": exc.code, "loaded": seen[0] if seen else None}))
"""


def test_refused_pip_install_loads_a_fixed_set_of_guard_modules(make_hermetic, tmp_path):
    """A refused ``pip install`` loads exactly :data:`REFUSED_PIP_LOADS` of sitewarden
    by the time its refusal is printed (no ``detect/``, no CLI, no ``api/``)."""
    import subprocess
    import sys

    from harness import pip_dir, pip_versions_for, pyenv_interpreters

    interp = pyenv_interpreters()[-1]
    hp = make_hermetic(interp)
    proc = subprocess.run([sys.executable, "-m", "sitewarden", "install", "--python",
                           hp.executable], env=hp.env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    script = tmp_path / "refused_pip.py"
    script.write_text(REFUSED_PIP)
    script.chmod(0o644)
    tmp_path.chmod(0o755)
    pip = pip_dir(pip_versions_for(interp.version)[-1])
    proc = hp.python(str(script), env={"PYTHONPATH": str(pip)})
    assert "externally-managed-environment" in proc.stderr, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == 1
    assert set(result["loaded"]) == REFUSED_PIP_LOADS
