"""The records ``detect`` builds once and passes between its modules.

One small class per record: a ``sys.path`` entry (:class:`PathEntry`, made by
``layout.classify``), a copy of a module and a shadow case (:class:`Copy`,
:class:`ShadowCase`, :class:`HiddenNamespace`, made by ``cases``), a finding
(:class:`Finding`, made by each collector).  Each has one JSON form,
``as_dict()``: what ``check --json`` prints (``docs/check-schema.md``), and what
the CLI's text output and the install report read back in their own process.
Plain ``__slots__`` classes: ``dataclasses`` would import ``inspect`` and ``re``
inside a target at its first shadow warning.  Imports nothing, so every module
of ``detect`` can import it at module level without a cycle.
"""


class PathEntry:
    """One ``sys.path`` entry and where it comes from (see ``layout``)."""

    __slots__ = ("index", "path", "realpath", "cls", "source", "exists", "duplicate_of",
                 "same_as", "foreign", "note")

    def __init__(self, index, path, realpath, cls, source, exists, duplicate_of=None,
                 same_as=None, foreign=None, note=None):
        self.index = index
        self.path = path
        self.realpath = realpath
        self.cls = cls
        self.source = source
        self.exists = exists
        self.duplicate_of = duplicate_of
        self.same_as = same_as
        self.foreign = foreign
        self.note = note

    def as_dict(self):
        return {"index": self.index, "path": self.path, "realpath": self.realpath,
                "class": self.cls, "source": self.source, "exists": self.exists,
                "duplicate_of": self.duplicate_of, "same_as": self.same_as,
                "foreign": self.foreign, "note": self.note}


class Copy:
    """One copy of a module on ``sys.path``; ``dist`` is its ``distinfo.Distribution``
    (or None), kept for the requirement checks and not part of the JSON form."""

    __slots__ = ("index", "entry", "cls", "path", "file", "distribution", "version",
                 "metadata", "pth", "editable", "dist")

    def __init__(self, index, entry, cls, path, file, dist=None, pth=None, editable=False):
        self.index = index
        self.entry = entry
        self.cls = cls
        self.path = path
        self.file = file
        self.dist = dist
        self.distribution = dist.name if dist is not None else None
        self.version = dist.version if dist is not None else None
        self.metadata = dist.path if dist is not None else None
        self.pth = pth
        self.editable = editable

    def dist_text(self):
        if self.distribution:
            return "%s %s" % (self.distribution, self.version or "(no version)")
        return "no distribution metadata"

    def as_dict(self):
        data = {"index": self.index, "entry": self.entry, "class": self.cls,
                "path": self.path, "file": self.file, "distribution": self.distribution,
                "version": self.version, "metadata": self.metadata}
        if self.pth:
            data["pth"] = self.pth
            data["editable"] = self.editable
        return data


class ShadowCase:
    """A module whose distro copy (``shadowed[0]``, and any later ones) is shadowed by
    ``winner``.  ``requirements``: ``cases.requirement_report``'s dicts.  ``severity``
    is set by ``check``; ``startup`` (who imported it while ``site`` ran) by the runtime."""

    __slots__ = ("module", "winner", "shadowed", "comparison", "other_distribution",
                 "requirements", "severity", "startup")

    def __init__(self, module, winner, shadowed, comparison, other_distribution,
                 requirements):
        self.module = module
        self.winner = winner
        self.shadowed = shadowed
        self.comparison = comparison
        self.other_distribution = other_distribution
        self.requirements = requirements
        self.severity = None
        self.startup = None

    def as_dict(self):
        data = {"module": self.module, "winner": self.winner.as_dict(),
                "shadowed": [c.as_dict() for c in self.shadowed],
                "comparison": self.comparison,
                "other_distribution": self.other_distribution,
                "requirements": self.requirements}
        if self.severity is not None:
            data["severity"] = self.severity
        return data


class HiddenNamespace:
    """A regular package ``winner`` ahead of the distro's portions of namespace package
    ``module`` (``hidden``: ``{index, entry, class, path}`` dicts): their modules
    (``submodules``, when known) cannot be imported."""

    __slots__ = ("module", "winner", "hidden", "submodules", "startup")

    def __init__(self, module, winner, hidden, submodules=None):
        self.module = module
        self.winner = winner
        self.hidden = hidden
        self.submodules = submodules
        self.startup = None

    def as_dict(self):
        return {"module": self.module, "winner": self.winner.as_dict(), "hidden": self.hidden}


class Finding:
    """One finding: a stable ``kind`` id, a severity, a readable message, details."""

    __slots__ = ("kind", "severity", "message", "details")

    def __init__(self, kind, severity, message, **details):
        self.kind = kind
        self.severity = severity
        self.message = message
        self.details = details

    def as_dict(self):
        item = {"kind": self.kind, "severity": self.severity, "message": self.message}
        item.update(self.details)
        return item


def finding(kind, severity, message, **details):
    """A finding's JSON form, for code that extends a report already in JSON (the CLI)."""
    return Finding(kind, severity, message, **details).as_dict()
