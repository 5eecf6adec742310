"""The records ``detect`` builds once and passes between its modules, and the CLI reads.

One small class per record: a ``sys.path`` entry (:class:`PathEntry`, made by
``layout.classify``), a copy of a module and a shadow case (:class:`Copy`,
:class:`ShadowCase`, :class:`HiddenNamespace`, :class:`Requirement`, made by
``cases``), a finding (:class:`Finding`, made by each collector), the marker's state
(:class:`MarkerState`), and ``check``'s report and its sections (:class:`CheckReport`;
its ``startup`` section's records are in :mod:`sitewarden.facts.startup_records`).
Each has one JSON form, the same two methods on every record: ``as_json()``, what
``check --json`` prints (``docs/check-schema.md``), and ``from_json(data)``, the
record again from that form (the CLI reads the probe's report back with it, once:
the probe always runs the CLI's own copy of sitewarden, so the forms match; a key
missing is None, a key unknown is dropped).  Both are :class:`Record`'s, driven by
each class's ``FIELDS``.  Plain ``__slots__`` classes: ``dataclasses`` would import
``inspect`` and ``re`` inside a target at its first shadow warning.  Imports nothing
at module level (but ``os``), so every module of ``detect`` can import it without a cycle.
"""

import os


def _json(value):
    """``value``'s JSON form: records by ``as_json``, lists item by item."""
    if isinstance(value, Record):
        return value.as_json()
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


class Record:
    """The JSON form of a record: ``FIELDS`` are ``(JSON key, attribute, record class
    of the value, or of each item of a list, or None)``; the keys in ``OPTIONAL`` are
    left out of the form while their value is None."""

    __slots__ = ()
    FIELDS = ()
    OPTIONAL = ()

    def as_json(self):
        data = {}
        for key, attr, _kind in self.FIELDS:
            value = getattr(self, attr)
            if value is None and key in self.OPTIONAL:
                continue
            data[key] = _json(value)
        return data

    @classmethod
    def make(cls, **values):
        """A record from its attributes' values (the others None)."""
        self = cls._blank()
        for attr, value in values.items():
            setattr(self, attr, value)
        return self

    @classmethod
    def _blank(cls):
        self = cls.__new__(cls)
        for klass in cls.__mro__:
            for attr in getattr(klass, "__slots__", ()):
                setattr(self, attr, None)
        return self

    @classmethod
    def from_json(cls, data):
        self = cls._blank()
        for key, attr, kind in cls.FIELDS:
            value = data.get(key)
            if value is not None and kind is not None:
                value = [kind.from_json(v) for v in value] if isinstance(value, list) \
                    else kind.from_json(value)
            setattr(self, attr, value)
        return self

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % (attr, getattr(self, attr)) for _key, attr, _kind in self.FIELDS[:3]))


def _fields(*names):
    """``FIELDS`` of plain values whose attribute is named as their key."""
    return tuple((name, name, None) for name in names)


class PathEntry(Record):
    """One ``sys.path`` entry and where it comes from (see ``layout``)."""

    __slots__ = ("index", "path", "realpath", "cls", "source", "exists", "duplicate_of",
                 "same_as", "foreign", "note")
    FIELDS = _fields("index", "path", "realpath") + (("class", "cls", None),) + _fields(
        "source", "exists", "duplicate_of", "same_as", "foreign", "note")

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


class Copy(Record):
    """One copy of a module on ``sys.path``; ``dist`` is its ``distribution.Distribution``
    (or None), kept for the requirement checks and not part of the JSON form."""

    __slots__ = ("index", "entry", "cls", "path", "file", "distribution", "version",
                 "metadata", "pth", "editable", "dist")
    FIELDS = _fields("index", "entry") + (("class", "cls", None),) + _fields(
        "path", "file", "distribution", "version", "metadata", "pth", "editable")
    OPTIONAL = ("pth", "editable")

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
        """Its distribution and version: ``six 1.16.0``, ``six (no version)``, or
        ``no distribution metadata``."""
        if self.distribution:
            return "%s %s" % (self.distribution, self.version or "(no version)")
        return "no distribution metadata"

    def text(self):
        """The one text form of a copy, in ``check``, the install report and the apt
        hook: ``PATH (DISTRIBUTION VERSION)`` (see :meth:`dist_text`)."""
        return "%s (%s)" % (self.path, self.dist_text())

    def as_json(self):
        data = Record.as_json(self)
        if not self.pth:
            data.pop("pth", None)
            data.pop("editable", None)
        return data


