"""Whether the acknowledgements of startup code hold: never by a name, always by content.

``sitewarden acknowledge`` accepts one startup file as it is: it writes
``startup:PATH@sha256:DIGEST``, the digest (:func:`pin`) of the file's path, its owner
and every byte its code runs (the file, and each module, bytecode file, extension or
archive its analysis read: ``module_files``).  Here ``check`` and the install report's
child (the probe) read those words back (``settings.startup_acknowledgements``): a pin
that holds lifts the file's findings to ``info``; a file, owner or code that is not what
was acknowledged leaves them standing, saying so; a word that names no startup file, or
pins nothing (a bare name), acknowledges nothing and is reported as such.  Imported only
when there is a word to read, or a pin to give (``inventory.PIN_ALL``).  Module level:
``os`` and sitewarden's modules.
"""

import os
import sys

from .. import _swallowed, pathfacts, settings
from ..facts import distinfo, integrity, owners, reader
from ..facts.reader import open_regular, read_bytes
from ..facts.records import ID_MARK, Finding

# ACKNOWLEDGEABLE: the findings an acknowledgement lifts; UNPINNABLE: what no pin
# covers; said beside the records, where the CLI reads them without this module.
from ..facts.startup_records import ACKNOWLEDGEABLE, UNPINNABLE, Acknowledgement
from . import line_checks

#: The states of an acknowledgement that acknowledges nothing on any interpreter (one
#: that names another interpreter's startup file, ``not-startup-file``, is not reported).
UNMATCHED = ("no-such-file", "unpinned", "cannot-pin", "untrusted-source", "not-administrator")
#: The states of an acknowledgement whose silence file may not acknowledge startup code
#: at all: whoever wrote it, it is not the administrator's word.
REFUSED = ("untrusted-source", "not-administrator")
#: The pin's format, hashed first: a new format never matches an old pin.
_FORMAT = b"sitewarden startup pin 1\0"
_CHUNK = 1 << 16


def runs(f):
    """The files ``f``'s code runs beside ``f`` itself: each module file its analysis read
    (sources, the bytecode used instead, extensions, archives), sorted."""
    return sorted({p for x in f.executable() for p in x.module_files} | set(f.module_files))


def pin(f):
    """The hex sha256 an acknowledgement of the startup file ``f`` pins: its path, its
    owner (kind, package or distribution, version) and, by path, the sha256 of ``f`` and
    of each file :func:`runs` names; None when one of them cannot be read."""
    h = integrity._hasher("sha256")
    data, _why = read_bytes(f.path)
    if h is None or data is None:
        return None
    o = f.owner
    h.update(_FORMAT + b"\0".join(os.fsencode(str(v)) for v in (
        f.path, o.kind, o.package or o.distribution, o.version)) + b"\0")
    h.update(_sha256(data) + b"\0")
    for path in runs(f):
        digest = _file_sha256(path)
        if digest is None:
            return None
        h.update(os.fsencode(path) + b"\0" + digest + b"\0")
    return h.hexdigest()


def _sha256(data):
    h = integrity._hasher("sha256")
    h.update(data)
    return h.hexdigest().encode("ascii")


def _file_sha256(path):
    """The hex sha256 of the regular file ``path`` (bytes), or None: opened by the one
    reader (never a FIFO or device), never raises."""
    h = integrity._hasher("sha256")
    fd = open_regular(path)[0]
    if fd is None:
        return None
    try:
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return h.hexdigest().encode("ascii")
            h.update(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)


def word(f, digest):
    """The acknowledgement of ``f`` pinned to ``digest``, as a silence file holds it."""
    return "startup:%s%s%s" % (f.path, settings.PIN_MARK, digest)


def apply(files, found, words, pin_all=False):
    """Read the acknowledgements ``words`` (``[(word, source)]``) against the startup
    ``files`` and their findings ``found``: lift those a pin holds for, say of the others
    that their acknowledgement no longer holds; with ``pin_all`` (``sitewarden
    acknowledge``'s probe) give each acknowledgeable finding its ``pin``, the word that
    would acknowledge it.  Returns ``(acknowledgements, findings)``: an
    :class:`Acknowledgement` per word, and ``unmatched-acknowledgement`` for each that
    acknowledges nothing anywhere."""
    by_path = {}
    for f in files:
        by_path.setdefault(f.path, f)
        by_path.setdefault(f.realpath, f)
    liftable, hidden = {}, set()
    for x in found:
        f = by_path.get(x.details.get("file"))
        if x.kind in ACKNOWLEDGEABLE and f is not None:
            liftable.setdefault(f.path, []).append(x)
            if UNPINNABLE in (x.details.get("capabilities") or ()):
                hidden.add(f.path)
    for path in hidden:  # what it runs is not all in the files a pin covers
        liftable.pop(path)
    pins = {}

    def pinned(f):
        if f.path not in pins:
            pins[f.path] = pin(f)
        return pins[f.path]

    if pin_all:
        for path, xs in liftable.items():
            digest = pinned(by_path[path])
            for x in xs:
                x.details["pin"] = word(by_path[path], digest) if digest else None
    refused = {source: _refused(source) for _w, source in set(words)}
    out = [Acknowledgement(w, source, _named(w, by_path), refused[source]) if refused[source]
           else _state(w, source, by_path, liftable, pinned, hidden) for w, source in words]
    for ack in sorted(out, key=lambda a: a.state != "acknowledged"):
        for x in liftable.get(getattr(by_path.get(ack.file), "path", None), ()):
            _mark(x, ack)
    return out, [_unmatched(a) for a in out if a.state in UNMATCHED]


