"""PEP 668's marker: is this interpreter externally managed, and what does it say?

Runtime module: imported inside guarded processes on first need, so only
``os`` and ``sys`` at module level; ``sysconfig`` and ``locale`` are imported
when a question is asked, ``configparser`` only for a marker that is not plain
INI.  Nothing here raises: a marker that cannot be read still applies (PEP 668:
the file's existence alone decides), with sitewarden's own message.
"""

import os
import sys

from .. import _swallowed, pathfacts

MARKER_NAME = "EXTERNALLY-MANAGED"
SECTION = "externally-managed"

#: Markers larger than this are not parsed (they still apply).
MAX_MARKER_BYTES = 1 << 20

DEFAULT_MESSAGE = (
    "This Python installation is managed by your operating system or another\n"
    "package manager, and sitewarden could not read its EXTERNALLY-MANAGED file\n"
    "({reason}).\n"
    "Install Python packages into a virtual environment instead:\n"
    "    python3 -m venv path/to/venv\n"
    "    path/to/venv/bin/python -m pip install <package>\n"
    "or use your system package manager, or pipx for applications."
)


def in_virtualenv():
    """A virtual environment (PEP 405 venv, or old virtualenv's ``real_prefix``)."""
    if hasattr(sys, "real_prefix"):
        return True
    return sys.prefix != getattr(sys, "base_prefix", sys.prefix)


def _sysconfig():
    import sysconfig  # stdlib, deferred: a module level holds os and sys only

    return sysconfig


def default_scheme():
    """The sysconfig scheme installers write to by default (Debian: ``posix_local``)."""
    sysconfig = _sysconfig()
    getter = getattr(sysconfig, "get_default_scheme", None)  # 3.10+
    if getter is None:
        getter = sysconfig._get_default_scheme  # 3.8, 3.9
    return getter()


#: (scheme, prefixes) -> its paths without ``vars``: each ``get_paths`` expands every
#: path of the scheme (about 1.2M instructions), and the marker, the layout and the probe
#: all ask.  Keyed on the prefixes, as sysconfig (3.14+) drops its own cache when
#: ``sys.prefix`` changes in-process (an ``activate_this.py``).
_expanded = {}


def scheme_paths(scheme=None, vars=None):
    """sysconfig's paths of ``scheme``: None, the default one; ``"user"``, the
    preferred user scheme (``posix_user`` before 3.10).  Without ``vars``, expanded
    once per process (a copy each time)."""
    sysconfig = _sysconfig()
    if scheme is None:
        scheme = default_scheme()
    elif scheme == "user":
        preferred = getattr(sysconfig, "get_preferred_scheme", None)
        scheme = preferred("user") if preferred is not None else "posix_user"
    if vars is not None:
        return sysconfig.get_paths(scheme, vars=vars)
    key = (scheme, sys.prefix, sys.exec_prefix, getattr(sys, "base_prefix", None),
           getattr(sys, "base_exec_prefix", None))
    paths = _expanded.get(key)
    if paths is None:
        paths = _expanded[key] = sysconfig.get_paths(scheme)
    return dict(paths)


def marker_path():
    """Where PEP 668 says the marker lives: the default scheme's ``stdlib`` path."""
    return os.path.join(scheme_paths()["stdlib"], MARKER_NAME)


def marker_exists(path=None):
    """The marker's existence, as a name: a directory, dangling link or
    unreadable file named EXTERNALLY-MANAGED still counts (fail closed)."""
    try:
        return os.path.lexists(marker_path() if path is None else path)
    except Exception:
        _swallowed("locating the marker (taken as present: installs are refused)")
        return True


def applies(path=None):
    """Must installs into this interpreter's own scheme be refused?"""
    return not in_virtualenv() and marker_exists(path)


def message_language(environ=None):
    """The language code used to pick ``Error-<lang>`` (PEP 668's algorithm).

    PEP 668 reads ``locale.getlocale(LC_MESSAGES)``, which is only meaningful
    after ``setlocale(LC_ALL, "")``; the guard must not change a process's
    locale, so when none was set it derives the same answer from the
    environment variables ``setlocale`` would read.
    """
    try:
        # The query costs nothing; importing ``locale`` (re, enum...) costs milliseconds
        # and is only needed to parse a locale that the process actually set.
        import _locale  # built in, asked only for a message's language

        category = getattr(_locale, "LC_MESSAGES", None)
        if category is None:  # Windows
            return None
        if _locale.setlocale(category) not in ("C", "POSIX"):
            import locale  # stdlib, costly: only to parse a locale the process set

            lang = locale.getlocale(category)[0]
            if lang:
                return lang
    except (ImportError, ValueError, TypeError):  # locale.Error is a ValueError
        pass
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            lang = value.split(".", 1)[0].split("@", 1)[0]
            return None if lang in ("C", "POSIX", "") else lang
    return None


def _candidate_keys(lang):
    if not lang:
        return ["Error"]
    keys = ["Error-" + lang]
    for sep in ("_", "-"):  # pt-BR also matches Error-pt_BR, and the reverse
        if sep in lang:
            other = "-" if sep == "_" else "_"
            keys.append("Error-" + lang.replace(sep, other))
    for sep in ("_", "-"):
        if sep in lang:
            keys.append("Error-" + lang.split(sep, 1)[0])
            break
    keys.append("Error")
    return keys