class Requirement(Record):
    """A distro distribution's requirement on a shadowed module's distribution, checked
    against the copy imported (``cases.requirement_report``); ``status``: ``ok``,
    ``violated``, ``cannot compare``, ``other distribution``, ``unparsable``."""

    __slots__ = ("consumer", "consumer_version", "consumer_metadata", "requirement",
                 "requires", "installed", "status", "detail")
    FIELDS = _fields(*__slots__)

    def __init__(self, consumer, consumer_version, consumer_metadata, requirement, requires,
                 installed, status, detail):
        self.consumer = consumer
        self.consumer_version = consumer_version
        self.consumer_metadata = consumer_metadata
        self.requirement = requirement
        self.requires = requires
        self.installed = installed
        self.status = status
        self.detail = detail

    def broken(self):
        return self.status in ("violated", "other distribution")

    def consumer_text(self):
        """``httplib2 0.20.4``, or the name alone without a version."""
        return " ".join(p for p in (self.consumer, self.consumer_version) if p)


class Violation(Requirement):
    """A requirement violated by what is imported or seen (``shadowscan``): also the
    consumer's class, where the version installed is, and who sees it (``seen_by``:
    ``import``, ``metadata``)."""

    __slots__ = ("consumer_class", "installed_location", "seen_by")
    FIELDS = Requirement.FIELDS + _fields(*__slots__)

    def __init__(self, dist, cls, text, requires, installed, location, how, status, detail):
        Requirement.__init__(self, dist.name, dist.version, dist.path, text, requires,
                             installed, status, detail)
        self.consumer_class = cls
        self.installed_location = location
        self.seen_by = [how]


class Broken(Record):
    """A requirement a shadow breaks, as its one finding lists it (``breaks``): who
    requires it (``consumer``, its version and its ``sys.path`` class), the requirement,
    the version imported, and ``status`` (``violated``, ``other distribution``)."""

    __slots__ = ("consumer", "consumer_version", "consumer_class", "requirement",
                 "installed", "status")
    FIELDS = _fields(*__slots__)

    @classmethod
    def of(cls, r, consumer_class):
        """The :class:`Requirement` (or :class:`Violation`) ``r``, broken."""
        return cls.make(consumer=r.consumer, consumer_version=r.consumer_version,
                        consumer_class=consumer_class, requirement=r.requirement,
                        installed=r.installed, status=r.status)

    def text(self):
        """``httplib2 0.20.4 (distro) requires 'six>=1.16'``."""
        return "%s (%s) requires '%s'" % (" ".join(
            p for p in (self.consumer, self.consumer_version) if p), self.consumer_class,
            self.requirement)


#: A shadow's acknowledgement (``shadowscan._acknowledge``): in the JSON form once set.
_ACKNOWLEDGED = ("acknowledged", "acknowledged_by", "unacknowledged_severity")


class ShadowCase(Record):
    """A module whose distro copy (``shadowed[0]``, and any later ones) is shadowed by
    ``winner``.  ``requirements``: :class:`Requirement` records.  ``severity``
    is set by ``check``; ``startup`` (who imported it while ``site`` ran) by the runtime."""

    __slots__ = ("module", "winner", "shadowed", "comparison", "other_distribution",
                 "requirements", "severity", "startup") + _ACKNOWLEDGED
    FIELDS = (("module", "module", None), ("winner", "winner", Copy),
              ("shadowed", "shadowed", Copy)) + _fields(
        "comparison", "other_distribution") + (
        ("requirements", "requirements", Requirement),) + _fields("severity", *_ACKNOWLEDGED)
    OPTIONAL = ("severity",) + _ACKNOWLEDGED

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
        self.acknowledged = self.acknowledged_by = self.unacknowledged_severity = None


class Portion(Record):
    """A namespace package's portion in a ``sys.path`` entry."""

    __slots__ = ("index", "entry", "cls", "path")
    FIELDS = _fields("index", "entry") + (("class", "cls", None), ("path", "path", None))

    def __init__(self, index, entry, cls, path):
        self.index = index
        self.entry = entry
        self.cls = cls
        self.path = path


class HiddenNamespace(Record):
    """A regular package ``winner`` ahead of the distro's portions of namespace package
    ``module`` (``hidden``: :class:`Portion` records): their modules (``submodules``,
    when known) cannot be imported."""

    __slots__ = ("module", "winner", "hidden", "submodules", "startup") + _ACKNOWLEDGED
    FIELDS = (("module", "module", None), ("winner", "winner", Copy),
              ("hidden", "hidden", Portion)) + _fields(*_ACKNOWLEDGED)
    OPTIONAL = _ACKNOWLEDGED

    def __init__(self, module, winner, hidden, submodules=None):
        self.module = module
        self.winner = winner
        self.hidden = hidden
        self.submodules = submodules
        self.startup = None
        self.acknowledged = self.acknowledged_by = self.unacknowledged_severity = None


