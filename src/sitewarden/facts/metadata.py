"""Versions and requirements (PEP 440, PEP 508), compared by hand where they are plain.

A distribution's own files are read by :mod:`.distribution`; here is what its
versions and the requirements on it mean: whether a version satisfies a requirement,
which of two versions is newer, the project a requirement names.

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
:func:`sitewarden.facts.vendored.modules` (imported on first need).  Garbage
never raises: unreadable values become None, unparsable versions "cannot
compare".  All of it in one module, the plain versions too: the first shadow
warning loads it, and each module more costs every warning.
Module level: sitewarden's own modules.
"""

from .distribution import canonicalize, packaging_modules, parse_version

# ---------------------------------------------------------------- requirement names


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
