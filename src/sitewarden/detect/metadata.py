"""The text of distribution metadata, read and understood by hand.

``distinfo`` finds the distributions and asks what their metadata says; the rules
for the text itself are here: a metadata file read (bounded, non-blocking),
RFC 822 headers, ``requires.txt`` sections, ``RECORD`` lines, project names
(PEP 503), and versions and requirements (PEP 440, PEP 508).

The first shadow warning of a process must cost a few milliseconds, and
importing ``packaging`` (``re``, ``typing``, its regular expressions; and
``dataclasses``/``inspect`` for requirements and markers) costs 15-40 ms.
Nearly every version and requirement that the warning checks is plain: a
release number of digits and dots, compared with ``>=``, ``<``, ``==``, ``!=``,
``~=``..., and at most an ``extra == "..."`` marker.  For those, PEP 440 is
exact and short: compare the release numbers padded with zeros (the ``plain_``
functions; a hypothesis test holds them to ``packaging``'s answers on every input
they accept).  Everything else (epochs, pre/post/dev/local parts, wildcards,
``===``, URLs, other markers) is left to ``packaging``, through
:func:`sitewarden.detect.vendored.modules` (imported on first need).  Garbage
never raises: unreadable values become None, unparsable versions "cannot
compare".  All of it in one module, the plain versions too: the first shadow
warning loads it beside ``distinfo``, and each module more costs every warning.
Module level: ``os`` and sitewarden's own modules.
"""

import os

from .. import _swallowed

#: Largest metadata file read (a METADATA with a huge description is cut).
MAX_BYTES = 1 << 22

_packaging = []


# ---------------------------------------------------------------- reading


def read_file(path):
    """Up to MAX_BYTES of a file, through ``os.open``/``os.read`` (a fraction of what
    ``open()`` costs, which matters for hundreds of metadata files).  ``O_NONBLOCK``: a
    FIFO planted as metadata cannot hang the process.  None on error (a directory...)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, TypeError, ValueError):
        return None
    try:
        data = os.read(fd, _CHUNK)
        if len(data) < _CHUNK:
            return data  # nearly every metadata file: one read
        chunks = [data]
        size = len(data)
        while size < MAX_BYTES:
            data = os.read(fd, min(1 << 20, MAX_BYTES - size))
            if not data:
                break
            chunks.append(data)
            size += len(data)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


_CHUNK = 1 << 14


def exists(path):
    """Does ``path`` exist (for the effective ids, as ``open`` would see it)?  An
    ``access`` call: a missing file costs no exception (``read_file``'s failed ``open``
    costs four times as many instructions).  True when that cannot be asked."""
    try:
        if os.access in os.supports_effective_ids:
            return os.access(path, os.F_OK, effective_ids=True)
    except (OSError, TypeError, ValueError):
        pass
    return True


def decode(data):
    """A metadata file's bytes as text: UTF-8 (a BOM dropped), else Latin-1; None stays."""
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


# ---------------------------------------------------------------- headers, lists, names


def parse_headers(text):
    """RFC 822 headers of a METADATA / PKG-INFO text: ``[(key, value)]``, up to the body."""
    out = []
    if not text:
        return out
    end = text.find("\n\n")  # the first empty line: the body (a README) is never split
    for line in (text if end < 0 else text[:end]).splitlines():
        if line[:1] in " \t":  # (and "": \r\n line ends) a continuation, or the body
            if not line.strip():
                break
            if out:
                key, value = out[-1]
                out[-1] = (key, value + "\n" + line.strip())
                continue
        key, colon, value = line.partition(":")
        if not colon:
            if not line.strip():  # a line of other blanks ends the headers too
                break
            continue
        out.append((key.strip().lower(), value.strip()))
    return out


def requires_txt_to_requirements(text):
    """setuptools' ``requires.txt`` -> requirement strings with markers
    (``[extra]`` and ``[extra:marker]``/``[:marker]`` sections converted,
    extras normalised as PEP 685 says)."""
    out = []
    if not text:
        return out
    extra, marker = "", ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            extra, _, marker = line[1:-1].partition(":")
            extra, marker = canonicalize(extra.strip()), marker.strip()
            continue
        conditions = []
        req, semi, own_marker = line.partition(";")
        if semi and own_marker.strip():
            conditions.append("(%s)" % own_marker.strip())
        if marker:
            conditions.append("(%s)" % marker)
        if extra:
            conditions.append('extra == "%s"' % extra)
        out.append(req.strip() + (" ; " + " and ".join(conditions) if conditions else ""))
    return out


def record_path(line):
    """The path a ``RECORD`` line lists (its first CSV field)."""
    if line.startswith('"'):
        import csv  # only for a quoted RECORD line (rare)

        try:
            row = next(csv.reader([line]))
            return row[0] if row else ""
        except (csv.Error, StopIteration):
            return ""
    return line.split(",", 1)[0]


