"""``check``'s report on a target started without ``site``: nothing it audits runs.

The ``static`` probe starts the target with ``-S`` (``probe.STATIC_BOOTSTRAP``): no
``.pth`` import line, ``.start`` entry point, ``sitecustomize`` or ``usercustomize``
runs, nor anything they import.  :func:`report` imports the target's ``site`` (under
``-S`` its ``main()`` does not run), rebuilds what a normal start would make of
``sys.path``, the prefixes and the user site (:mod:`..audit.site_emulation`), makes this process
look like it, and collects the report as after a normal start (:mod:`.check`).  Whether
that start would load the guard (what ``status`` learns by starting the target) is read
from the startup files that would run: :func:`guard_loaded`.  Module level: ``os``,
``sys`` and sitewarden's modules.
"""

import os
import sys

from .. import _swallowed
from ..audit import inventory, line_checks, site_emulation
from ..facts import reader
from . import check

#: The module the guard's hooks import, and the entry point they call.
GUARD = "sitewarden"
GUARD_ENTRY_POINT = "sitewarden:activate"
#: ``hooks/sitewarden.pth``'s line: it imports the guard only where its runtime is readable.
HOOK_LINE = ("import os; os.access(sitedir + '/sitewarden/__init__.py', 4) and "
             "__import__('sitewarden')")


def report(path, path0, facts, sections=None, pins=False):
    """``{"facts", "check", "startup"}`` of a normal start of this ``-S`` process's
    interpreter, emulated: ``path``, the ``sys.path`` ``site`` would start from (no
    ``-c`` entry); ``path0``, that entry or None; ``facts``, the probe's facts function
    (run once the start is emulated); ``sections``: the report's sections to collect
    (None: all); ``pins``: each finding an acknowledgement lifts carries the word that
    would (``sitewarden acknowledge``'s probe)."""
    import site  # the target's, from its standard library (probe._StdlibFirst); -S: no main()

    static = site_emulation.emulate(site, path=path, path0=path0)
    static.apply()
    data = facts().as_json()
    inventory.PIN_ALL = pins
    collected = check.collect(sections)
    section = collected.section("startup")
    return {"facts": data, "check": collected.as_json(),
            "startup": guard_loaded(section.files if section else [], static.path)}


def guard_loaded(files, path):
    """What a normal start would load of the guard, in ``STATUS_SCRIPT``'s terms
    (``active``, ``module_file``, ``version``): the first startup file, in ``site``'s
    order, whose code would run and import ``sitewarden`` (its module found on ``path``,
    ``sys.path`` while ``site`` runs).  Importing it while ``site`` runs activates the
    guard (``sitewarden/__init__``); the command's ``SITEWARDEN_DISABLE`` is not the
    target's (both commands report it apart)."""
    for f in files:
        if not _imports_guard(f):
            continue
        origin = _module_file(path)
        if origin is not None:
            return {"active": True, "module_file": origin, "version": _version(origin)}
    return {"active": False, "module_file": None, "version": None}


def _imports_guard(f):
    if f.kind in ("sitecustomize", "usercustomize"):
        return not f.error and GUARD in _source_imports(f.realpath)
    for line in f.executable():
        if line.error:
            continue
        if line.kind == "entry-point":
            if line.text.partition(":")[0].split(".")[0] == GUARD:
                return True
        elif line.text.strip() == HOOK_LINE:
            if os.access(os.path.join(f.site_dir or "", GUARD, "__init__.py"), os.R_OK):
                return True
        elif GUARD in _source_imports(None, line.text):
            return True
    return False


def _source_imports(path, text=None):
    """The top-level names of every module the code at ``path`` (or ``text``) imports
    anywhere in it (``import``, ``from``, ``__import__('name')``), from its syntax tree;
    empty when it cannot be read (:func:`..facts.reader.read_bytes`) or compiled.  Only
    code that names the guard is compiled (a process's first ``compile()`` costs ~10M
    instructions)."""
    if text is None:  # a sitecustomize: read by the startup files' one reader
        text = reader.read_bytes(path)[0] if isinstance(path, str) else None
        if text is None:
            return set()
    if (GUARD.encode() if isinstance(text, bytes) else GUARD) not in text:
        return set()
    try:
        tree = compile(text, path or "<string>", "exec", line_checks._ONLY_AST,
                       dont_inherit=True)
    except (SyntaxError, ValueError):
        return set()
    names = set()
    for node in line_checks._walk(tree):
        kind = type(node).__name__
        if kind == "Import":
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif kind == "ImportFrom" and not node.level and node.module:
            names.add(node.module.split(".")[0])
        elif kind == "Call" and getattr(node.func, "id", None) == "__import__" and node.args \
                and type(node.args[0]).__name__ == "Constant" \
                and isinstance(node.args[0].value, str):
            names.add(node.args[0].value.split(".")[0])
    return names


def _module_file(path):
    """The file ``import sitewarden`` loads on ``path`` (the path-based finder's answer),
    or None."""
    finder = sys.modules["_frozen_importlib_external"].PathFinder  # loaded at startup
    try:
        spec = finder.find_spec(GUARD, list(path))
    except Exception:  # a path hook that fails: the guard is not found
        _swallowed("looking for the guard's module on the emulated sys.path")
        spec = None
    return getattr(spec, "origin", None) if getattr(spec, "has_location", False) else None


def _version(origin):
    """``__version__`` as ``sitewarden/__init__.py`` at ``origin`` assigns it, or None."""
    text = reader.read_text(origin)[0] if isinstance(origin, str) else None
    for line in (text or "").splitlines():
        if line.startswith("__version__ = "):
            value = line.partition("=")[2].strip()
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                return value[1:-1]
            return None
    return None
