"""The module files startup code imports, found and read as the import system would load
them, never run.

A module name is looked up as :mod:`.line_checks` looks it up (the finders on
``sys.meta_path``, a submodule through its parent's ``__path__``, no parent imported), and
what would run is read: a source file, or the ``__pycache__`` bytecode the import system
would use instead of it (its header valid for the source: timestamp and size, or a
PEP 552 hash, checked or not), compared with the source (compiled, never run; the verdict
kept per texts by :class:`PycMemo`).  What cannot be read is said, never passed over: a
compiled extension, a sourceless module, bytecode that is not its source's, a zip
member, a module over :data:`MAX_TEXT`.  Runs in ``check``'s probe; module level: ``os``,
``sys`` and sitewarden's modules.
"""

import os
import sys

from .. import pathfacts
from ..facts import private_cache
from . import line_checks

MAX_TEXT = 1 << 20  # a module larger than this is not read
#: Why a module's bytecode is high whoever owns it: what runs is not what is read.
BYTECODE_DIFFERS = "its bytecode (%s) is not its source's: the bytecode runs, unread"


def _loaded(*names):
    """The first of the modules ``names`` a start loaded (built in or frozen: never
    imported here)."""
    for name in names:
        if name in sys.modules:
            return sys.modules[name]
    return None


def _external():
    """importlib's path machinery, frozen and loaded at every start."""
    return _loaded("_frozen_importlib_external", "importlib._bootstrap_external")


def locate(name):
    """``(kind, origin)`` of module ``name`` as a start would load it (the import system's
    own finders: one startup code installs is not applied by check), or None (not found,
    or a built-in, frozen or standard library module: not followed).  ``kind``: ``source``,
    ``sourceless``, ``extension``, ``zip``, ``namespace``, ``package-path`` (a namespace
    package's directories) or ``loader`` (another loader: ``origin`` names it)."""
    path = line_checks._search_path(name, True)
    if path is False:
        return None
    spec = line_checks._spec(name, path, True)
    if spec is None or spec is True or spec is line_checks._UNKNOWN:
        return None
    origin = getattr(spec, "origin", None)
    loader = type(getattr(spec, "loader", None)).__name__
    if origin in ("built-in", "frozen") or loader in ("BuiltinImporter", "FrozenImporter"):
        return None
    if not origin or not getattr(spec, "has_location", False):
        if getattr(spec, "submodule_search_locations", None) is not None and loader in (
                "NamespaceLoader", "_NamespaceLoader", "NoneType"):
            return "namespace", None
        return "loader", "%s (%s)" % (origin or name, loader)
    if _stdlib(origin):
        return None
    if loader == "zipimporter":
        return "zip", origin
    if origin.endswith((".py", ".pyw")):
        return "source", origin
    if origin.endswith(".pyc"):
        return "sourceless", origin
    ext = _external()
    if ext is not None and origin.endswith(tuple(getattr(ext, "EXTENSION_SUFFIXES", ()))):
        return "extension", origin
    return "loader", "%s (%s)" % (origin, loader)


def is_package(origin):
    return os.path.basename(origin or "").startswith("__init__.")


def _stdlib(origin):
    stdlib = pathfacts.stdlib_dir()
    return bool(stdlib) and origin.startswith(os.path.join(stdlib, "")) and \
        "-packages" not in origin[len(stdlib):]