class Finding(Record):
    """One finding: a stable ``kind`` id, a severity, a readable message, details (its
    JSON form holds them beside the first three)."""

    __slots__ = ("id", "kind", "severity", "message", "details")
    FIELDS = _fields("id", "kind", "severity", "message")
    OPTIONAL = ("id",)  # set by the CLI (``CheckReport.as_json``), never in the probe

    def __init__(self, kind, severity, message, **details):
        self.id = None
        self.kind = kind
        self.severity = severity
        self.message = message
        self.details = details

    def as_json(self):
        item = Record.as_json(self)
        item.update(self.details)
        return item

    @classmethod
    def from_json(cls, data):
        self = super().from_json(data)
        known = [key for key, _attr, _kind in cls.FIELDS]
        self.details = {k: v for k, v in data.items() if k not in known}
        return self


def finding(kind, severity, message, **details):
    """A finding's JSON form, for code that extends a report already in JSON."""
    return Finding(kind, severity, message, **details).as_json()


# ---------------------------------------------------------------- check's report


class MarkerState(Record):
    """The PEP 668 marker and virtual environment facts of an interpreter."""

    __slots__ = ("virtualenv", "marker_path", "marker_exists", "applies", "message",
                 "message_key", "problem", "diverted_to", "removed_from")
    FIELDS = _fields(*__slots__)
    #: ``diverted_to``: where ``dpkg-divert --local --rename`` keeps the marker of an image
    #: that opted out (PEP 668's advice for single-application images), or None.
    #: ``removed_from``: the Debian package whose file list names the marker, when it is
    #: gone and not diverted: someone removed it (``marker-removed``), or None.
    OPTIONAL = ("diverted_to", "removed_from")

    @classmethod
    def read(cls, environ=None, venv=None):
        """The running interpreter's (``venv``: whether it is a virtual environment's,
        when ``site``, which tells, did not run)."""
        from . import marker  # the reader; this module imports nothing at module level

        venv = marker.in_virtualenv() if venv is None else venv
        found = marker.read(environ=environ)
        self = cls.__new__(cls)
        self.virtualenv = venv
        self.marker_path = found.path
        self.marker_exists = found.exists
        self.applies = bool(found.exists and not venv)
        self.message = found.message if found.exists else None
        self.message_key = found.key
        self.problem = found.problem
        diverted = found.path + ".distrib"  # dpkg-divert --rename's name for the original
        self.diverted_to = diverted if not found.exists and marker.marker_exists(
            diverted) else None
        self.removed_from = None  # the probe asks dpkg (owners.marker_removed_from)
        return self


class ProbeFacts(Record):
    """What the CLI learns of a target before anything else (``probe.facts``): its
    install scheme, site directories, marker state... (``cli.targets.Target`` reads it)."""

    __slots__ = ("format", "implementation", "version", "version_string", "executable",
                 "prefix", "base_prefix", "virtualenv", "scheme", "purelib", "platlib",
                 "stdlib", "scripts", "site_dirs", "user_site", "user_site_enabled",
                 "sitecustomize", "cache_tag", "marker", "uid")
    FIELDS = _fields(*__slots__[:18]) + (("marker", "marker", MarkerState),
                                         ("uid", "uid", None))


class Interpreter(Record):
    """``check``'s ``interpreter`` section (``check.interpreter_facts``)."""

    __slots__ = ("executable", "version", "implementation", "prefix", "base_prefix", "cwd",
                 "flags", "sys_path")
    FIELDS = _fields(*__slots__)


class DistCopy(Record):
    """One copy of a distribution's metadata on ``sys.path`` (``shadowscan``)."""

    __slots__ = ("name", "version", "metadata", "kind", "installer", "index", "cls",
                 "location")
    FIELDS = _fields("name", "version", "metadata", "kind", "installer", "index") + (
        ("class", "cls", None), ("location", "location", None))

    def __init__(self, index, dist, cls):
        self.name, self.version, self.metadata = dist.name, dist.version, dist.path
        self.kind, self.installer = dist.kind, dist.installer
        self.index, self.cls, self.location = index, cls, dist.location


