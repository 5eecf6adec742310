"""What each piece of startup code ``check`` lists does, read, never run.

Each import line, entry point, ``sitecustomize`` and ``usercustomize`` gets its
``capabilities`` and ``evidence`` (:mod:`.capabilities`), an import line also those of the
modules it imports (their source, located without running them; one level into the
modules each imports from its own site directory).  A line that would change the import
system when it runs is noted "not applied by check" (the emulated start left it out).
Runs in ``check``'s probe; module level: ``os``, ``sys`` and sitewarden's modules.
"""

import os
import sys

from .. import pathfacts
from ..probe import private_cache
from . import capabilities, line_checks


def source(path):
    """The text of the module file ``path`` (a ``.py`` file up to :data:`capabilities.MAX_TEXT`), or
    None."""
    if not path or not path.endswith(".py"):
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(capabilities.MAX_TEXT + 1)
    except OSError:
        return None
    if len(data) > capabilities.MAX_TEXT:
        return None
    return data.decode("utf-8", "replace")


def annotate(files, directory=None, lines=None):
    """Set ``capabilities`` and ``evidence`` of each startup line that runs code (an
    import line, with the modules it imports; an entry point: its module's file) and of
    each ``sitecustomize`` and ``usercustomize`` (the whole module); left None when there
    are none.  ``lines``: the check's :class:`.line_checks.LineMemo`."""
    memo = capabilities.Memo(directory)
    module_memo = ModuleMemo(directory)
    for f in files:
        if f.file_type or f.size is not None:
            continue
        if f.kind in ("sitecustomize", "usercustomize") and f.capabilities is None:
            text = source(f.realpath) if (f.realpath or "").endswith(".py") \
                else source(f.path)
            found = memo.analyse(text) if text is not None else ()
            f.capabilities = [name for name, _e in found] or None
            f.evidence = capabilities.evidence(found) or None
        for line in f.lines:
            if line.kind not in ("import", "entry-point") or line.runs is False \
                    or line.capabilities is not None:
                continue
            if line.kind == "import":
                found = memo.analyse(line.text)
                modules = [name for name, _u, _a in _line_imports(line.text, lines)]
            else:
                found, modules = (), [line.text.partition(":")[0]]
            line.module_files = []
            found = _merged(found, _modules_found(modules, module_memo, line.module_files))
            line.capabilities = [name for name, _e in found] or None
            line.evidence = capabilities.evidence(found) or None
    memo.save()
    module_memo.save()


#: How many modules a line's analysis reads: those it imports, and one level into theirs.
MAX_MODULES = 8


def _line_imports(text, lines=None):
    checks = lines.checks(text) if lines is not None else line_checks.read_line(text)
    return checks if not isinstance(checks, str) else ()


def _modules_found(names, memo, modules):
    """What the modules ``names`` (imported by a startup line) do, read from their source
    (located without running them), and one level into the modules each imports from the
    same site directory: ``analyse``'s form, each evidence naming its module.  Standard
    library modules are not read; the files read are appended to ``modules``."""
    out, seen, todo = [], set(), [(name, 0) for name in names]
    stdlib = pathfacts.stdlib_dir()
    while todo and len(seen) < MAX_MODULES:
        name, level = todo.pop(0)
        origin = line_checks.module_origin(name)
        if not origin or origin in seen or not origin.endswith(".py") or (
                stdlib and origin.startswith(os.path.join(stdlib, "")) and
                "-packages" not in origin[len(stdlib):]):
            continue
        seen.add(origin)
        text = source(origin)
        if text is None:
            continue
        modules.append(origin)
        found, imported, mapping = memo.get(text)
        MAPPINGS[origin] = dict(mapping)
        out.extend((cap, tuple("%s (in %s)" % (e, name) for e in evidence))
                   for cap, evidence in found)
        if level == 0:
            site = _site_of(origin, name)
            todo.extend((sub, 1) for sub in imported
                        if sub != name and _under(line_checks.module_origin(sub), site))
    return tuple(out)


