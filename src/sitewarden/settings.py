"""The guard's settings: the environment switches and the silence files, parsed here only.

One parser for the runtime (``_watch``, ``detect.emit``, ``guard.refusal``) and the
CLI (``status`` and ``check`` say what each value they find means, and whether they
understood it).  Nothing here raises on a garbled value: an unknown word is kept
aside (``unknown``) for the CLI to report, and never lifts a block:

- ``SITEWARDEN_DISABLE``: a true word (:data:`TRUE_VALUES`, any case) turns the guard
  off; any other value (``0``, ``false``, ``maybe``...) keeps it on
  (:func:`disables`).  ``sitewarden.activate`` tests the same words itself (as bytes),
  before this module could be imported;
- ``SITEWARDEN_SILENCE``: :func:`parse_silence`;
- ``SITEWARDEN_DEBUG``: read by ``failopen``; :func:`debug_words` says which values
  are understood.

The silence files (:func:`silence_files`) say which shadows are acknowledged in
every process, whatever its environment (cron jobs, systemd units): read only once
a warning is due (``detect.emit``) or by ``check``, never at startup.  A deployment's
file (in a site directory, where pip installs) acknowledges nothing once a package's
record lists it or its group or others may write it (:func:`refusal`).
"""

import os

#: What pip's strtobool takes as true (pip 23 semantics for PIP_BREAK_SYSTEM_PACKAGES).
TRUE_VALUES = ("1", "y", "yes", "t", "true", "on")
#: ... and as false (the empty value too).
FALSE_VALUES = ("", "0", "n", "no", "f", "false", "off")

#: Warning kinds SITEWARDEN_SILENCE can name.
WARNING_KINDS = ("shadow", "path")
#: The words that acknowledge one thing, as ``status``, ``check`` and the docs spell
#: them: a shadowed module (and its submodules) by name; a startup file's code as it is,
#: pinned (``sitewarden acknowledge`` writes it: :func:`startup_pin`).
NAMED_WORDS = ("shadow:NAME[,NAME...]", "startup:PATH@sha256:DIGEST")
#: What separates a pinned startup acknowledgement's file from its digest.
PIN_MARK = "@sha256:"
#: The words that silence no kind.
NONE_WORDS = ("none",) + FALSE_VALUES
#: The words that are not module names after ``shadow:NAME`` (write ``shadow:path``).
_KEYWORDS = ("all",) + WARNING_KINDS + TRUE_VALUES + NONE_WORDS

#: The machine's silence file (every guarded interpreter reads it).
SYSTEM_FILE = "/etc/sitewarden/silence"
#: The deployment's silence file, in the site directory beside the ``sitewarden`` package.
SITE_FILE = "sitewarden.silence"

_MAX_FILE = 65536  # a silence file is a few lines: read no more than this


def is_true(value):
    """pip's reading of a boolean setting (``1``, ``yes``, ``true``...)."""
    try:
        return str(value).strip().lower() in TRUE_VALUES
    except (TypeError, ValueError, UnicodeError):  # a value str() cannot render
        return False


def disables(value):
    """Does this value of ``SITEWARDEN_DISABLE`` turn the guard off?  A true word in any
    case, as ``sitewarden.activate`` reads it (bytes there: ASCII case only)."""
    return value.isascii() and value.lower() in TRUE_VALUES