def canonicalize(name):
    """PEP 503 normalisation: lower case, runs of ``-_.`` as one ``-``."""
    text = str(name).strip().lower().replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text


def name_variants(name):
    """Module names a distribution name may stand for when the metadata lists
    no files (Fedora RPM, stale metadata): ``python-dateutil`` -> ``dateutil``,
    ``PyYAML`` -> ``yaml``..."""
    key = canonicalize(name).replace("-", "_")
    out = [key]
    for prefix in ("python_", "py_", "python", "py"):
        if key.startswith(prefix) and len(key) > len(prefix):
            out.append(key[len(prefix):])
    return out


_ASCII_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."


def requirement_name(text):
    """The project name a requirement string starts with ('' when none): its leading
    letters, digits, ``-``, ``_`` and ``.``.  One ``lstrip`` in C for the ASCII ones
    (every requirement of every distribution is asked); a character by character loop
    only past a non-ASCII letter or digit."""
    text = text.strip()
    rest = text.lstrip(_ASCII_NAME_CHARS)
    if rest and rest[0].isalnum():  # non-ASCII: as the loop below, which takes it
        end = len(text) - len(rest)
        while end < len(text) and (text[end].isalnum() or text[end] in "-_."):
            end += 1
        return text[:end]
    return text[:len(text) - len(rest)]


def needle_fragments(needles):
    """The longest separator-free run of each needle (a canonical name, bytes): folding
    maps separators only, so a text that holds a needle once folded holds its fragment
    once lowered."""
    return [max(n.split(b"-"), key=len) for n in needles]


# ---------------------------------------------------------------- plain versions, no packaging


_OPERATORS = ("~=", "==", "!=", "<=", ">=", "<", ">")  # two-character ones first
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_DIGITS = frozenset("0123456789")


def plain_release(text):
    """``"1.02.0"`` -> ``(1, 2, 0)``; None unless ``text`` is plain ``N(.N)*``."""
    if not isinstance(text, str):
        return None
    parts = text.strip().split(".")
    for part in parts:
        if not part or not _DIGITS.issuperset(part):
            return None
    return tuple(int(p) for p in parts)


def _padded(a, b):
    """Both release tuples zero-padded to one length (PEP 440: 1.0 == 1.0.0)."""
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def plain_compare(a, b):
    """-1, 0 or 1 for two plain versions (strings); None when either is not plain."""
    ra, rb = plain_release(a), plain_release(b)
    if ra is None or rb is None:
        return None
    ra, rb = _padded(ra, rb)
    return (ra > rb) - (ra < rb)


def plain_specifiers(text):
    """``">=1.0, !=1.3"`` -> ``[(op, version text, release)]``; None unless every clause is
    plain (an empty text is ``[]``: any version)."""
    out = []
    text = text.strip()
    if not text:
        return out
    for clause in text.split(","):
        clause = clause.strip()
        if clause.startswith("==="):
            return None
        for op in _OPERATORS:
            if clause.startswith(op):
                break
        else:
            return None
        version = clause[len(op):].strip()
        number = plain_release(version)
        if number is None or (op == "~=" and len(number) < 2):
            return None
        out.append((op, version, number))
    return out


def _holds(op, wanted, candidate):
    """Does release ``candidate`` satisfy ``op wanted`` (release tuples)?"""
    if op == "~=":
        # ~=X.Y.Z means >=X.Y.Z and ==X.Y.*: the candidate, zero-padded, starts with X.Y.
        prefix = wanted[:-1]
        head = (candidate + (0,) * len(prefix))[:len(prefix)]
        return _holds(">=", wanted, candidate) and head == prefix
    c, w = _padded(candidate, wanted)
    if op == "==":
        return c == w
    if op == "!=":
        return c != w
    if op == "<=":
        return c <= w
    if op == ">=":
        return c >= w
    if op == "<":
        return c < w
    return c > w  # ">"


def plain_contains(specifiers, version):
    """Does plain ``version`` satisfy every parsed specifier?  None when it is not plain."""
    candidate = plain_release(version)
    if candidate is None:
        return None
    return all(_holds(op, number, candidate) for op, _text, number in specifiers)


def plain_specifier_text(specifiers):
    """How ``packaging`` writes the set: one clause per operator and version (``==1.0``
    and ``==1`` are one; the first written stays), sorted, no spaces."""
    kept = {}
    for op, text, number in specifiers:
        if op != "~=":  # packaging compares all but ~= with trailing zeros dropped
            while len(number) > 1 and number[-1] == 0:
                number = number[:-1]
        kept.setdefault((op, number), op + text)
    return ",".join(sorted(kept.values()))


