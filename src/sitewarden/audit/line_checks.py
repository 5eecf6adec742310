"""Judging startup code without running it, and who may write a ``sys.path`` directory.

Used by :mod:`.inventory` in the probe.  ``check``'s probe starts its target without
``site`` (:data:`STATIC`: the start it describes, emulated): an import line naming a
module that no finder on ``sys.meta_path`` finds fails (``ModuleNotFoundError``, as
``site`` prints it), one that does not compile fails with its ``SyntaxError``; what a
module found would do when imported is not known (it is not run).  After a normal start
(a test's live reference), an import line whose modules are all in ``sys.modules`` ran,
and one naming a module found but not loaded raised while importing it.  A finder's
``find_spec`` runs (every import in this process runs it anyway), no module's code does.
Writability: ``os.stat`` of the directory and each parent, no process.  Module level:
``os`` and ``sys``.
"""

import os
import sys

from .. import _swallowed, pathfacts
from ..facts import private_cache
from ..facts.startup_records import Writers

_W_OTHERS, _W_GROUP, _STICKY = 0o002, 0o020, 0o1000
_ONLY_AST = 0x400  # ast.PyCF_ONLY_AST, without importing ast

#: The emulated normal start this process describes (a ``site_emulation.StaticSite``, set by
#: its ``apply()``), or None: this process was started normally.  Statically, no module
#: of ``sys.modules`` tells what a start imported: they are the probe's own.
STATIC = None


def _loaded(name):
    """The module a start of the target loaded as ``name``: None when the start is
    emulated (:data:`STATIC`), and for sitewarden's own (the probe's, not the target's)."""
    return sys.modules.get(name) if STATIC is None and not _own(name) else None


# ---------------------------------------------------------------- judging, without running


def _walk(node):
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for field in getattr(n, "_fields", ()):
            value = getattr(n, field, None)
            if isinstance(value, list):
                todo.extend(v for v in value if hasattr(v, "_fields"))
            elif hasattr(value, "_fields"):
                todo.append(value)


def _own(name):
    return name == "sitewarden" or name.startswith("sitewarden.")


def _find(name):
    """Does a finder on ``sys.meta_path`` find module ``name``?  (True, False, or None:
    cannot tell.)  A submodule is looked up in its parent's ``__path__`` without
    importing the parent (its code would run)."""
    path = _search_path(name)
    if path is False:
        return False
    spec = _spec(name, path)
    return None if spec is _UNKNOWN else spec is not None


def _search_path(name, standard=False):
    """Where the dotted ``name`` is looked up: None for a top-level name, its parent's
    ``__path__`` (the loaded module's, else its spec's: the parent is not imported), or
    False when the parent is no package or is not found.  ``standard``: as the import
    system's own finders find it (:func:`_spec`), whatever a start loaded."""
    parent = name.rpartition(".")[0]
    if not parent:
        return None
    module = _loaded(parent) if not standard else None
    path = getattr(module, "__path__", None) if module is not None else None
    if path is None and module is None:
        grand = _search_path(parent, standard)  # a nested parent: in its own parent's
        if grand is False:
            return False
        path = getattr(_spec(parent, grand, standard), "submodule_search_locations", None)
    return False if path is None else path


_UNKNOWN = object()


#: The modules of the import system's own finders (``sys.meta_path`` at a start by ``-S``).
_STANDARD = ("_frozen_importlib", "_frozen_importlib_external", "importlib._bootstrap",
             "importlib._bootstrap_external", "zipimport")


#: ``{"specs": {search: its answer}}`` while a check collects (:func:`remember_specs`):
#: judging the lines, following their imports and matching the templates ask the
#: finders for the same names, and each search walks every ``sys.path`` entry (~0.13M
#: instructions on sid's 3.15).  A check is a snapshot: a name is searched once in it.
_memo = {}
_MISSING = object()


def remember_specs():
    """Search each name once (same ``sys.path``, ``sys.meta_path`` and parent path)
    until :func:`forget_specs`."""
    _memo["specs"] = {}


def forget_specs():
    _memo.pop("specs", None)


