"""Is a startup file what its owner installed?  A claim checked against the owner's record.

An owner (:mod:`.owners`) is a Debian package whose ``.list`` names the file, or a
distribution whose RECORD lists it: naming a file is free, so the claim is checked against
the owner's own record of the content: dpkg's ``<package>[:<arch>].md5sums`` (for a
conffile, the md5 in the ``Conffiles:`` field of the package's stanza in
``/var/lib/dpkg/status``), a RECORD line's ``sha256=`` and size.  Only the startup files are
hashed (a handful), never a package.  ``hashlib`` costs a probe ~2 ms to import (OpenSSL):
the interpreter's own ``_md5``/``_sha2`` modules are used when it has them.  What this
cannot see: an attacker who rewrites the record too (as ``debsums`` cannot).  Runs in
``check``'s probe; module level: ``os``, ``sys`` and sitewarden's own modules.
"""

import os
import sys

from . import reader
from .owners import DPKG_INFO, read_list

#: dpkg's status file: the ``Conffiles:`` field of each package (`` /etc/x <md5>``).
DPKG_STATUS = "/var/lib/dpkg/status"
#: Larger files are not hashed (``reader.READ_LIMIT``: check does not read them):
#: their claim stays unverified.
HASH_LIMIT = 1 << 20
TOO_LARGE = "%d bytes, more than check hashes"


class Verdict:
    """What checking a claim found: ``verified`` (True: the hash matches, False: it does
    not, None: no hash to check), ``record`` (``md5sums``, ``conffile``, ``RECORD``, or
    None), ``expected`` and ``actual`` (the record's hash and the file's, in the record's
    form), ``mismatch`` (what differs, in words, or why nothing could be checked)."""

    __slots__ = ("verified", "record", "expected", "actual", "mismatch")

    def __init__(self, verified=None, record=None, expected=None, actual=None, mismatch=None):
        self.verified = verified
        self.record = record
        self.expected = expected
        self.actual = actual
        self.mismatch = mismatch


def _hasher(name):
    """A new ``md5``/``sha256``/... object: the interpreter's own module when it has it
    (no OpenSSL to load), else ``hashlib``'s; None for an algorithm neither has."""
    if "hashlib" not in sys.modules:
        if name == "md5":
            module = "_md5"
        elif name in ("sha256", "sha384", "sha512"):  # 3.12 merged them into _sha2
            module = "_sha2" if sys.version_info >= (3, 12) else (
                "_sha256" if name == "sha256" else "_sha512")
        else:
            module = None
        if module is not None:
            try:
                return getattr(__import__(module), name)()
            except (ImportError, AttributeError, ValueError):
                pass
    try:
        hashlib = __import__("hashlib")  # as the modules above: only when they are missing
        if name not in hashlib.algorithms_guaranteed:
            return None
        return hashlib.new(name)
    except (ImportError, ValueError):
        return None


def _urlsafe(digest):
    """A RECORD's form of a digest: urlsafe base64 without padding."""
    import binascii  # built in or small: only once a RECORD's hash is compared

    return binascii.b2a_base64(digest, newline=False).rstrip(b"=").translate(
        bytes.maketrans(b"+/", b"-_")).decode("ascii")


def _content(path):
    """``(bytes, None)`` of the regular file at ``path`` (links followed), or ``(None,
    why)``: read by the startup files' one reader, once per check, never blocking, never
    more than :data:`HASH_LIMIT` (:data:`.reader.READ_LIMIT`)."""
    return reader.read_bytes(path, TOO_LARGE)


_md5sums = {}  # .md5sums path -> its bytes, for this check (one probe process)


def _md5sums_names(package, info):
    """The ``.md5sums`` files that may hold ``package``'s hashes: ``<package>.md5sums``,
    else each ``<package>:<arch>.md5sums`` (a ``Multi-Arch: same`` package)."""
    plain = os.path.join(info, package + ".md5sums")
    if os.path.exists(plain) or os.path.exists(os.path.join(info, package + ".list")):
        return [plain]
    try:
        return [os.path.join(info, n) for n in sorted(os.listdir(info))
                if n.startswith(package + ":") and n.endswith(".md5sums")]
    except OSError:
        return []


