"""The module files startup code imports, found and read as the import system would load
them, never run.

A module name is looked up as :mod:`.line_checks` looks it up (the finders on
``sys.meta_path``, a submodule through its parent's ``__path__``, no parent imported), and
what would run is read: the source, decoded as this interpreter's compiler decodes it (a
BOM, a PEP 263 declaration: :func:`source_text`), and every ``__pycache__`` file the import
system could run instead of it (each optimisation level, ``PYTHONPYCACHEPREFIX``'s too:
:func:`cache_files`) whose header is valid for the source (timestamp and size, or a PEP
552 hash, checked or not), compared with what the compiler makes of the source at that
level (compiled, never run; the verdicts kept by :class:`PycMemo`).  What cannot be read
is said, never passed over: a compiled extension, a sourceless module, bytecode that is
not its source's (or a FIFO or device in its place), a source the compiler decodes
otherwise, a zip member, a module over :data:`MAX_TEXT`.  Every file is opened by the one
reader (:func:`..facts.reader.read_regular`).  Runs in ``check``'s probe; module level: ``os``,
``sys`` and sitewarden's modules.
"""

import os
import sys

from .. import pathfacts
from ..facts import private_cache, reader
from . import line_checks

MAX_TEXT = 1 << 20  # a module larger than this is not read
MAX_PYC = 4 * MAX_TEXT  # nor bytecode larger than this
#: Why a module's bytecode is high whoever owns it: what runs is not what is read.  (An
#: earlier patch release of this Python may have written it: 3.13.0's and 3.13.5's
#: instructions differ for one source; its compiler's is what check can vouch for.)
BYTECODE_DIFFERS = ("its bytecode (%s) is not its source's: the bytecode runs, unread "
                    "(remove it, or recompile the source, to run what is read)")
BYTECODE_SPECIAL = ("its bytecode (%s) is a %s, not its source's: a start that imports it "
                    "waits on it or runs what it is fed, unread")
BYTECODE_UNREAD = "its bytecode (%s) %s: not compared with its source, the bytecode runs, unread"
SOURCE_UNDECODED = "its source cannot be decoded as the import system decodes it (%s): not read"
SOURCE_MISREAD = ("its source is not what check decodes (the compiler reads its encoding "
                  "declaration otherwise): what runs is unread")
#: What ``unread`` says of code that runs while what check read is something else: high,
#: whoever owns it (:func:`.analysis.unread_findings`).
NOT_WHAT_RUNS = ("not its source's", "the bytecode runs", "not what check decodes")
_BOM = b"\xef\xbb\xbf"
_S_IFMT = 0o170000
#: What a start cannot open in place of bytecode (its source runs): a directory, a socket.
_SKIPPED = (0o040000, 0o140000)


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


def read(origin, memo):
    """``(text, pycs, whys)`` of the source module ``origin``: its text as the compiler
    decodes it (None: not read), the ``__pycache__`` files a start may run instead of it
    (:func:`cache_files` whose header is valid for the source: each in the line's module
    files), and why what runs is not read (each bytecode that is not the source's, a
    source the compiler decodes otherwise; [] when it is all read).  ``memo``: a
    :class:`PycMemo`."""
    data, st, why = reader.read_regular(origin, MAX_TEXT)
    if data is None:
        return None, [], ["larger than %d bytes: not read" % MAX_TEXT if why.startswith(
            "larger") else "%s: not read" % why]
    pycs, whys = [], []
    for path, level in cache_files(origin):
        verdict = _bytecode(path, level, origin, data, st, memo)
        if verdict is not None:
            pycs.append(path)
            if verdict is not True:
                whys.append(verdict)
    text, why = source_text(data, origin, st, memo)
    if why:
        whys.append(why)
    return text, pycs, whys


def _stamp(st):
    """A file's identity and state: what a change of its content changes (``st_ctime``
    even when the modification time is set back)."""
    return "%d:%d:%d:%d:%d" % (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                               st.st_ctime_ns)


# ---------------------------------------------------------------- the source's text