def _spec(name, path, standard=False):
    """The spec the finders on ``sys.meta_path`` find for ``name`` (``standard``: the
    import system's own finders only, not one startup code installed), True for a built-in
    or frozen module, None, or :data:`_UNKNOWN` (a finder raised, asked again next time)."""
    memo = _memo.get("specs")
    if memo is None:
        return _search(name, path, standard)
    try:
        key = (name, None if path is None else tuple(path), standard, tuple(sys.meta_path),
               tuple(sys.path))
        found = memo.get(key, _MISSING)
    except TypeError:  # a finder or an entry that cannot be a key: searched each time
        return _search(name, path, standard)
    if found is _MISSING:
        found = _search(name, path, standard)
        if found is not _UNKNOWN:
            memo[key] = found
    return found


def _search(name, path, standard):
    imp = sys.modules["_imp"]  # built in, loaded at startup
    if path is None and (imp.is_builtin(name) or imp.is_frozen(name)):
        return True
    for finder in list(sys.meta_path):
        if standard and getattr(finder, "__module__", None) not in _STANDARD:
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(name, path)
        except Exception:
            _swallowed("asking %r for the module %s" % (finder, name))
            return _UNKNOWN
        if spec is not None:
            return spec
    return None


def _module_error(name, unconditional):
    """What importing the dotted ``name`` raised at startup, or None."""
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        mod = ".".join(parts[:i])
        if _loaded(mod) is not None:
            continue
        found = _find(mod)
        if found is False:
            parent = _loaded(".".join(parts[:i - 1])) if i > 1 else None
            if parent is not None and not hasattr(parent, "__path__"):
                return "ModuleNotFoundError: No module named %r; %r is not a package" % (
                    mod, parent.__name__)
            return "ModuleNotFoundError: No module named %r" % mod
        if found and unconditional and not _own(mod) and STATIC is None:
            return ("%s is found but was not loaded by this start: importing it raised an "
                    "exception (run `python -v -c pass` to see it)" % mod)
    return None


def _attr_error(module, attrs):
    """``module 'x' has no attribute 'y'`` when a loaded module lacks ``attrs[0]``."""
    mod = _loaded(module)
    if mod is None or not attrs:
        return None
    try:
        names = vars(mod)
    except TypeError:  # no __dict__: cannot tell
        return None
    if attrs[0] not in names and not hasattr(mod, "__path__"):
        return "AttributeError: module %r has no attribute %r" % (module, attrs[0])
    return None


def line_error(line, memo=None):
    """What ``exec(line)`` of this ``.pth`` import line raises at each start, as CPython
    names it (``ModuleNotFoundError: No module named 'x'``), or None: it compiles, and
    every module it imports by name is loaded, or found (when only conditionally
    imported).  Nothing is run.  ``memo``: a :class:`LineMemo` that may know the line."""
    checks = KNOWN_LINES.get(line.rstrip())
    if checks is None:
        checks = memo.checks(line) if memo is not None else read_line(line)
    if isinstance(checks, str):
        return checks
    for name, unconditional, attrs in checks:
        err = _module_error(name, unconditional) or (
            _attr_error(name, attrs) if attrs is not None else None)
        if err:
            return err
    return None


def read_line(line):
    """:func:`line_imports` of ``line`` (a tuple), or the ``SyntaxError`` it raises, as
    a message."""
    try:
        return tuple(line_imports(line))
    except SyntaxError as exc:
        return "SyntaxError: %s" % (exc.msg,)
    except ValueError as exc:  # a NUL byte
        return "SyntaxError: %s" % (exc,)


class LineMemo(private_cache.Memo):
    """:func:`read_line`'s answers, kept from one check to the next in the probe's private
    cache (:class:`.private_cache.Memo`): reading a line's syntax tree costs a process's
    first ``compile()`` (~10M instructions: CPython builds its syntax-tree types), and a
    machine's checks read the same lines again and again.  The answer depends on the
    line and the interpreter's grammar only: the file is named after the exact version."""

    #: Bumped when what :func:`read_line` answers changes shape or meaning.
    FORMAT = 1
    #: The file's name in the cache: the format, the grammar's exact version.
    NAME = "startup-lines-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)
    answer = staticmethod(read_line)

    @staticmethod
    def valid(verdict):
        return type(verdict) is str or _is_checks(verdict)

    checks = private_cache.Memo.get