class ShadowedMetadata(Record):
    """A distribution whose metadata seen first (``visible``) hides a watched copy's."""

    __slots__ = ("name", "visible", "shadowed", "modules_present")
    FIELDS = (("name", "name", None), ("visible", "visible", DistCopy),
              ("shadowed", "shadowed", DistCopy), ("modules_present", "modules_present", None))

    def __init__(self, name, visible, shadowed, modules_present):
        self.name = name
        self.visible = visible
        self.shadowed = shadowed
        self.modules_present = modules_present


class Layout(Record):
    """``check``'s ``layout`` section: ``sys.path``'s entries and the directories known."""

    __slots__ = ("venv", "scheme", "stdlib", "local", "user", "user_enabled", "system",
                 "distro", "pythonpath", "safe_path", "script_entry", "entries")
    FIELDS = _fields(*__slots__[:-1]) + (("entries", "entries", PathEntry),)


class RefusedSilenceFile(Record):
    """A deployment's silence file whose ``shadow:`` words (``names``) acknowledge nothing
    here: ``state`` and ``reason``, ``settings.refusal``'s."""

    __slots__ = ("path", "state", "reason", "names")
    FIELDS = _fields(*__slots__)


class Shadowing(Record):
    """``check``'s ``shadowing`` section (built by ``make``; no refused file: left out)."""

    __slots__ = ("modules", "hidden_namespaces", "distributions", "violations",
                 "refused_silence_files")
    FIELDS = (("modules", "modules", ShadowCase),
              ("hidden_namespaces", "hidden_namespaces", HiddenNamespace),
              ("distributions", "distributions", ShadowedMetadata),
              ("violations", "violations", Violation),
              ("refused_silence_files", "refused_silence_files", RefusedSilenceFile))
    OPTIONAL = ("refused_silence_files",)


class PathSection(Record):
    """``check``'s ``path`` section: the findings about ``sys.path``."""

    __slots__ = ("findings",)
    FIELDS = (("findings", "findings", Finding),)

    def __init__(self, findings):
        self.findings = findings


#: What a finding's ``id`` leaves out: its words and its verdict, which may change while
#: the finding stays the same (a new sitewarden's wording, an acknowledgement, the pin
#: that would acknowledge it), the fix, which names this host's interpreter, and what a
#: shadow breaks (``breaks``: the requirements of the day; the shadow is the cause).
_NOT_IDENTITY = ("id", "message", "severity", "acknowledged", "acknowledged_by",
                 "unacknowledged_severity", "acknowledgement_changed", "acknowledgement_refused",
                 "pin", "command", "breaks", "fix", "fix_reason", "acknowledged_at")
#: Where a finding's fix names the finding's own id (``sitewarden quarantine ID``): the
#: probe writes this mark, which no path or line holds, and :func:`identify` puts the id
#: in its place once the CLI has computed it.
ID_MARK = "\x00id\x00"
#: How many hex digits of an id a printed command gives (``quarantine`` and
#: ``acknowledge`` take 8 or more).
SHOWN = 12