def _md5sums_hash(package, rel, info):
    """The md5 (hex text) that ``package``'s ``.md5sums`` records for ``rel`` (a path
    without its leading ``/``, bytes), or None."""
    needle = b"  " + rel + b"\n"
    for name in _md5sums_names(package, info):
        data = _md5sums.get(name)
        if data is None:  # a package's startup file and its module: one read
            data = _md5sums[name] = read_list(name)
        if not data:
            continue
        if not data.endswith(b"\n"):
            data += b"\n"
        at = data.find(needle)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            digest = data[start:at].strip().lower()
            if len(digest) == 32 and not digest.strip(b"0123456789abcdef"):
                return digest.decode("ascii")
            at = data.find(needle, at + 1)
    return None


def md5sums_lists(package, path, info=DPKG_INFO):
    """Does ``package``'s ``.md5sums`` have a line for ``path`` (the path as written)?"""
    return _md5sums_hash(package, os.fsencode(path).lstrip(b"/"), info) is not None


def _conffile_hash(package, path, status):
    """``(True, md5 or None)`` when ``package``'s stanza in dpkg's ``status`` lists
    ``path`` (bytes) as a conffile (the md5 None when dpkg has none yet, e.g.
    ``newconffile``), else ``(False, None)``."""
    data = read_list(status)
    if not data:
        return False, None
    head = b"Package: " + os.fsencode(package) + b"\n"
    at = 0 if data.startswith(head) else data.find(b"\n" + head)
    while at >= 0:
        end = data.find(b"\n\n", at + 1)
        stanza = data[at:end if end >= 0 else len(data)]
        field = stanza.find(b"\nConffiles:")
        if field >= 0:
            for line in stanza[field + 1:].split(b"\n")[1:]:
                if not line.startswith((b" ", b"\t")):
                    break
                parts = line.split()
                if len(parts) >= 2 and parts[0] == path:
                    digest = parts[1].lower()
                    ok = len(digest) == 32 and not digest.strip(b"0123456789abcdef")
                    return True, digest.decode("ascii") if ok else None
        if end < 0:
            break
        at = data.find(b"\n" + head, end)
    return False, None


def verify_dpkg(package, path, realpath=None, info=DPKG_INFO, status=DPKG_STATUS):
    """Check the file ``path`` (its content: links followed, ``realpath``) against what
    the Debian ``package`` recorded: the md5 of its conffile when the resolved file is one
    (the ``Conffiles:`` field of ``status``), else its ``.md5sums`` line: for the path as
    written, else (``.md5sums`` lists no links: Debian's ``sitecustomize.py`` is one to
    ``/etc``) for the resolved path when it has the same name (a link re-pointed at
    another file of the package does not borrow that file's hash).  A :class:`Verdict`."""
    realpath = realpath or os.path.realpath(path)
    expected, record = None, None
    candidates = [path]
    if realpath != path and os.path.basename(realpath) == os.path.basename(path):
        candidates.append(realpath)
    for candidate in candidates:
        raw = os.fsencode(candidate)
        if candidate.startswith("/etc/"):
            listed, digest = _conffile_hash(package, raw, status)
            if listed:
                expected, record = digest, "conffile"
                if digest is None:
                    return Verdict(None, record, mismatch="dpkg records no hash of this "
                                   "conffile yet")
                break
        expected = _md5sums_hash(package, raw.lstrip(b"/"), info)
        if expected is not None:
            record = "md5sums"
            break
    if expected is None:
        return Verdict(None, None, mismatch="%s.md5sums has no line for it" % package)
    data, why = _content(realpath)
    if data is None:
        return Verdict(None if why.endswith(TOO_LARGE[2:]) else False, record, expected,
                       mismatch=why)
    h = _hasher("md5")
    if h is None:
        return Verdict(None, record, expected, mismatch="this interpreter has no md5")
    h.update(data)
    actual = h.hexdigest()
    if actual == expected:
        return Verdict(True, record, expected, actual)
    return Verdict(False, record, expected, actual, "md5 %s, %s records %s" % (
        actual, "the conffile" if record == "conffile" else package + ".md5sums", expected))


def _record_row(line):
    """A RECORD line's fields (CSV: a quoted path, rare, holds commas and doubled quotes;
    the hash and the size never do)."""
    if not line.startswith('"'):
        return line.split(",")
    end = 1
    while True:
        end = line.find('"', end)
        if end < 0:
            return []  # no closing quote: not a row csv would read either
        if line[end + 1:end + 2] != '"':
            break
        end += 2
    rest = line[end + 1:]
    if rest and not rest.startswith(","):
        return []
    return [line[1:end].replace('""', '"')] + (rest[1:].split(",") if rest else [])