def plain_requirement(text):
    """``"name [extras] (specifiers) ; extra == 'x'"`` -> ``(name, specifiers, extra)``,
    where ``extra`` is the extra the requirement is limited to ('' for none).  None for
    anything else (URLs, other markers, non-plain versions): ``packaging`` decides those."""
    if not isinstance(text, str) or any(c.isspace() and c not in " \t" for c in text):
        return None  # packaging's requirement grammar knows only spaces and tabs
    req, semi, marker = text.partition(";")
    extra = ""
    if semi:
        extra = _extra_only(marker)
        if not extra:
            return None
    req = req.strip()
    end = 0
    while end < len(req) and req[end] in _NAME_CHARS:
        end += 1
    name, rest = req[:end], req[end:].strip()
    if not _is_name(name):
        return None
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            return None
        items = [item.strip() for item in rest[1:close].split(",")]
        if items != [""] and not all(_is_name(item) for item in items):
            return None
        rest = rest[close + 1:].strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    if "@" in rest or "(" in rest or ")" in rest:
        return None
    specifiers = plain_specifiers(rest)
    if specifiers is None:
        return None
    return name, specifiers, extra


def _extra_only(marker):
    """The extra name of a marker that is exactly ``extra == "name"``, else ''."""
    marker = marker.strip()
    while marker.startswith("(") and marker.endswith(")"):
        marker = marker[1:-1].strip()
    if not marker.startswith("extra"):
        return ""
    rest = marker[len("extra"):].strip()
    if not rest.startswith("=="):
        return ""
    value = rest[2:].strip()
    if len(value) < 3 or value[0] not in "'\"" or value[-1] != value[0]:
        return ""
    value = value[1:-1]
    return value if _is_name(value) else ""


def _is_name(text):
    """A PEP 508 name: letters, digits and ``-_.``, starting and ending alphanumeric."""
    return bool(text) and _NAME_CHARS.issuperset(text) and text[0].isalnum() and \
        text[-1].isalnum()


# ---------------------------------------------------------------- versions, requirements


def packaging_modules():
    """``(version, specifiers, requirements, markers, utils)`` or None when unavailable."""
    if not _packaging:
        try:
            from . import vendored  # only for a version the plain_ functions cannot read

            _packaging.append(vendored.modules())
        except Exception:
            _swallowed("packaging (versions, specifiers and markers are not compared)")
            _packaging.append(None)
    return _packaging[0]


def parse_version(text):
    """A ``packaging`` Version, or None (not PEP 440, or no packaging)."""
    if not text:
        return None
    mods = packaging_modules()
    if mods is None:
        return None
    try:
        return mods[0].Version(str(text).strip())
    except ValueError:  # InvalidVersion: not PEP 440
        return None


def compare_versions(a, b):
    """``"newer"``, ``"older"``, ``"same"`` (a relative to b) or ``"cannot compare"``."""
    order = plain_compare(a, b)  # plain releases: no need to import packaging
    if order is not None:
        return ("older", "same", "newer")[order + 1]
    va, vb = parse_version(a), parse_version(b)
    if va is None or vb is None:
        if a and b and str(a).strip() == str(b).strip():
            return "same"
        return "cannot compare"
    if va > vb:
        return "newer"
    if va < vb:
        return "older"
    return "same"


def marker_environment():
    return {"extra": ""}


def check_requirement(text, version):
    """Does ``version`` satisfy the requirement ``text`` (evaluated for this interpreter)?

    Returns ``(status, detail)``: status is ``ok``, ``violated``, ``cannot
    compare`` (version not PEP 440), ``not applicable`` (marker false),
    ``unparsable`` (the requirement) or ``unknown`` (no packaging).
    Plain versions and simple requirements are decided without importing
    ``packaging`` (the ``plain_`` functions above, held to packaging's answers).
    """
    simple = plain_requirement(text)
    if simple is not None:
        _name, specifiers, extra = simple
        if extra:  # evaluated as packaging does, for no extra
            return "not applicable", 'extra == "%s"' % canonicalize(extra)
        if version is None:
            return "cannot compare", "unknown version"
        ok = plain_contains(specifiers, version)
        if ok is not None:
            return ("ok" if ok else "violated"), (
                plain_specifier_text(specifiers) or "any version")
    mods = packaging_modules()
    if mods is None:
        return "unknown", "packaging is not available"
    requirements = mods[2]
    try:
        req = requirements.Requirement(text)
    except Exception as exc:
        return "unparsable", str(exc).splitlines()[0] if str(exc) else "invalid requirement"
    try:
        if req.marker is not None and not req.marker.evaluate(marker_environment()):
            return "not applicable", str(req.marker)
    except Exception as exc:
        return "unparsable", "marker: %s" % (str(exc).splitlines()[0] if str(exc) else exc)
    if version is None:
        return "cannot compare", "unknown version"
    parsed = parse_version(version)
    if parsed is None:
        return "cannot compare", "%s is not a PEP 440 version" % version
    try:
        ok = req.specifier.contains(parsed, prereleases=True)
    except Exception as exc:
        return "cannot compare", str(exc)
    return ("ok" if ok else "violated"), str(req.specifier) or "any version"