def _site_of(origin, name):
    """The directory ``name`` (dotted) was found in, from its file ``origin``."""
    depth = name.count(".") + (os.path.basename(origin) == "__init__.py")
    d = os.path.dirname(origin)
    for _ in range(depth):
        d = os.path.dirname(d)
    return d


def _under(path, directory):
    return bool(path) and path.startswith(os.path.join(directory, ""))


#: The ``MAPPING`` of each module file a line's analysis read (an editable install's finder).
MAPPINGS = {}


class ModuleMemo(private_cache.Memo):
    """A module's ``(capabilities.analyse, the module names it imports, its MAPPING
    literal's items)``, kept from one check to the next (:class:`.private_cache.Memo`):
    each needs its syntax tree, and a process's first ``compile()`` is costly."""

    FORMAT = 2
    NAME = "startup-modules-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)

    @staticmethod
    def answer(text):
        try:
            tree = compile(text, "<module>", "exec", line_checks._ONLY_AST,
                           dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            tree = None
        return (capabilities.analyse(text), tuple(sorted(_imported_names(tree))),
                tuple(sorted(_mapping(tree).items())))

    @staticmethod
    def valid(value):
        return type(value) is tuple and len(value) == 3 and capabilities.Memo.valid(
            value[0]) and type(value[1]) is tuple and all(type(n) is str for n in value[1]) \
            and type(value[2]) is tuple and all(
                type(i) is tuple and len(i) == 2 and type(i[0]) is str and type(i[1]) is str
                for i in value[2])


def _imported_names(tree):
    """The absolute module names the syntax ``tree`` imports anywhere (``import``,
    ``from``); none for None (code that does not compile)."""
    if tree is None:
        return set()
    names = set()
    for node in line_checks._walk(tree):
        kind = type(node).__name__
        if kind == "Import":
            names.update(alias.name for alias in node.names)
        elif kind == "ImportFrom" and not node.level and node.module:
            names.add(node.module)
    return names


def _merged(*founds):
    """``analyse`` answers merged, in :data:`capabilities.NAMES` order."""
    merged = {}
    for found in founds:
        for name, evidence in found:
            merged.setdefault(name, []).extend(e for e in evidence
                                               if e not in merged.get(name, ()))
    return tuple((n, tuple(merged[n])) for n in capabilities.NAMES if n in merged)


def not_applied(files):
    """Note each line that would change the import system when it runs: the emulated start
    ``check`` describes (:mod:`..probe.static_check`) leaves it out.  An editable install's finder
    line names the mapping its finder module holds (read from its syntax tree)."""
    for f in files:
        for line in f.executable():
            what = None
            if f.template == "editable install finder":
                module = line.text[len("import "):].partition(";")[0].strip()
                mapping = MAPPINGS.get(line_checks.module_origin(module)) or {}
                what = "installs a finder for %s" % (", ".join(
                    "%s -> %s" % item for item in sorted(mapping.items())) or "its modules")
            else:
                shown = [e for e in line.evidence or () if e.startswith("changes-import-system")]
                if shown:
                    text = " ".join(shown)
                    what = "changes %s" % ("sys.meta_path" if "meta_path" in text else
                                           "sys.path" if "path" in text or "addsitedir" in text
                                           else "the import system")
            if what:
                said = "%s when it runs: not applied by check" % what
                line.note = said if not line.note else "%s; %s" % (line.note, said)


def _mapping(tree):
    """The ``MAPPING`` literal of a module's syntax ``tree`` (setuptools' editable finder
    ``__editable___*_finder.py``): ``{name: directory}``, {} when it holds none."""
    for node in getattr(tree, "body", ()):
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        value = getattr(node, "value", None)
        if any(getattr(t, "id", None) == "MAPPING" for t in targets) and \
                type(value).__name__ == "Dict":
            items = [(getattr(k, "value", None), getattr(v, "value", None))
                     for k, v in zip(value.keys, value.values)]
            return {k: v for k, v in items if isinstance(k, str) and isinstance(v, str)}
    return {}