def _read_file(path, limit):
    """``(bytes, stat)`` of ``path`` up to ``limit`` bytes (one more: over it), or None."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            return f.read(limit + 1), st
    except OSError:
        return None


def read(origin, memo):
    """``(text, pyc, why)`` of the source module ``origin``: its text (None: not read),
    the ``__pycache__`` file the import system would run instead of it (None: none, or
    not valid for the source: recompiled), and why it is not read (None: it is)."""
    got = _read_file(origin, MAX_TEXT)
    if got is None:
        return None, None, "cannot be opened"
    data, st = got
    if len(data) > MAX_TEXT:
        return None, None, "larger than %d bytes: not read" % MAX_TEXT
    pyc = _valid_pyc(origin, data, st)
    if pyc is not None and not memo.get(_key(data, pyc[1])):
        return None, pyc[0], BYTECODE_DIFFERS % pyc[0]
    return data.decode("utf-8", "replace"), pyc and pyc[0], None


def _key(source, pyc):
    return "%d:%s%s" % (len(source), source.decode("latin-1"), pyc.decode("latin-1"))


def _valid_pyc(origin, source, st):
    """``(path, bytes)`` of the cached bytecode a start would run for ``origin`` (its
    header valid for ``source``, as ``SourceLoader.get_code`` checks it), or None."""
    ext = _external()
    try:
        path = ext.cache_from_source(origin)
    except (AttributeError, NotImplementedError, ValueError):
        return None
    got = _read_file(path, 4 * MAX_TEXT)
    if got is None or not runs_for(got[0], source, st):
        return None
    return path, got[0]


def runs_for(data, source, st):
    """Would the import system run the bytecode ``data`` (a ``__pycache__`` file's bytes)
    for the source ``source`` (bytes; ``st`` its stat) instead of compiling the source?
    Its header as ``SourceLoader.get_code`` checks it: this interpreter's magic number,
    then the source's modification time and size, or a PEP 552 hash (checked or not)."""
    ext = _external()
    if ext is None or len(data) < 16 or data[:4] != ext.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(data[4:8], "little")
    if flags & ~0b11:
        return False
    if flags & 1:  # PEP 552: a hash of the source; "unchecked" runs whatever the source
        imp = _loaded("_imp")
        mode = getattr(imp, "check_hash_based_pycs", "default")
        check = mode == "always" or (mode != "never" and flags & 2)
        return not check or imp.source_hash(ext._RAW_MAGIC_NUMBER, source) == data[8:16]
    return int.from_bytes(data[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF and \
        int.from_bytes(data[12:16], "little") == st.st_size & 0xFFFFFFFF


def same_code(key):
    """Is the bytecode the source's?  ``key``: :func:`_key`'s (source, then pyc).  The
    source is compiled, the bytecode unmarshalled, neither run; their code objects are
    compared (the marshalled bytes first: equal bytes need no unmarshalling)."""
    size, _, rest = key.partition(":")
    return compiled_alike(rest[:int(size)].encode("latin-1"),
                          rest[int(size) + 16:].encode("latin-1"))


def compiled_alike(source, body, optimize=-1):
    """Is ``body`` (bytecode without its 16-byte header) the code of ``source``, compiled
    at the optimisation level ``optimize`` (-1: this interpreter's)?  Compiled and
    unmarshalled, neither run (:func:`same_code`)."""
    marshal = _loaded("marshal")
    try:
        code = compile(source, "<module>", "exec", dont_inherit=True, optimize=optimize)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False  # it does not compile: whatever runs is not it
    if marshal.dumps(code) == body:
        return True
    try:
        return _equal(marshal.loads(body), code)
    except (EOFError, ValueError, TypeError, RecursionError, MemoryError):
        return False


def _equal(a, b, depth=0):
    """Do the code objects ``a`` (the bytecode's) and ``b`` (the source's) do the same?
    Equal (``==`` ignores the file name), or the same names, argument names and constants,
    their nested code alike, in the same order: a later patch release of the same
    bytecode format may emit other instructions for the same source (3.13.0 and 3.13.5
    differ in generator expressions); bytecode built from other names or constants
    differs.  What it may not do: the instructions of such a pair are not compared."""
    if type(a) is not type(b) or depth > 100:
        return False
    if a == b:
        return True
    if (a.co_name, a.co_names, a.co_varnames, a.co_argcount) != \
            (b.co_name, b.co_names, b.co_varnames, b.co_argcount) or \
            len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if type(x) is not type(y):
            return False
        if type(x) is type(a):
            if not _equal(x, y, depth + 1):
                return False
        elif x != y:
            return False
    return True


class PycMemo(private_cache.Memo):
    """:func:`same_code`'s verdicts kept from one check to the next
    (:class:`.private_cache.Memo`): a repeat check compiles nothing."""

    FORMAT = 1
    NAME = "startup-pycs-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)
    answer = staticmethod(same_code)

    @staticmethod
    def valid(value):
        return type(value) is bool