def _is_checks(value):
    return type(value) is tuple and all(
        type(c) is tuple and len(c) == 3 and type(c[0]) is str and type(c[1]) is bool
        and (c[2] is None or type(c[2]) is tuple and all(type(a) is str for a in c[2]))
        for c in value)


def line_imports(line):
    """The imports ``exec(line)`` makes, in order, as ``(module, unconditional, the
    attributes it then takes or None)``, read from the line's syntax tree: an ``import``
    statement before anything that may branch is unconditional; ``__import__('x').y``
    anywhere is conditional.  SyntaxError (ValueError for a NUL byte) when it does not
    compile."""
    compile(line, "<string>", "exec", dont_inherit=True)
    tree = compile(line, "<string>", "exec", _ONLY_AST, dont_inherit=True)
    checks, unconditional = [], True
    for stmt in tree.body:
        kind = type(stmt).__name__
        if kind == "Import":
            checks.extend((alias.name, unconditional, None) for alias in stmt.names)
            continue
        if kind == "ImportFrom" and not stmt.level:
            checks.append((stmt.module or "", unconditional, None))
            continue
        for node in _walk(stmt):
            found = _dunder_import(node)
            if found is not None:
                checks.append(found)
        unconditional = False  # anything else may branch: judge only what is certain
    return checks


def _dunder_import(node):
    """``(name, False, attributes)`` of ``__import__('x')`` (or ``__import__('x').y``)
    with a constant name, else None."""
    kind = type(node).__name__
    attrs = []
    while kind == "Attribute":
        attrs.insert(0, node.attr)
        node = node.value
        kind = type(node).__name__
    if kind != "Call" or type(node.func).__name__ != "Name" or node.func.id != "__import__":
        return None
    if not node.args or type(node.args[0]).__name__ != "Constant" \
            or not isinstance(node.args[0].value, str):
        return None
    return node.args[0].value, False, tuple(attrs)


#: What :func:`line_imports` reads from the import line of setuptools'
#: ``distutils-precedence.pth`` (Debian 12, 13 and sid ship it so): a start's first
#: ``compile()`` costs ~10M instructions (CPython builds its syntax-tree types), which a
#: stock system's ``check`` need not pay for it.  ``tests/test_startup_inventory.py``
#: holds the table to :func:`line_imports` on every interpreter.
KNOWN_LINES = {
    "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
    "== 'local'; enabled and __import__('_distutils_hack').add_shim();": [
        ("os", True, None), ("_distutils_hack", False, ("add_shim",)),
        ("_distutils_hack", False, ())],
}


def entry_point_error(text):
    """What ``pkgutil.resolve_name(text, strict=True)`` raises at each start, or None."""
    module, colon, obj = text.partition(":")
    if not (colon and obj and all(p.isidentifier() for p in module.split("."))
            and all(p.isidentifier() for p in obj.split("."))):
        return "ValueError: invalid format: %r" % (text,)
    return _module_error(module, True) or _attr_error(module, obj.split("."))


def customize_file(name):
    """``(file, loaded)`` of ``sitecustomize``/``usercustomize``: the module a start
    imported, or the file it would import (not loaded: it raised; statically, the file
    the emulated start finds, never loaded)."""
    if STATIC is not None:
        return getattr(STATIC, name, None), False
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__file__", None), True
    spec = _spec(name, None)
    origin = getattr(spec, "origin", None) if spec not in (None, True, _UNKNOWN) else None
    if origin and getattr(spec, "has_location", False):
        return origin, False
    return None, False


def module_origin(name):
    """The file module ``name`` is loaded from (a ``.start`` entry point's module), found
    as :func:`_find` finds it, without importing it, or None."""
    module = _loaded(name)
    if module is not None:
        return getattr(module, "__file__", None)
    path = _search_path(name)
    if path is False:
        return None
    spec = _spec(name, path)
    return spec.origin if getattr(spec, "has_location", False) else None