def verify_record(dist, path):
    """Check the file ``path`` (a startup file at the top of ``dist``'s site directory, or
    a module file under it) against its line in ``dist``'s RECORD: hash (``sha256=``,
    urlsafe base64) and size.  A :class:`Verdict`: None when the RECORD gives no hash for
    it, or does not list itself (not what an installer writes), or the distribution has
    no RECORD."""
    try:
        text = dist._member("RECORD") if dist.kind == "dist-info" else None
    except (OSError, ValueError):  # unreadable, or not text: nothing to verify against
        text = None
    if text is None:
        return Verdict(None, None, mismatch="%s records no hashes" % (
            "its installed-files.txt" if dist.kind == "egg-info" else "its metadata"))
    site = os.path.dirname(dist.path.rstrip("/"))
    name = os.path.relpath(path, site).replace(os.sep, "/")
    own = os.path.basename(dist.path.rstrip("/")) + "/RECORD"
    row, lists_itself = _find_rows(text, name, own)
    if row is None:
        return Verdict(None, "RECORD", mismatch="its RECORD does not list it")
    if not lists_itself:
        digest = row[1].strip() if len(row) > 1 else ""
        return Verdict(None, "RECORD", digest or None,
                       mismatch="its RECORD does not list itself (no installer wrote it)")
    return _check_row(row, path, "RECORD")


#: sitewarden's record of what ``sitewarden install`` wrote (``cli.deploy``), in its
#: package: RECORD's rows (paths relative to the site directory; a ``sitecustomize``
#: elsewhere: absolute).
DEPLOYMENT_RECORD = "sitewarden/_deployment.record"


_deployments = {}  # deployment record path -> its text, for this check (one probe process)


def verify_deployment(site_dir, path):
    """Check ``path`` (a hook file of ``site_dir``, its runtime's module, or the
    ``sitecustomize`` holding the block) against sitewarden's deployment record there."""
    record = os.path.join(site_dir, DEPLOYMENT_RECORD)
    text = _deployments.get(record)
    if text is None:  # the hook and each module of the runtime it runs: one read
        text = reader.read_text(record, HASH_LIMIT)[0]
        if text is None:
            return Verdict(None, None, mismatch="no deployment record (%s) to check it "
                           "against" % record)
        _deployments[record] = text
    rel = os.path.relpath(path, site_dir).replace(os.sep, "/")
    row = _find_rows(text, rel, DEPLOYMENT_RECORD)[0] or _find_rows(text, path, "")[0]
    if row is None:
        return Verdict(None, "deployment record", mismatch="the deployment record (%s) "
                       "does not list it" % record)
    return _check_row(row, path, "deployment record")


def _find_rows(text, name, own):
    """``(the row of name, whether the record lists own)`` of RECORD-form ``text``."""
    if '"' in text:  # a quoted path (rare): the whole CSV
        rows = [_record_row(line) for line in text.splitlines() if line.strip()]
        row = next((r for r in rows if r and r[0] == name), None)
        return row, any(r and r[0] == own for r in rows)
    text = "\n" + text.replace("\r\n", "\n")
    row = None
    at = text.find("\n%s," % name)
    if at >= 0:
        end = text.find("\n", at + 1)
        row = text[at + 1:end if end >= 0 else len(text)].split(",")
    return row, ("\n%s," % own) in text


def _check_row(row, path, record):
    """The :class:`Verdict` of ``path``'s content against its ``row`` of a RECORD-form file."""
    digest = row[1].strip() if len(row) > 1 else ""
    size = row[2].strip() if len(row) > 2 else ""
    algorithm, _, value = digest.partition("=")
    h = _hasher(algorithm) if value and algorithm not in ("md5", "sha1") else None
    if h is None:
        return Verdict(None, record, digest or None, mismatch=(
            "its %s line has no hash" % record if not value else
            "its %s's hash %s cannot be checked" % (record, algorithm)))
    data, why = _content(path)
    if data is None:
        return Verdict(None if why.endswith(TOO_LARGE[2:]) else False, record, digest,
                       mismatch=why)
    h.update(data)
    actual = "%s=%s" % (algorithm, _urlsafe(h.digest()))
    if actual != digest:
        return Verdict(False, record, digest, actual, "%s, %s says %s" % (
            actual, record, digest) + ("" if not size.isdigit() or int(size) == len(data) else
                                       " (%d bytes, %s says %s)" % (len(data), record, size)))
    if size.isdigit() and int(size) != len(data):
        return Verdict(False, record, digest, actual, "%d bytes, %s says %s" % (
            len(data), record, size))
    return Verdict(True, record, digest, actual)