class Marker:
    """What the marker says.  ``text`` is None when the file gave no usable
    message; ``problem`` says why (for ``status`` and ``check``)."""

    __slots__ = ("path", "exists", "text", "key", "problem")

    def __init__(self, path, exists, text=None, key=None, problem=None):
        self.path = path
        self.exists = exists
        self.text = text
        self.key = key
        self.problem = problem

    @property
    def message(self):
        """The message to show: the marker's own text, or the default one."""
        if self.text is not None:
            return self.text
        return DEFAULT_MESSAGE.format(reason=self.problem or "no error message in it")


def read(path=None, lang=None, environ=None):
    """Read and parse the marker at ``path`` (default: this interpreter's).

    Never raises.  ``lang`` defaults to :func:`message_language`.
    """
    try:
        if path is None:
            path = marker_path()
    except Exception as exc:
        return Marker(None, True, problem="cannot locate the stdlib: %s" % (exc,))
    if not marker_exists(path):
        return Marker(path, False)
    try:
        if lang is None:
            lang = message_language(environ)
        return _parse(path, lang)
    except Exception as exc:  # pragma: no cover - defensive: _parse catches
        return Marker(path, True, problem=_describe(exc))


def _describe(exc):
    name = type(exc).__name__
    text = str(exc).splitlines()[0] if str(exc) else ""
    return "%s: %s" % (name, text) if text else name


def _parse(path, lang):
    if os.path.isdir(path):
        return Marker(path, True, problem="it is a directory")
    # the one reader: a FIFO or device named EXTERNALLY-MANAGED is never opened
    fd, st, exc = pathfacts.open_regular(path)
    if fd is None:
        return Marker(path, True, problem="not a regular file" if exc is None else
                      "cannot read it: %s" % (getattr(exc, "strerror", None) or exc,))
    try:
        data = pathfacts.read_all(fd, MAX_MARKER_BYTES, st.st_size)  # mostly one read
    except OSError as exc:
        return Marker(path, True, problem="cannot read it: %s" % (exc.strerror or exc,))
    finally:
        os.close(fd)
    if data is None:
        return Marker(path, True, problem="larger than %d bytes" % MAX_MARKER_BYTES)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Marker(path, True, problem="not valid UTF-8")
    sections = simple_ini(text)
    if sections is None:  # not the plain INI every configparser reads alike: ask it
        import configparser  # stdlib: re, enum, collections... (~30M instructions)

        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text, source=path)
        except Exception as exc:  # configparser.Error, or anything it did not expect
            return Marker(path, True, problem=_describe(exc))
        sections = {name: dict(parser[name]) for name in parser.sections()}
    if SECTION not in sections:
        return Marker(path, True, problem="no [%s] section" % SECTION)
    section = sections[SECTION]
    for key in _candidate_keys(lang):
        value = section.get(key.lower())  # option names are case-insensitive, as in pip
        if value is not None and value.strip():
            return Marker(path, True, text=value.strip("\n"), key=key)
    return Marker(path, True, problem="no Error key in [%s]" % SECTION)


def simple_ini(text):
    """``{section: {option: value}}`` of ``text`` when it keeps to the INI that
    ``configparser.ConfigParser(interpolation=None)`` reads the same way in every
    CPython 3.8+ (pip reads the marker with it): ``[section]`` lines, ``option = value``
    or ``option: value`` lines, both starting the line, values continued on lines
    indented by spaces or tabs, blank lines, whole-line ``#`` and ``;`` comments.  None
    for anything else (a DEFAULT section, a repeated section or option, an option
    before any section, other indentation, a ``]`` inside a section name ...), which
    configparser then reads and reports: a marker read this way costs no import."""
    sections = {}
    options = values = None  # the current section's options, the current option's lines
    for line in text.split("\n"):  # as configparser's io.StringIO splits: "\n" only
        stripped = line.strip()
        if not stripped:
            if values is not None:
                values.append("")  # kept inside a value, trailing ones dropped below
            continue
        first = stripped[0]
        if first in "#;":
            continue  # a comment, anywhere: not part of any value
        if line[0] in " \t":
            if values is None:
                return None
            values.append(stripped)
            continue
        if line[0] != first:  # leading whitespace other than spaces and tabs
            return None
        if first == "[":
            name = stripped[1:-1]
            if not stripped.endswith("]") or not name or "]" in name or \
                    name == "DEFAULT" or name in sections:
                return None
            options, values = sections.setdefault(name, {}), None
            continue
        cut = min(i for i in (stripped.find("="), stripped.find(":"), len(stripped)) if i >= 0)
        option = stripped[:cut].rstrip().lower()
        if options is None or cut == len(stripped) or not option or option in options:
            return None
        values = [stripped[cut + 1:].strip()]
        options[option] = values
    return {name: {option: "\n".join(lines).rstrip() for option, lines in opts.items()}
            for name, opts in sections.items()}