def customize_error(path, read, memo=None):
    """What importing the ``sitecustomize``/``usercustomize`` at ``path`` raised at the
    start (it was not loaded), or, statically, what it raises at every start when it
    does not compile (else None: whether it raises is not known without running it).
    ``read``: its ``(bytes or None, why not)``, from the startup files' one reader
    (``reader.read_bytes``); ``memo``: a :class:`LineMemo`, which knows whether its text
    compiles."""
    data, why = read
    if data is None:
        return "OSError: %s" % why
    if STATIC is not None and memo is not None:
        verdict = memo.checks(data.decode("utf-8", "surrogateescape"))
        return verdict if isinstance(verdict, str) else None
    try:
        compile(data, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return "SyntaxError: %s (line %s)" % (exc.msg, exc.lineno)
    except ValueError as exc:
        return "%s: %s" % (type(exc).__name__, exc)
    if STATIC is not None:
        return None
    return "it raised while importing (run `python -v -c pass` to see it)"


# ---------------------------------------------------------------- who may write


def _stat(path, cache):
    if path not in cache:
        try:
            cache[path] = os.stat(path)
        except (OSError, ValueError):  # missing, not searchable, or a NUL in a .pth line
            cache[path] = None
    return cache[path]


def _scope(st, euid):
    if st.st_uid not in (euid, 0) or st.st_mode & _W_OTHERS:
        return "others"
    if st.st_mode & _W_GROUP:
        return "group"
    return None


def writers(path, euid, cache):
    """Who besides user ``euid`` (and root) may change the directory ``path`` (links
    resolved): write into it, create it (missing: its nearest parent), or rename it or a
    parent (through a parent's write permission, unless that parent is sticky and the
    child belongs to ``euid`` or root).  The worst :class:`Writers`, or None."""
    d = pathfacts.real(path)
    how = "write"
    while _stat(d, cache) is None:
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d, how = parent, "create"
    worst, child = None, None
    while True:
        st = _stat(d, cache)
        if st is None:
            return worst  # a parent that cannot be searched: the child was stat'ed anyway
        cst = _stat(child, cache) if child else None
        if child is None or not (st.st_mode & _STICKY and cst is not None
                                 and cst.st_uid in (euid, 0)):
            scope = _scope(st, euid)
            if scope and (worst is None or (scope == "others" and worst.scope == "group")):
                worst = Writers(scope, d, how if child is None else "rename", st.st_mode & 0o7777,
                                st.st_uid, st.st_gid)
        parent = os.path.dirname(d)
        if parent == d:
            return worst
        child, d = d, parent


def file_writers(path, euid):
    """Who besides user ``euid`` (and root) may change the file ``path`` itself (its
    directory's writers are ``writers``'): a :class:`Writers` (``how``: ``edit``), or
    None."""
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return None
    scope = _scope(st, euid)
    if not scope:
        return None
    return Writers(scope, path, "edit", st.st_mode & 0o7777, st.st_uid, st.st_gid)


def severity_of(w, euid):
    if w.scope == "others":
        return "high" if euid == 0 else "medium"
    return "medium" if euid == 0 else "low"


def writers_text(entry, w, euid):
    what = {"write": "can put a module in it",
            "create": "can create it (it is missing) and put a module in it",
            "rename": "can rename it away (through %s) and put another in its place" % w.via}
    mode = "mode %04o" % w.mode
    runs_as = "this interpreter, run as root," if euid == 0 else "this interpreter's user"
    return ("%s %s: %s is %s (%s): they %s that %s imports; make %s writable by its owner "
            "only (chmod go-w %s) or take it off sys.path" % (
                w.who(), "may change " + entry, w.via,
                "group-writable" if w.scope == "group" else
                "world-writable" if w.mode & _W_OTHERS else "owned by user %d" % w.uid,
                mode, what[w.how], runs_as, w.via, w.via))