def _named(w, by_path):
    """The startup file the word ``w`` names, when it is one (else None)."""
    path = settings.startup_pin(w)[0]
    return path if path in by_path else None


def _refused(source):
    """Why no ``startup:`` word of the silence file ``source`` acknowledges anything:
    ``not-administrator`` (a package can put it there: :func:`_not_administrators`),
    ``untrusted-source`` (others may change it), or None (``SITEWARDEN_SILENCE``, or
    the machine's file as root keeps it)."""
    if source == "SITEWARDEN_SILENCE":
        return None
    if _not_administrators(source):
        return "not-administrator"
    return "untrusted-source" if _others_may_change(source) else None


def _not_administrators(source):
    """Is the silence file ``source`` one a package can put there?  Only the machine's
    file (:data:`settings.SYSTEM_FILE`) may be the administrator's: a deployment's
    ``sitewarden.silence`` is in a site directory, where a wheel can install one (and
    ``_deployment.json`` beside it); the machine's file too when it leads into a site
    directory, or when a Debian package's list or a distribution's file list names it
    (a package installed it)."""
    if source != settings.SYSTEM_FILE:
        return True
    site = sys.modules.get("site")
    user, dirs = reader.site_dirs(site) if site is not None else (None, [])
    dirs = [d for d in [user] + list(dirs) if isinstance(d, str) and d]
    real = os.path.realpath(source)
    if any(pathfacts.under(real, os.path.realpath(d)) for d in dirs):
        return True
    if owners.dpkg_owners([source]):
        return True
    for d in dirs:
        rel = os.path.relpath(source, d).replace(os.sep, "/")
        try:
            if any(dist.records(rel) for dist in distinfo.listing(
                    distinfo.distributions(d), rel)):
                return True
        except Exception:
            _swallowed("whether a distribution in %s lists %s (taken as one that does)"
                       % (d, source))
            return True
    return False


def _others_may_change(source):
    """Someone besides this user and root may change the silence file ``source`` (or
    its directory): what they write there must not lift a finding."""
    if source == "SITEWARDEN_SILENCE":
        return False  # this process's own environment
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    return bool(line_checks.file_writers(source, euid)
                or line_checks.writers(os.path.dirname(source), euid, {}))


def _state(w, source, by_path, liftable, pinned, hidden):
    path, digest = settings.startup_pin(w)
    if digest is None:
        return Acknowledgement(w, source, None, "unpinned")
    f = by_path.get(path)
    if f is None:
        return Acknowledgement(w, source, path, "not-startup-file" if os.path.lexists(path)
                               else "no-such-file")
    if f.path in hidden:
        return Acknowledgement(w, source, path, "cannot-pin")
    if f.path not in liftable:
        return Acknowledgement(w, source, path, "nothing-to-acknowledge")
    return Acknowledgement(w, source, path,
                           "acknowledged" if pinned(f) == digest else "changed")


def _mark(x, ack):
    """Lift ``x`` (``ack`` holds), or say its acknowledgement no longer holds."""
    if x.details.get("acknowledged"):
        return
    where = "%s in %s" % (settings.short_word(ack.word), ack.source)
    if ack.state == "acknowledged":
        x.details.update(acknowledged=True, acknowledged_by=ack.source,
                         unacknowledged_severity=x.severity)
        x.severity = "info"
        x.message += "; acknowledged as it is (%s)" % where
    elif ack.state in REFUSED and not x.details.get("acknowledgement_refused"):
        x.details["acknowledgement_refused"] = ack.source
        x.message += "; NOT acknowledged: %s %s" % (where, ack.meaning())
    elif ack.state == "changed" and not x.details.get("acknowledgement_changed"):
        x.details["acknowledgement_changed"] = ack.source
        # ID_MARK: the id the finding has now, which the CLI computes (records.identify)
        x.message += ("; NOT acknowledged: the file, its owner or the code it runs changed "
                      "since it was acknowledged (%s): review it, then acknowledge it again "
                      "(sitewarden acknowledge %s)" % (where, ID_MARK))


def _unmatched(ack):
    """``unmatched-acknowledgement`` (info): ``ack`` acknowledges nothing on any
    interpreter (no such file, no pin, code no pin covers), though whoever wrote it meant
    it to."""
    return Finding(
        "unmatched-acknowledgement", "info",
        "%s in %s %s; remove it from %s" % (
            settings.short_word(ack.word), ack.source, ack.meaning(),
            "this environment" if ack.source == "SITEWARDEN_SILENCE" else ack.source),
        acknowledgement=ack.word, source=ack.source, state=ack.state)
