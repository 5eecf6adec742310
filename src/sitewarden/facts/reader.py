"""Startup files read exactly as the target's ``site`` reads them, never run: the one reader.

Every read of a ``.pth`` or ``.start`` file in ``check`` is made here, once per probe run
(:func:`read_file`, :func:`read_bytes`): the emulated start (:mod:`.site_emulation`), the
inventory (:func:`read_startup_files`), the shadow scan's path classes
(``detect.layout.pth_entries``, ``facts.distinfo.pth_paths``: :func:`pth_files`,
:func:`pth_directories`) and the owners' hashes (:mod:`.integrity`).

Which files (the user site when enabled, then each site directory, in ``site``'s order;
names sorted, dot files skipped where ``site`` skips them; on 3.15+ PEP 829's ``.start``
files too), and their lines as that version of CPython gets them: the decoding (3.8-3.12:
the locale's, strict, chunk by chunk; 3.13+: ``utf-8-sig``, then the locale's), the line
ends (3.8-3.12: universal newlines only; 3.13+: ``str.splitlines``), the ``import ``
rule, BOMs and NUL bytes kept where ``site`` keeps them (a path line holding a NUL names
no directory: :data:`NUL_NOTE`).  A file ``site`` cannot decode carries CPython's error.
Never blocks, never reads more than :data:`READ_LIMIT`, never raises: a FIFO, socket,
device or directory is never opened, a regular file is opened without blocking and read
up to the limit whatever its size says; what is not read as lines gets a ``file_type``
(:data:`UNOPENED`, :data:`PSEUDO`).  An import line calling
``site.addsitedir('<absolute literal>')`` brings that directory's files in after its own.

Every other file the audit reads is read here too, by the same rule (:func:`read_regular`,
:func:`read_text`): the modules a start runs and their bytecode, the records that vouch
for them, ``pyvenv.cfg``.  Each is opened by :func:`open_regular` (``pathfacts``', where
the runtime, the private cache and dpkg's lists find it without loading the audit).

Runs in ``check``'s probe (:mod:`.inventory` judges what is read); module level: ``os`` and
``sys``.
"""

import os
import sys

from .. import _swallowed, pathfacts
from .startup_records import StartupLine


def pep829_site(site):
    return hasattr(site, "StartupState")


