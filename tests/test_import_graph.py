"""The package's import graph (issue 10): no cycle between sitewarden's modules.

Module-level imports are what Python runs at import time, so a cycle there can leave a
half-initialised module behind; function-local ones are counted too, because a cycle of
either kind means two modules that cannot be understood, or moved, one without the other.
The graph is read from the source (an AST walk), the vendored ``packaging`` left out; so
are the function-local imports, which must stay few and say why on their line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sitewarden

PACKAGE = Path(sitewarden.__file__).resolve().parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "_vendor" not in p.parts and "_hooks" not in p.parts}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    """sitewarden module -> the sitewarden modules it imports (anywhere in its source)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                targets = [base + "." + alias.name for alias in node.names] + [base]
            for target in targets:
                # ``from . import x`` names a module; ``from .x import y`` names x.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                # A module's own packages are imported before it anyway: no edge.
                if target and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle as a list of modules (first == last), or [] when there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_graph_is_read():
    graph = import_graph()
    assert "sitewarden.cli.main" in graph and graph["sitewarden.cli.main"], graph


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


#: Function-local imports are the exception, each with its reason.  Importing the
#: fail-open helper inside an ``except`` block is the one sanctioned pattern (a startup
#: module must not load it before a failure): those are not counted.
LOCAL_IMPORT_BUDGET = 70  # 63: startup_report, for an install the guard lets through;
# 64, 65: layout.pth_entries and distinfo.pth_paths read .pth files with facts.reader;
# 66, 67: failopen in emit and _watch, to say what silenced a warning;
# 68, 69: facts.records: hashlib for finding ids, time for the report's time, on the
# CLI's side only (the probe's report has none); 70: audit.modules, tokenize for a module
# that declares its encoding
FAIL_OPEN_NAMES = ("failopen", "_swallowed")


def _function_local_imports():
    found = []
    for path in _modules().values():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for fn in ast.walk(ast.parse(source)):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.extend((path, node.lineno, lines[node.lineno - 1])
                             for node in ast.walk(fn)
                             if isinstance(node, (ast.Import, ast.ImportFrom)))
    return sorted(set(found))


def test_function_local_imports_are_few_and_say_why():
    found = _function_local_imports()
    counted = [f for f in found if not any(n in f[2] for n in FAIL_OPEN_NAMES)]
    assert counted and len(counted) <= LOCAL_IMPORT_BUDGET, len(counted)
    silent = ["%s:%d: %s" % (p.relative_to(PACKAGE.parent), n, line.strip())
              for p, n, line in found if "#" not in line]
    assert not silent, "function-local imports without a reason comment:\n" + "\n".join(silent)


def _in_cli(module: str) -> bool:
    """Is ``module`` the command line's (``cli/`` or ``__main__``, which only the CLI runs)?"""
    return module in ("sitewarden.__main__", "sitewarden.cli") or module.startswith(
        "sitewarden.cli.")


def test_nothing_outside_cli_imports_the_cli():
    """The arrows point down: the runtime, the guards and detection (which runs inside a
    target, from the probe) never import ``cli/``, at module level or in a function, nor
    by a name written as a string (``__import__("sitewarden." + name)``); the CLI may
    import them."""
    graph = import_graph()
    upward = ["%s -> %s" % (name, target) for name, targets in sorted(graph.items())
              if not _in_cli(name) for target in sorted(targets) if _in_cli(target)]
    cli = {name for name in graph if _in_cli(name)}
    # Dotted names only: "cli" or "__main__" alone name no module of sitewarden's.
    named = cli | {name.partition(".")[2] for name in cli if name.count(".") > 1}
    for name, path in _modules().items():
        if _in_cli(name):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in named:
                upward.append("%s -> %r (line %d)" % (name, node.value, node.lineno))
    assert not upward, "imports of the CLI from outside cli/:\n" + "\n".join(upward)


#: The most lines a module of sitewarden's may have: past it, a module holds more than one
#: concern, and is split by concern (``cli/deploy``: ``fileops``, ``bytecode``,
#: ``sitecustomize_block``; ``facts/distinfo``: ``distribution``, ``metadata``).
MAX_MODULE_LINES = 600


def test_no_module_is_over_600_lines():
    long = ["%s: %d lines" % (path.relative_to(PACKAGE.parent), n)
            for path in sorted(PACKAGE.rglob("*.py")) if "_vendor" not in path.parts
            for n in [len(path.read_text(encoding="utf-8").splitlines())]
            if n > MAX_MODULE_LINES]
    assert not long, "modules over %d lines (split them by concern):\n%s" % (
        MAX_MODULE_LINES, "\n".join(long))


#: The floors, lowest first: a package imports only packages on lower floors and the
#: top-level startup modules (the runtime's own ground: ``sitewarden``, ``pathfacts``,
#: ``settings``, ``failopen``, ``_stdlib_names``), never one above or beside it.
FLOORS = ("facts", "detect", "audit", "probe", "guard", "cli")
GROUND = {"sitewarden", "sitewarden.pathfacts", "sitewarden.settings", "sitewarden.failopen",
          "sitewarden._stdlib_names", "sitewarden._vendor", "sitewarden.api"}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in FLOORS) else ""


def test_every_import_points_down_a_floor():
    """The ground floor of facts, the products above it: no package imports one on its
    own floor or above it (module-level and function-local imports alike), so no two
    packages import each other."""
    graph = import_graph()
    upward = []
    for importer, targets in graph.items():
        here = _package(importer)
        for target in targets:
            there = _package(target)
            if here in FLOORS and there in FLOORS and there != here and \
                    FLOORS.index(there) > FLOORS.index(here):
                upward.append("%s -> %s" % (importer, target))
            elif here in FLOORS and not there and target not in GROUND and \
                    not target.startswith("sitewarden._vendor"):
                upward.append("%s -> %s (a top-level module that is not ground)" % (
                    importer, target))
            elif not here and importer in GROUND and there:
                upward.append("%s -> %s (the ground imports a product)" % (importer, target))
    assert not upward, "imports that do not point down:\n" + "\n".join(sorted(upward))