def _is_name(text):
    """A dotted module name (``yaml``, ``lazr.uri``)."""
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def parse_silence(raw, names_only=False):
    """``(kinds, names, unknown)`` of a ``SITEWARDEN_SILENCE`` value (or, ``names_only``,
    of a silence file's text).

    Words are separated by commas, semicolons or white space.  ``shadow`` and ``path``
    silence that kind of warning; ``all`` or a true word (``1``, ``yes``...) every kind;
    ``none`` or a false word (``0``, ``no``...) nothing.  ``shadow:NAME`` acknowledges
    the shadow of module ``NAME`` (and of its submodules), and the bare names that follow
    it (``shadow:yaml,six``) too.  ``kinds``: a frozenset; ``names``: a tuple in their
    order; ``unknown``: the words not understood, ignored (a tuple).  A silence file
    (``names_only``) acknowledges shadows by name only: any other word is unknown there.
    """
    kinds = set()
    names = []
    unknown = []
    listing = False  # after shadow:NAME, a bare name continues the list
    text = str(raw)
    if names_only:  # a startup:PATH@... line is one word, spaces and all (startup_words)
        text = "\n".join(x for x in text.splitlines()
                         if not x.strip().lower().startswith("startup:"))
    for sep in ",;":
        text = text.replace(sep, " ")
    for word in text.split():
        low = word.lower()
        if low.startswith("startup:") and word[8:]:  # startup_acknowledgements() reads it
            listing = False
            continue
        if low.startswith("shadow:") and _is_name(word[7:]):
            names.append(word[7:])
            listing = True
            continue
        if names_only:
            if listing and _is_name(word) and low not in _KEYWORDS:
                names.append(word)
            else:
                unknown.append(word)
                listing = False
            continue
        if low == "all" or low in TRUE_VALUES:
            kinds.update(WARNING_KINDS)
            listing = False
        elif low in WARNING_KINDS:
            kinds.add(low)
            listing = False
        elif low in NONE_WORDS:
            listing = False
        elif listing and _is_name(word):
            names.append(word)
        else:
            unknown.append(word)
            listing = False
    return frozenset(kinds), tuple(names), tuple(unknown)


def silenced_kinds(environ=None):
    """The warning kinds that ``SITEWARDEN_SILENCE`` turns off, as a frozenset."""
    environ = os.environ if environ is None else environ
    try:
        return parse_silence(environ.get("SITEWARDEN_SILENCE", ""))[0]
    except (TypeError, ValueError, UnicodeError):  # a value str() cannot render
        return frozenset()


def matches(name, names):
    """Is module ``name`` (``lazr.uri``) one of ``names`` or inside one of them?"""
    return any(name == n or name.startswith(n + ".") for n in names)


# ---------------------------------------------------------------- silence files


def own_site_dir():
    """The site directory of this copy of sitewarden (the deployment's)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def silence_files(site_dirs=None):
    """The silence files that apply, in the order they are read: the machine's
    (:data:`SYSTEM_FILE`), then each deployment's (:data:`SITE_FILE` in ``site_dirs``;
    default: this copy's site directory)."""
    dirs = [own_site_dir()] if site_dirs is None else site_dirs
    return [SYSTEM_FILE] + [os.path.join(d, SITE_FILE) for d in dirs]