def source_text(data, origin="<module>", st=None, memo=None):
    """``(text, None)``: a module's source bytes as this interpreter's compiler decodes
    them (``compile(bytes)``, what ``SourceLoader.get_code`` runs: line ends ``\\r\\n`` and
    ``\\r`` made ``\\n`` first, then a UTF-8 BOM or a PEP 263 declaration on one of the
    first two lines, the second only after a comment or blank line, else UTF-8), or
    ``(None, why)``: undecodable, or (``memo`` given) the text does not compile to what the
    bytes compile to.  Plain UTF-8 (no BOM, no ``coding`` in the first two lines) is
    decoded without ``tokenize``; a declared encoding is found by
    ``tokenize.detect_encoding`` (``importlib.util.decode_source``'s rule) on the bytes as
    the compiler splits their lines, and the text is checked against the bytes: both
    compiled, the verdict kept by ``memo`` (:class:`PycMemo`)."""
    if data[:3] != _BOM and not _may_declare(data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, SOURCE_UNDECODED % _error_text(exc)
        return (text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text), None
    text, why = _declared(data)
    if text is None or memo is None or st is None:
        return text, why
    key = "source %s %s" % (origin, _stamp(st))
    if not memo.get(key, lambda: _compiles_alike(data, text, origin)):
        return None, SOURCE_MISREAD
    return text, None


def _may_declare(data):
    """Could the first two lines of ``data`` declare an encoding?  (``coding`` in them:
    ``tokenize.cookie_re`` needs it; lines ended by ``\\r`` as well are within the first
    two ended by ``\\n``.)"""
    end = data.find(b"\n")
    end = data.find(b"\n", end + 1) if end >= 0 else -1
    return b"coding" in (data if end < 0 else data[:end])


def _declared(data):
    """``(text, None)`` or ``(None, why)`` of a source with a BOM or a declaration."""
    if b"\r" in data:  # the compiler's first step (translate_newlines), before the cookie
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        import tokenize  # why: only a module that declares an encoding needs its rule

        encoding = tokenize.detect_encoding(_loaded("io").BytesIO(data).readline)[0]
        return data.decode(encoding), None
    except (SyntaxError, LookupError, UnicodeError, ValueError, TypeError) as exc:
        return None, SOURCE_UNDECODED % _error_text(exc)


def _compiles_alike(data, text, origin):
    """Do the bytes and the text check decoded from them compile to the same code (both
    fail: the module does not compile, nothing of it runs)?"""
    found = []
    for source in (data, text):
        try:
            found.append(compile(source, origin, "exec", dont_inherit=True))
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            found.append(None)
    if found[0] is None or found[1] is None:
        return found[0] is found[1]
    return _equal(found[0], found[1])


def _error_text(exc):
    return "%s: %s" % (type(exc).__name__, exc)


# ---------------------------------------------------------------- the bytecode


def cache_files(origin):
    """``[(path, optimisation level)]``: every bytecode file the import system may run
    instead of the source ``origin``: ``__pycache__/<name>.<tag>.pyc``, ``.opt-1.pyc``,
    ``.opt-2.pyc`` (``PYTHONOPTIMIZE`` selects one, ``-O`` on a command line any), and the
    same under ``sys.pycache_prefix`` and the environment's ``PYTHONPYCACHEPREFIX``
    (``importlib.util.cache_from_source``'s names)."""
    ext = _external()
    saved = getattr(sys, "pycache_prefix", None)
    out = []
    try:
        for prefix in _prefixes(saved):
            sys.pycache_prefix = prefix
            for level in (0, 1, 2):
                try:
                    out.append((ext.cache_from_source(origin, optimization=level or ""), level))
                except (AttributeError, NotImplementedError, ValueError, TypeError, OSError):
                    break  # no cache_tag (no bytecode), a name it cannot take
    finally:
        sys.pycache_prefix = saved
    return out


def _prefixes(own):
    """Where bytecode is looked for: beside the source (None), then ``sys.pycache_prefix``
    and ``PYTHONPYCACHEPREFIX`` (the environment, read as data)."""
    out = [None]
    for prefix in (own, os.getenv("PYTHONPYCACHEPREFIX")):
        if prefix and prefix not in out:
            out.append(prefix)
    return out


def _bytecode(path, level, origin, source, st, memo):
    """What the bytecode file ``path`` (for ``source``, read with ``st``, at
    optimisation ``level``) is to a start: None (none there, or one no start runs: its
    header is not valid for the source, or a directory or socket a start cannot open),
    True (the source's code: what the compiler makes of it at that level), or why it
    is not read (:data:`BYTECODE_DIFFERS`, :data:`BYTECODE_SPECIAL`,
    :data:`BYTECODE_UNREAD`)."""
    data, pst, why = reader.read_regular(path, MAX_PYC)
    if data is None:
        if why == reader.MISSING or (pst is not None and pst.st_mode & _S_IFMT in _SKIPPED):
            return None
        if pst is not None and why.endswith(reader.NOT_REGULAR):
            return BYTECODE_SPECIAL % (path, reader.kind_of(pst))
        return BYTECODE_UNREAD % (path, why if why.startswith("cannot") else "is " + why)
    if not runs_for(data, source, st):
        return None
    key = "pyc %d %s %s %s %s" % (level, origin, _stamp(st), path, _stamp(pst))
    return True if memo.get(key, lambda: compiled_alike(source, data[16:], level, origin)) \
        else BYTECODE_DIFFERS % path


def runs_for(data, source, st):
    """Would the import system run the bytecode ``data`` (a ``__pycache__`` file's bytes)
    for the source ``source`` (bytes; ``st`` its stat) instead of compiling the source?
    Its header as ``SourceLoader.get_code`` checks it: this interpreter's magic number,
    the flags, then the source's modification time and size, or (PEP 552) the source's
    hash when checked; unchecked, it runs whatever the source says."""
    ext = _external()
    if ext is None or len(data) < 16 or data[:4] != ext.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(data[4:8], "little")
    if flags & ~0b11:
        return False
    if flags & 1:
        return not flags & 2 or _source_hash(ext, source) in (None, data[8:16])
    return int.from_bytes(data[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF and \
        int.from_bytes(data[12:16], "little") == st.st_size & 0xFFFFFFFF


def _source_hash(ext, source):
    """``importlib.util.source_hash(source)`` (3.14+: keyed by ``_imp``'s
    ``pyc_magic_number_token``, before by ``_RAW_MAGIC_NUMBER``), or None: it cannot be
    asked (the bytecode is then compared whatever its hash says)."""
    imp = _loaded("_imp")
    token = getattr(imp, "pyc_magic_number_token", None)
    try:
        return imp.source_hash(getattr(ext, "_RAW_MAGIC_NUMBER", None) if token is None
                               else token, source)
    except (AttributeError, TypeError, ValueError):
        return None


def compiled_alike(source, body, optimize=-1, origin="<module>"):
    """Is the marshalled code ``body`` (bytecode without its 16-byte header) what this
    interpreter's compiler makes of the source bytes ``source`` at the optimisation
    level ``optimize`` (-1: this interpreter's): ``compile(source, origin, "exec",
    dont_inherit=True, optimize=optimize)``, as ``SourceLoader.source_to_code``?  Equal
    marshalled bytes need no unmarshalling; else the code objects are compared
    (:func:`_equal`).  Neither is run."""
    marshal = _loaded("marshal")
    try:
        code = compile(source, origin, "exec", dont_inherit=True, optimize=optimize)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False  # it does not compile: whatever runs is not it
    if marshal.dumps(code) == body:
        return True
    try:
        return _equal(marshal.loads(body), code)
    except (EOFError, ValueError, TypeError, RecursionError, MemoryError):
        return False


#: What may differ between the code a start runs from bytecode and the source's: the file
#: name (the import system puts the source's in) and where each instruction's line is
#: (a checked or unchecked hash holds for a source whose comments moved lines); constants
#: are compared below.  Everything else, instructions first, must be equal.
_FREE = ("co_filename", "co_firstlineno", "co_lnotab", "co_linetable", "co_consts")
_FIELDS = []


def _fields(code):
    if not _FIELDS:
        _FIELDS.append(tuple(n for n in dir(code) if n.startswith("co_") and n not in _FREE
                             and not callable(getattr(code, n))))
    return _FIELDS[0]


def _equal(a, b, depth=0):
    """Are the code objects ``a`` (the bytecode's) and ``b`` (the source's) the same code:
    every field (``co_code``, names, local, free and cell variable names, flags, argument
    counts, stack size, ``co_exceptiontable``, qualified name...) equal, their constants
    equal in type and value (``-0.0`` is not ``0.0``), nested code alike; only the file
    name and the line table may differ (:data:`_FREE`)?"""
    if type(a) is not type(b) or depth > 100:
        return False
    for name in _fields(b):
        x, y = getattr(a, name, None), getattr(b, name, None)
        if type(x) is not type(y) or x != y:
            return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if type(x) is type(b):
            if not _equal(x, y, depth + 1):
                return False
        elif type(y) is type(b) or _constant(x) != _constant(y):
            return False
    return True


def _constant(value):
    """A constant as what tells it apart: its type and value, a float's or complex's
    bits (``marshal`` format 2, which writes no references)."""
    kind = type(value)
    if kind is tuple or kind is frozenset:
        return kind.__name__, kind(_constant(v) for v in value)
    if kind is float or kind is complex:
        return kind.__name__, _loaded("marshal").dumps(value, 2)
    if kind is slice:
        return "slice", _constant((value.start, value.stop, value.step))
    return kind.__name__, value


class PycMemo(private_cache.Memo):
    """The verdicts on what a start runs of a module's files (:func:`compiled_alike`: a
    bytecode file against its source; :func:`_compiles_alike`: a declared encoding's
    text against the bytes), kept from one check to the next by the files' paths and
    ``stat`` (:func:`_stamp`: a change of either file changes the key); a repeat check
    compiles nothing."""

    FORMAT = 2
    NAME = "startup-pycs-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)

    @staticmethod
    def valid(value):
        return type(value) is bool