def site_dirs(site):
    """``(user site or None, [site directories in site's order])``, existing ones only."""
    user = None
    if getattr(site, "ENABLE_USER_SITE", False):
        try:
            user = site.getusersitepackages()
        except AttributeError:  # an old virtualenv's site.py
            user = None
    try:
        dirs = list(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site.py
        dirs = []
    out, seen = [], set()
    for d in ([user] if user else []) + dirs:
        key = os.path.normcase(os.path.abspath(d))
        if key not in seen and os.path.isdir(d):
            seen.add(key)
            out.append(d)
    return user, out


#: The most ``check`` reads of one startup file (a larger one: its ``size``, no lines).
READ_LIMIT = 1 << 20
#: ``StartupFile.file_type`` by the type bits of ``st_mode`` (``stat`` not imported).
_FILE_TYPES = pathfacts.FILE_TYPES
_S_IFMT = 0o170000
#: The ``file_type`` of what ``site`` cannot open and skips (``check`` names it); a
#: socket too, though the emulated start reports it (a start that reads it fails).
UNOPENED = ("directory", "unreadable", "symlink loop", "broken symlink")
_ELOOP = 40 if sys.platform.startswith("linux") else 62  # errno not imported

#: The ``file_type`` of a file its size says empty but that reads as text (``/proc``,
#: ``/sys``): what each process reads there is its own (``/proc/self/environ``: its
#: environment), so its lines are not this check's to show (nor its environment).
PSEUDO = "pseudo file"

#: Every read of this probe run: ``{path: (bytes or None, facts, why)}`` and
#: ``{(path, version, start): (lines, facts)}``: a file is read once per ``check``
#: whoever asks (the emulated start, the inventory, the shadow scan, the owners' hashes).
#: Kept only in a probe run (:func:`reset` starts one): the runtime reads again each time.
_READS = {}
_IN_RUN = []
#: Whether a ``site`` skips dot files, by its file: its source read once per process.
_DOTS = {}


class Facts:
    """What reading a startup file found besides its lines (a :class:`StartupFile`'s):
    ``file_type`` (not read as lines), ``size`` (over the limit), ``decode_error``."""

    __slots__ = ("file_type", "size", "decode_error")

    def __init__(self, file_type=None, size=None, decode_error=None):
        self.file_type, self.size, self.decode_error = file_type, size, decode_error

    def fields(self):
        """The keyword arguments of a :class:`StartupFile`."""
        return dict(file_type=self.file_type, size=self.size, decode_error=self.decode_error)


def reset():
    """Forget every read and keep the next ones: a new probe run (the emulated start,
    :func:`..site_emulation.emulate`, begins each static ``check``)."""
    _READS.clear()
    _IN_RUN[:] = [True]


def _kept(key, make):
    try:
        return _READS[key]
    except KeyError:
        pass
    found = make()
    if _IN_RUN:
        _READS[key] = found
    return found


def read_file(path, version=None, start=False):
    """``(lines, facts)`` of the startup file ``path`` as ``site`` of ``version`` (default:
    this interpreter's) reads it (``start``: a ``.start`` file), read once per probe run,
    or None where it is gone (``site`` finds nothing there either).  Never blocks, never
    reads past :data:`READ_LIMIT`, never raises.  ``facts`` (:class:`Facts`):
    ``file_type`` (a FIFO, socket or device, never opened; one of :data:`UNOPENED`, which
    ``site`` skips; a :data:`PSEUDO` file, read, not shown), ``size`` (over the limit),
    ``decode_error``; ``lines`` None: not read.  The lines are shared: not to be changed."""
    version = tuple(version or sys.version_info[:2])
    return _kept((path, version, bool(start)), lambda: _lines(path, version, start))


def read_bytes(path, too_large="%d bytes"):
    """``(bytes, None)`` of the regular file at ``path`` (links followed; at most
    :data:`READ_LIMIT`), read once per probe run with its lines, or ``(None, why)``: a
    FIFO, device, socket, directory, pseudo file (``not a regular file``), one that
    cannot be read (``cannot be read (<reason>)``), one over the limit (``too_large`` of
    its size).  What hashes a startup file reads it here."""
    raw = _raw(path)
    if raw is None:
        return None, "cannot be read (No such file or directory)"
    data, facts, why = raw
    if data is not None:
        return data, None
    if facts.size is not None:
        return None, too_large % facts.size
    return None, why or "not a regular file"


def _lines(path, version, start):
    raw = _raw(path)
    if raw is None:
        return None
    data, facts, _why = raw
    facts, lines = Facts(facts.file_type, facts.size), None
    if data is not None:
        try:
            lines, facts.decode_error = (_text_lines(data, version) if version < (3, 13)
                                            else _decode(data, start))
        except (ValueError, LookupError) as exc:  # never seen: said
            _swallowed("decoding %r (%s)" % (path, _error_text(exc)))
            lines = []
    return lines, facts


def _raw(path):
    """``(bytes or None, facts, why)`` of ``path``, kept for the probe run, or None
    (nothing there): never raises."""
    def make():
        try:
            return _read_raw(path)
        except (OSError, ValueError) as exc:  # never seen: said
            _swallowed("reading %r (%s)" % (path, _error_text(exc)))
            return None, Facts("unreadable"), \
                "cannot be read (%s)" % _error_text(exc)
    return _kept(path, make)


def _unopened(path, exc):
    """The ``file_type`` of a path ``site`` cannot open (``exc``: what ``os`` raised),
    or None: nothing there (gone since the listing; a name holding a NUL)."""
    errno = getattr(exc, "errno", None)
    if errno == _ELOOP:
        return "symlink loop"
    if errno == 2:  # ENOENT: a link to nothing, or a file removed since the listing
        return "broken symlink" if os.path.islink(path) else None
    return "unreadable" if isinstance(exc, OSError) else None


#: The one way ``check`` opens a file (:func:`..pathfacts.open_regular`), and what
#: :func:`read_regular` says of one it does not read.
open_regular, kind_of = pathfacts.open_regular, pathfacts.kind_of
MISSING, NOT_REGULAR = pathfacts.MISSING, pathfacts.NOT_REGULAR


def read_regular(path, limit=READ_LIMIT):
    """``(bytes, stat, None)`` or ``(None, stat or None, why)``: a file that is not a
    startup file (a module, its bytecode, a record, dpkg's lists, ``pyvenv.cfg``) read
    by :func:`..pathfacts.read_regular`, never blocking, at most ``limit`` bytes."""
    return pathfacts.read_regular(path, limit)


def read_text(path, limit=READ_LIMIT):
    """``(text, None)`` of the UTF-8 file ``path`` (:func:`read_regular`), its line ends
    ``\n`` (as ``open()`` reads text), or ``(None, why)``: not a regular file, too large,
    unreadable or not UTF-8."""
    data, _st, why = read_regular(path, limit)
    if data is None:
        return None, why
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, _error_text(exc)
    return (text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text), None


def _read_raw(path):
    """``(bytes or None, facts, why)`` of a startup file, or None (nothing there): opened
    by :func:`open_regular` (a FIFO, socket, device or directory is never opened), then
    read up to :data:`READ_LIMIT` whatever its size says (``/proc``)."""
    facts = Facts()
    fd, st, exc = pathfacts.open_regular(path)
    if fd is None:
        if exc is not None:
            facts.file_type = _unopened(path, exc)
            why = "cannot be read (%s)" % (getattr(exc, "strerror", None) or exc)
            return (None, facts, why) if facts.file_type else None
        facts.file_type = _FILE_TYPES.get(st.st_mode & _S_IFMT, "unreadable")
        return None, facts, "not a regular file"
    try:
        data = None if st.st_size > READ_LIMIT else pathfacts.read_all(fd, READ_LIMIT, st.st_size)
        if data is None:  # over the limit (or grown past it since the fstat)
            facts.size = max(st.st_size, os.fstat(fd).st_size, READ_LIMIT + 1)
        elif data and not st.st_size:  # /proc, /sys: made at each read, by the reader
            facts.file_type = PSEUDO
            return None, facts, "not a regular file"
        return data, facts, None
    except OSError as exc:  # a read error (EIO, a file that would block): site fails too
        facts.file_type = "unreadable"
        return None, facts, "cannot be read (%s)" % (exc.strerror or exc)
    finally:
        os.close(fd)


def _error_text(exc):
    """An exception as the last line of CPython's traceback names it."""
    return "%s: %s" % (type(exc).__name__, exc)


def _decode(data, start=False):
    """``(lines, error)`` of a file's bytes as 3.13+ ``site`` reads them (3.15+: PEP 829's
    ``_read_pthstart_file``): ``utf-8-sig``, else (not a ``.start``) the locale's encoding
    (``locale.getencoding()``), strict; ``str.splitlines()``, which also splits at
    ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``.  ``error``: what
    it raises (the start fails; a ``.start`` is skipped)."""
    try:  # utf-8-sig, without the codec registry (3.13.0 -S in a deleted directory: broken)
        text = (data[3:] if data[:3] == b"\xef\xbb\xbf" else data).decode("utf-8")
    except UnicodeDecodeError as exc:
        exc = _sig_error(data, exc)
        if start:
            return [], _error_text(exc)
        try:
            text = data.decode(_locale_encoding())
        except (UnicodeError, LookupError) as exc:
            return [], _error_text(exc)
    return text.splitlines(), None


def _sig_error(data, exc):
    """The error ``data.decode("utf-8-sig")`` gives (its codec's name and positions), or
    ``exc`` where the codec cannot be looked up."""
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as sig:
        return sig
    except Exception:  # the codec registry's own failure
        _swallowed("looking up the utf-8-sig codec: utf-8's error is named instead")
        return exc
    return exc


def _text_lines(data, version):
    """``(lines, error)`` as 3.8-3.12's ``addpackage`` reads them, iterating
    ``io.TextIOWrapper(io.open_code(path))`` (3.10+: ``encoding="locale"``, the locale's
    even in UTF-8 mode from 3.11): strict, universal newlines (lines end at ``\\n``,
    ``\\r``, ``\\r\\n`` only; a BOM stays), decoded chunk by chunk: an error ends the start
    after the lines of the chunks before.  The same wrapper over the bytes does the same."""
    io = sys.modules["io"]  # loaded at every start (open() is io.open): nothing imported

    lines = []
    try:
        with io.TextIOWrapper(io.BytesIO(data), **({"encoding": "locale"} if version >= (
                3, 10) and sys.version_info >= (3, 10) else {})) as f:
            for line in f:
                lines.append(line[:-1] if line.endswith("\n") else line)
    except (UnicodeError, LookupError) as exc:
        return lines, _error_text(exc)
    return lines, None


def _locale_encoding():
    """``locale.getencoding()`` (3.13+ ``site``'s fallback: the locale's encoding, UTF-8
    mode or not) without ``locale`` (which imports ``re``)."""
    import _locale  # built in

    get = getattr(_locale, "getencoding", None)  # 3.11+
    try:
        return get() if get else _locale.nl_langinfo(_locale.CODESET) or "utf-8"
    except (AttributeError, ValueError):  # no nl_langinfo (not POSIX)
        return "utf-8"


def _skips_dot_files(site):
    """Does this ``site`` skip ``.pth`` names starting with a dot (3.13, and backports)?
    Its source is read once per process."""
    key = getattr(site, "__file__", None)
    if key not in _DOTS:
        text = read_text(key)[0] if isinstance(key, str) else None
        _DOTS[key] = 'startswith(".")' in text if text is not None else \
            sys.version_info >= (3, 13)  # no source
    return _DOTS[key]


def pth_names(names, skips_dots):
    """The ``.pth`` names of a directory listing, in the order ``site`` reads them."""
    return sorted(n for n in names if n.endswith(".pth") and not (skips_dots and n[:1] == "."))


def pth_files(site_dirs, site=None):
    """``[(path, lines)]``: the ``.pth`` files of ``site_dirs`` that this interpreter's
    ``site`` reads, in its order, each with its lines classified (:class:`StartupLine`:
    ``path`` lines with their ``directory``, ``import`` lines), read by :func:`read_file`
    (once per probe run); files with no lines left out."""
    site = site if site is not None else sys.modules.get("site")
    version = tuple(sys.version_info[:2])
    pep829 = site is not None and pep829_site(site)
    dots = _skips_dot_files(site) if site is not None else version >= (3, 13)
    out = []
    for sitedir in site_dirs:
        try:
            names = os.listdir(sitedir)
        except (OSError, TypeError, ValueError):
            continue
        for name in pth_names(names, dots):
            path = os.path.join(sitedir, name)
            found = read_file(path, version)
            if found is not None and found[0]:
                out.append((path, _pth_lines(sitedir, found[0], pep829, version, None, set())))
    return out


def pth_directories(path):
    """The directories the path lines of the ``.pth`` file ``path`` name, joined to its
    directory as this interpreter's ``site`` joins them (read by :func:`read_file`)."""
    found = read_file(path)
    if not found or not found[0]:
        return []
    site = sys.modules.get("site")
    lines = _pth_lines(os.path.dirname(path), found[0], site is not None and pep829_site(site),
                       tuple(sys.version_info[:2]), None, set())
    return [line.directory for line in lines if line.kind == "path"]


def real_file(path):
    """``os.path.realpath`` of a startup file: its site directory resolved once per report
    (``pathfacts.real``), the file with one ``lstat`` (a link: resolved whole), where a
    ``realpath`` costs one ``lstat`` per component."""
    if os.path.islink(path):
        real = os.path.realpath(path)
        own = "/proc/%d/" % os.getpid()  # /proc/self: every process's own, not the probe's
        return "/proc/self/" + real[len(own):] if real.startswith(own) else real
    head, tail = os.path.split(path)
    return os.path.join(pathfacts.real(head), tail)


#: The note of a path line holding a NUL byte (``/proc/self/environ`` linked as a ``.pth``).
NUL_NOTE = ("holds a NUL byte: no such directory can exist, site adds nothing for it "
            "(os.path.exists() says False; 3.15+ prints that it does not exist)")


def _pth_lines(sitedir, lines, pep829, version, disabled, known):
    out = []
    for n, raw in enumerate(lines, 1):
        line = raw.strip() if pep829 else raw
        if line.startswith("#"):
            out.append(StartupLine(n, line, "comment"))
            continue
        if not line.strip():
            continue
        if line.startswith(("import ", "import\t")):
            runs = disabled is None and version < (3, 18)
            note = ("turned off by %s" % disabled if disabled else
                    None if runs else "ignored by Python 3.18+")
            out.append(StartupLine(n, line, "import", runs=runs, note=note))
            continue
        directory = os.path.abspath(os.path.join(sitedir, line.rstrip()))
        nul = "\0" in directory  # os.path.exists() says False, as site's does (3.8+)
        exists, note = (False, NUL_NOTE) if nul else (os.path.exists(directory), None)
        key = os.path.normcase(directory)
        if key in known and note is None:
            note = "already on sys.path"
        known.add(key)
        out.append(StartupLine(n, line, "path", directory, exists, note=note))
    return out