def _read(path):
    """The silence file's text without its comments (``#`` to the end of a line), or
    ``None`` when there is no such file; OSError when it exists but cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO never blocks
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        if not (os.fstat(fd).st_mode & 0o170000) == 0o100000:  # S_ISREG, without stat
            raise OSError(21, "not a regular file")
        data = os.read(fd, _MAX_FILE)
    finally:
        os.close(fd)
    text = data.decode("utf-8", "replace")
    return "\n".join(line.partition("#")[0] for line in text.splitlines())


def read_silence_file(path):
    """``(text, problem)``: :func:`_read`'s text, and why an existing file cannot be
    read (``None`` when it can, or when there is no such file)."""
    try:
        return _read(path), None
    except OSError as exc:
        return None, "%s: %s" % (type(exc).__name__, exc.strerror or exc)


# ---------------------------------------------------------------- a deployment's file

#: Why a deployment's silence file acknowledges no shadow (``check``'s states,
#: docs/check-schema.md): a distribution's file list in its directory names it (a
#: package put it there: pip installs into that very directory, as root); its mode lets
#: its group or every user change it.
PLACED_BY_PACKAGE = "placed-by-package"
WRITABLE_BY_OTHERS = "writable-by-others"
_REFUSALS = {
    PLACED_BY_PACKAGE: "a package put it there (REASON), in the site directory pip installs "
                       "into; acknowledge the shadow in %s instead (sitewarden acknowledge, "
                       "without --deployment)" % SYSTEM_FILE,
    WRITABLE_BY_OTHERS: "users other than its owner may change it (REASON); make it its "
                        "owner's alone (chmod go-w FILE)",
}


def refusal(path, lister):
    """``(state, reason)``: why the deployment's silence file ``path`` acknowledges no
    shadow, or None (it does; the machine's file is not judged here): its group or
    others may write it (:data:`WRITABLE_BY_OTHERS`, ``reason`` its mode), or a package
    put it there (:data:`PLACED_BY_PACKAGE`: ``lister(path)`` is the distribution whose
    RECORD or ``installed-files.txt`` in that directory lists it; the ground floor's
    ``facts.distinfo.lister``, passed in: this module imports no product).  Raises what
    ``stat`` or the lookup raises."""
    if path == SYSTEM_FILE:
        return None
    mode = os.stat(path).st_mode
    if mode & 0o022:
        return WRITABLE_BY_OTHERS, "mode %04o" % (mode & 0o7777)
    dist = lister(path)
    if dist is None:
        return None
    return PLACED_BY_PACKAGE, "%s %s's %s lists it" % (
        dist.name, dist.version, "RECORD" if dist.kind == "dist-info" else
        "installed-files.txt")


def refusal_text(state, reason, path):
    """Why the deployment's silence file ``path`` acknowledges nothing, and what to do, in
    words (``check``, ``status``, the debug channel), after "acknowledges nothing: "."""
    return _REFUSALS.get(state, "REASON").replace("REASON", str(reason)).replace("FILE", path)


_refused = {}  # {file: (state, reason) or None}, each deployment's file judged once


def _refuses(name, path, lister):
    """Does the deployment's silence file ``path`` acknowledge nothing (:func:`refusal`)?
    Judged once per process, only when its ``shadow:name`` would silence a warning;
    ``SITEWARDEN_DEBUG=1`` says why it does not.  A failure to judge it refuses it (the
    warning is shown)."""
    if path not in _refused:
        try:
            _refused[path] = refusal(path, lister)
        except Exception:
            from . import failopen  # only when a silence file cannot be judged

            failopen.swallowed("whether a package put %s there (taken as one did: the "
                               "warning is shown)" % path)
            _refused[path] = (PLACED_BY_PACKAGE, "it could not be told")
    found = _refused[path]
    if found is not None:
        from . import failopen  # only for a refused silence file: says why under DEBUG

        failopen.tell("shadow:%s in %s acknowledges nothing: %s" % (
            name, path, refusal_text(found[0], found[1], path)))
    return found is not None


_file_names = []  # [(name, file)] of the silence files, read once per process


def _acknowledged_in_files():
    """``[(name, file)]``: the shadows the silence files acknowledge (read once)."""
    if not _file_names:
        found = []
        for path in silence_files():
            try:
                text = _read(path)
            except OSError:
                from . import failopen  # only for an unreadable silence file

                failopen.swallowed("the shadows acknowledged in %s (the warning is shown)"
                                   % path)
                continue
            if text:
                found.extend((name, path) for name in parse_silence(text, True)[1])
        _file_names.append(found)
    return _file_names[0]


def silenced(kind, key=None, environ=None, lister=None):
    """What silences this warning (``kind`` ``shadow`` or ``path``; ``key`` its module
    name for a shadow), as words for the debug channel (``SITEWARDEN_SILENCE=path``,
    ``shadow:yaml in /etc/sitewarden/silence``), or None: it is shown.  Called when a
    warning is due; never affects blocks.  A deployment's silence file silences it only
    while :func:`refusal` (``lister``: the record lookup it needs, which ``detect.emit``
    passes) finds nothing against that file."""
    environ = os.environ if environ is None else environ
    value = environ.get("SITEWARDEN_SILENCE", "")
    kinds, names, _unknown = parse_silence(value)
    if kind in kinds:
        return "SITEWARDEN_SILENCE=%s" % value
    if kind != "shadow" or not isinstance(key, str):
        return None
    found = [n for n in names if matches(key, [n])]
    if found:
        return "shadow:%s in SITEWARDEN_SILENCE" % found[0]
    for n, path in _acknowledged_in_files():
        if matches(key, [n]) and (path == SYSTEM_FILE or not _refuses(n, path, lister)):
            return "shadow:%s in %s" % (n, path)
    return None


def acknowledgements(site_dirs, environ=None):
    """``[(name, source)]``: the shadows acknowledged by name, for ``check``: those of
    ``SITEWARDEN_SILENCE`` (source ``"SITEWARDEN_SILENCE"``), then those of the silence
    files of the deployments in ``site_dirs`` (source: the file's path)."""
    environ = os.environ if environ is None else environ
    out = [(name, "SITEWARDEN_SILENCE")
           for name in parse_silence(environ.get("SITEWARDEN_SILENCE", ""))[1]]
    for path in silence_files(site_dirs):
        text, _problem = read_silence_file(path)
        if text:
            out.extend((name, path) for name in parse_silence(text, True)[1])
    return out


def startup_words(raw, lines=False):
    """The ``startup:`` words of a ``SITEWARDEN_SILENCE`` value, without their prefix
    (``lines``: of a silence file's text, where a line that starts with ``startup:`` is
    one word, a path with spaces included): the startup code they acknowledge."""
    out = []
    for line in str(raw).splitlines() if lines else [str(raw)]:
        if lines and line.strip().lower().startswith("startup:"):
            out.append(line.strip()[8:])
            continue
        for sep in ",;":
            line = line.replace(sep, " ")
        out.extend(word[8:] for word in line.split()
                   if word.lower().startswith("startup:") and word[8:])
    return out


def startup_pin(word):
    """``(path, digest)`` of a pinned acknowledgement (``PATH@sha256:HEX``, the text after
    ``startup:``), or ``(word, None)``: a bare name pins nothing, so acknowledges nothing."""
    path, mark, digest = word.rpartition(PIN_MARK)
    digest = digest.strip().lower()
    if mark and path and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest):
        return path, digest
    return word, None


def short_word(word):
    """A ``startup:`` word (the text after it) as messages name it: a pin's digest cut to
    its first 12 digits."""
    path, digest = startup_pin(word)
    return "startup:%s" % (word if digest is None else "%s%s%s..." % (
        path, PIN_MARK, digest[:12]))


def startup_acknowledgements(site_dirs=None, environ=None):
    """``[(word, source)]``: the startup code acknowledged by ``startup:`` words (``word``:
    the text after it), in ``SITEWARDEN_SILENCE`` (source ``"SITEWARDEN_SILENCE"``) and in
    the silence files (:func:`silence_files`: the machine's, the deployments')."""
    environ = os.environ if environ is None else environ
    out = [(word, "SITEWARDEN_SILENCE")
           for word in startup_words(environ.get("SITEWARDEN_SILENCE", ""))]
    for path in silence_files(site_dirs):
        text, _problem = read_silence_file(path)
        if text:
            out.extend((word, path) for word in startup_words(text, lines=True))
    return out


def canonical(name):
    """A distribution name as PEP 503 compares it (``Foo_Bar`` -> ``foo-bar``)."""
    out = str(name).lower()
    for sep in ("_", "."):
        out = out.replace(sep, "-")
    while "--" in out:
        out = out.replace("--", "-")
    return out


def debug_words():
    """The values of ``SITEWARDEN_DEBUG`` that ``failopen`` understands (lower case)."""
    return TRUE_VALUES + FALSE_VALUES + ("raise",)


def break_system_packages_env(environ=None):
    """``PIP_BREAK_SYSTEM_PACKAGES`` set to a true value (pip's override)."""
    environ = os.environ if environ is None else environ
    return is_true(environ.get("PIP_BREAK_SYSTEM_PACKAGES", ""))