def _digest(value):
    """A short stable digest of a JSON value (sha256 of its canonical text, 16 hex
    digits); ``json`` is not imported: ``check``'s path spares it (it brings ``re``)."""
    return _sha256()(_canonical(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _sha256():
    """The interpreter's own sha256 (``_sha2``, 3.12+; ``_sha256`` before): ``hashlib``
    loads OpenSSL first, ~5 ms of every ``check``; ``hashlib``'s where neither exists.
    Found once per process: pip 26.3 fails an install that tries an import once it has
    started, even one that fails (``_sha2`` before 3.12)."""
    if _SHA256:
        return _SHA256[0]
    for name in ("_sha2", "_sha256"):
        try:
            _SHA256.append(__import__(name).sha256)  # reason: finding ids, built in
            return _SHA256[0]
        except (ImportError, AttributeError):
            continue
    import hashlib  # reason: an interpreter built without its own sha256

    _SHA256.append(hashlib.sha256)
    return _SHA256[0]


_SHA256 = []


def _canonical(value):
    """One text per JSON value, whatever the order of its keys: sorted objects, ``repr``
    of strings and numbers (the same on every Python 3)."""
    if isinstance(value, dict):
        return "{%s}" % ",".join("%r:%s" % (k, _canonical(value[k])) for k in sorted(value))
    if isinstance(value, (list, tuple)):
        return "[%s]" % ",".join(_canonical(v) for v in value)
    return repr(value)


#: What a startup file's record in the ``startup`` section says of its content.
_CONTENT = ("file_type", "size", "decode_error", "evidence")


def _contents(startup):
    """``{startup file path: what identifies its content}``, from the ``startup``
    section's JSON form: the hash its owner check computed (``owner.actual``), its lines
    as ``site`` reads them (number and text), what it is when not read."""
    out = {}
    for f in (startup or {}).get("files") or ():
        content = {k: f.get(k) for k in _CONTENT}
        content.update(actual=(f.get("owner") or {}).get("actual"), lines=[
            [x.get(k) for k in ("number", "text")] for x in f.get("lines") or ()])
        out[f.get("path")] = content
    return out


def finding_id(finding, contents):
    """A finding's ``id``: the same on the next run and on another host for the same
    finding, a new one when the startup file it is about changes (``contents``:
    :func:`_contents`)."""
    identity = {k: v for k, v in finding.details.items() if k not in _NOT_IDENTITY}
    content = contents.get(finding.details.get("file"))
    return _digest(dict(identity, kind=finding.kind, content=content))


def identify(findings, contents):
    """Set each finding's ``id`` (:func:`finding_id`; ``contents``: :func:`_contents`) and
    put it where its message and its ``command`` name it (:data:`ID_MARK`)."""
    for f in findings:
        f.id = finding_id(f, contents)
        if ID_MARK in f.message:
            f.message = f.message.replace(ID_MARK, f.id[:SHOWN])
        command = f.details.get("command")
        if isinstance(command, str) and ID_MARK in command:
            f.details.update(command=command.replace(ID_MARK, f.id[:SHOWN]))


class CheckReport(Record):
    """``check``'s report: made in the target (``check.collect``), completed by the CLI
    (``guard``, ``environment``, ``silence_files``; ``aliases`` with ``--all``; ``host``
    and ``time`` when it reads the probe's report back, and then each finding's ``id``
    in its JSON form: computed on the CLI's side, the probe imports no ``hashlib``).  A
    section it does not know (a collector added since) is kept as it came, in
    ``sections``, and printed with the rest."""

    __slots__ = ("schema", "sitewarden", "host", "time", "interpreter", "marker", "findings",
                 "layout", "shadowing", "path", "guard", "environment", "silence_files",
                 "aliases", "verdict", "sections")
    FIELDS = (("schema", "schema", None), ("sitewarden", "sitewarden", None),
              ("host", "host", None), ("time", "time", None),
              ("interpreter", "interpreter", Interpreter), ("marker", "marker", MarkerState),
              ("findings", "findings", Finding), ("layout", "layout", Layout),
              ("shadowing", "shadowing", Shadowing), ("path", "path", PathSection),
              ("guard", "guard", None), ("environment", "environment", None),
              ("silence_files", "silence_files", None), ("aliases", "aliases", None),
              ("verdict", "verdict", None))
    OPTIONAL = ("host", "time", "layout", "shadowing", "path", "guard", "environment",
                "silence_files", "aliases", "verdict")

    def __init__(self, schema, sitewarden, interpreter, marker):
        self.schema = schema
        self.sitewarden = sitewarden
        self.host = self.time = None
        self.interpreter = interpreter
        self.marker = marker
        self.findings = []
        self.layout = self.shadowing = self.path = self.guard = None
        self.environment = self.silence_files = self.aliases = self.verdict = None
        self.sections = {}

    def identify(self):
        """Each finding's ``id``, and its fix completed with it (:func:`identify`)."""
        identify(self.findings + (self.path.findings if self.path else []),
                 _contents(self.section("startup")))

    def put(self, name, data):
        """A collector's section."""
        if name in [key for key, _attr, _kind in self.FIELDS]:
            setattr(self, name, data)
        else:
            self.sections[name] = data

    def section(self, name):
        """A section this record does not know, as it came (None when absent)."""
        return self.sections.get(name)

    def as_json(self):
        if self.host is not None:  # the CLI's copy: each finding's id
            self.identify()
        data = {k: _json(v) for k, v in self.sections.items()}
        data.update(Record.as_json(self))
        return data

    @classmethod
    def from_json(cls, data):
        """The report read back (the CLI reads the probe's): with the host it was made
        on and the time, when the probe's report has none."""
        self = super().from_json(data)
        known = [key for key, _attr, _kind in cls.FIELDS]
        self.sections = {k: v for k, v in data.items() if k not in known}
        if self.host is None:
            import time  # reason: the CLI's copy only: when the report was made

            self.host = os.uname().nodename
            self.time = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return self

