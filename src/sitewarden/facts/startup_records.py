"""The records of ``check``'s ``startup`` section (``docs/check-schema.md``), made by
:mod:`.inventory` and :mod:`.line_checks` in the probe: the section
(:class:`StartupSection`), its startup files, their lines and owners, the ``sys.path``
directories and who else may change them.  :class:`.records.Record`'s, like every
record; apart from the collectors so that the CLI reads them (``render_startup``)
without importing those.  Module level: ``os``.
"""

import os

from ..settings import SYSTEM_FILE
from .records import Record, _fields

#: The findings an acknowledgement of startup code lifts: what a startup file's code does,
#: whoever owns it; never a file that is not what its owner installed, code that could not
#: be read, nor a file others may change (``audit.acknowledgements`` applies them).
ACKNOWLEDGEABLE = ("dangerous-startup-code", "unproven-startup-code", "distribution-startup-code",
                   "unowned-startup-code")
#: ... and the shadows, acknowledged by the module's name (``shadow:NAME``).
ACKNOWLEDGEABLE_SHADOWS = ("shadowed-module", "hidden-namespace")
#: What no pin covers: code that runs what it does not show (a file's contents, a
#: computed value, a deserialised object): the bytes that run are not among those hashed.
UNPINNABLE = "runs-hidden-code"


class Writers(Record):
    """Who besides the interpreter's user may change a directory: ``scope`` ``others``
    (every user, or the user owning ``via``) or ``group``; ``via``: the directory whose
    mode allows it; ``how``: ``write`` (into it), ``create`` (it is missing, ``via`` is
    its nearest parent), ``rename`` (``via`` is a parent).  ``mode`` (of ``via``) is an
    int here and octal text (``"0777"``) in the JSON form."""

    __slots__ = ("scope", "via", "how", "mode", "uid", "gid")
    FIELDS = _fields(*__slots__)

    def __init__(self, scope, via, how, mode, uid, gid):
        self.scope = scope
        self.via = via
        self.how = how
        self.mode = mode
        self.uid = uid
        self.gid = gid

    def who(self):
        if self.scope == "group":
            return "group %d" % self.gid
        if self.mode & 0o002:  # others may write
            return "every user"
        return "user %d (its owner)" % self.uid

    def as_json(self):
        data = Record.as_json(self)
        if self.mode is not None:
            data["mode"] = "%04o" % self.mode
        return data

    @classmethod
    def from_json(cls, data):
        self = super().from_json(data)
        if self.mode is not None:
            self.mode = int(self.mode, 8)
        return self


class Owner(Record):
    """Who installed a startup file: ``kind`` is ``dpkg`` (``package``), ``distribution``
    (its RECORD lists it: ``distribution``, ``version``, ``metadata``, ``installer``),
    ``sitewarden``, or None (nobody).  A claim checked against the owner's record of the
    file's content (``integrity.verify_dpkg``, ``integrity.verify_record``): ``verified`` (True:
    the hash matches; False: it does not; None: no hash to check, or no claim), ``record``
    (``md5sums``, ``conffile``, ``RECORD``), ``expected`` and ``actual`` (the hashes, in
    the record's form), ``mismatch`` (what differs, or why it could not be checked)."""

    __slots__ = ("kind", "package", "distribution", "version", "metadata", "installer",
                 "verified", "record", "expected", "actual", "mismatch")
    FIELDS = _fields(*__slots__)

    def __init__(self, kind=None, package=None, distribution=None, version=None,
                 metadata=None, installer=None, verified=None, record=None, expected=None,
                 actual=None, mismatch=None):
        self.kind = kind
        self.package = package
        self.distribution = distribution
        self.version = version
        self.metadata = metadata
        self.installer = installer
        self.verified = verified
        self.record = record
        self.expected = expected
        self.actual = actual
        self.mismatch = mismatch

    def text(self):
        if self.kind == "dpkg":
            return "Debian package %s" % self.package
        if self.kind == "distribution":
            return "%s %s" % (self.distribution, self.version or "(no version)")
        return "sitewarden" if self.kind == "sitewarden" else "nobody"

    def finding_json(self):
        """A finding's ``owner``: who installed the file (``kind``, ``package`` or
        ``distribution`` and ``version``), and the record its content was checked against
        (``verified_against``: ``md5sums``, ``conffile``, ``RECORD``, ``deployment
        record``; null when no record confirmed it)."""
        against = self.record if self.verified else None
        if self.kind == "dpkg":
            return dict(kind=self.kind, package=self.package, verified_against=against)
        if self.kind == "distribution":
            return dict(kind=self.kind, distribution=self.distribution, version=self.version,
                        verified_against=against)
        return dict(kind=self.kind, verified_against=against)

    def claimed(self):
        """A Debian package, a RECORD or sitewarden's deployment says it installed the
        file."""
        return self.kind in ("dpkg", "distribution", "sitewarden")

    def trusted(self):
        """The claim holds: the owner's record has the file's hash (a Debian package's, a
        RECORD's, sitewarden's deployment record's).  An unverified claim buys no trust."""
        return self.claimed() and self.verified is True

    # What was checked, in words (``check``'s text and the JSON's ``checked``): never a
    # bare "verified", which beside a finding reads as reassurance; a matching record
    # proves the file is what its owner installed, not that it is benign.
    CHECKED = {"md5sums": "dpkg's md5sums", "conffile": "dpkg's conffile md5",
               "RECORD": "its RECORD", "deployment record": "sitewarden's deployment record"}

    def checked(self):
        """``matches dpkg's md5sums``, ``matches its RECORD``, ``does not match ...``,
        ``unverified`` (no hash to check), or None (no owner)."""
        if not self.claimed():
            return None
        record = self.CHECKED.get(self.record, self.record or "its record")
        if self.verified:
            return "matches %s" % record
        if self.verified is False:
            return "changed since installed (%s)" % record if self.record == "conffile" \
                else "does not match %s" % record
        return "unverified"

    def as_json(self):
        return dict(Record.as_json(self), checked=self.checked())

    def verify(self, verdict):
        """Take what checking the claim found (an ``integrity.Verdict``)."""
        for attr in ("verified", "record", "expected", "actual", "mismatch"):
            setattr(self, attr, getattr(verdict, attr))


def _without_empty_files(data, files):
    """A startup line's or file's JSON: ``module_files`` only where code runs modules."""
    if not files:
        data.pop("module_files", None)
    return data


class StartupLine(Record):
    """One non-blank line of a startup file: ``kind`` ``comment``, ``path``, ``import``
    (executed) or ``entry-point`` (a ``.start`` line); a path line's ``directory``,
    ``exists``, ``writers``; ``runs`` (an import line or entry point runs at each start:
    false when a ``.start`` turns it off or an earlier error abandons the file);
    ``error``: what CPython reports at every start, or None; ``capabilities`` (an import
    line's or entry point's, :mod:`.capabilities`: ``starts-processes``...) and
    ``evidence`` (``"starts-processes: subprocess.Popen"``...), left out while None."""

    __slots__ = ("number", "text", "kind", "directory", "exists", "writers", "runs", "error",
                 "note", "capabilities", "evidence", "module_files")
    FIELDS = _fields(*__slots__[:5]) + (("writers", "writers", Writers),) + _fields(
        *__slots__[6:-1])
    OPTIONAL = ("capabilities", "evidence")
    # What the reading of the code it runs left unread, and why (audit.analysis): a list
    # of "module (file): why", left out while None.
    __slots__ += ("unread", "module_names")
    FIELDS += _fields("unread", "module_files")
    OPTIONAL += ("unread",)

    def __init__(self, number, text, kind, directory=None, exists=None, writers=None,
                 runs=None, error=None, note=None, capabilities=None, evidence=None):
        self.number = number
        self.text = text
        self.kind = kind
        self.directory = directory
        self.exists = exists
        self.writers = writers
        self.runs = runs
        self.error = error
        self.note = note
        self.capabilities = capabilities
        self.evidence = evidence
        self.module_files = []  # the module files its code runs, its analysis read
        self.module_names = {}  # module name -> the file read for it (no JSON)
        self.unread = None

    def as_json(self):
        return _without_empty_files(Record.as_json(self), self.module_files)


class StartupFile(Record):
    """A ``.pth``, ``.start``, ``sitecustomize`` or ``usercustomize`` file a start reads.

    ``error``: what it raises at every start (a ``.pth`` ``site`` cannot decode: the
    start fails); ``decode_error``: what ``site`` raises decoding it (a ``.start`` that
    is not UTF-8 is skipped instead); ``file_type``: ``fifo``, ``socket``, ``character
    device``, ``block device`` (not read); ``size``: its size when larger than ``check``
    reads (not read); ``started_by``: ``[file, line]``, the import line whose
    ``site.addsitedir('<dir>')`` makes ``site`` read it; ``capabilities`` and ``evidence``:
    a ``sitecustomize``/``usercustomize`` module's (as a line's).  The last six are left out
    of the JSON form while None."""

    __slots__ = ("path", "realpath", "kind", "site_dir", "owner", "template", "lines",
                 "disabled_by", "error", "decode_error", "file_type", "size", "started_by",
                 "capabilities", "evidence", "lookalike") + (
        # provenance's (no JSON): the distribution whose RECORD lists the file, and
        # {module file a line runs: its Owner, checked against that owner's record}
        "dist", "modules")
    FIELDS = _fields("path", "realpath", "kind", "site_dir") + (
        ("owner", "owner", Owner),) + _fields("template", "disabled_by", "error") + (
        ("lines", "lines", StartupLine),) + _fields("decode_error", "file_type", "size",
                                                    "started_by", "capabilities", "evidence")
    OPTIONAL = ("decode_error", "file_type", "size", "started_by", "capabilities", "evidence")
    # A sitecustomize's/usercustomize's reading (audit.analysis), as a line's: ``unread``
    # (JSON, left out while None); ``module_files``: the files its code runs.
    __slots__ += ("unread", "module_files", "module_names")
    FIELDS += _fields("unread", "module_files")
    OPTIONAL += ("unread",)

    def __init__(self, path, kind, site_dir=None, lines=None, disabled_by=None, error=None,
                 realpath=None, owner=None, template=None, decode_error=None, file_type=None,
                 size=None, started_by=None):
        self.path = path
        self.realpath = realpath or os.path.realpath(path)
        self.kind = kind
        self.site_dir = site_dir
        self.lines = lines or []
        self.disabled_by = disabled_by
        self.error = error
        self.owner = owner or Owner()
        self.template = template
        self.decode_error = decode_error
        self.file_type = file_type
        self.size = size
        self.started_by = started_by
        self.capabilities = None
        self.evidence = None
        self.lookalike = None  # the template its content is, when not vouched for (no JSON)
        # provenance's (no JSON)
        self.dist = None
        self.modules = {}
        self.unread, self.module_files, self.module_names = None, [], {}

    def as_json(self):
        return _without_empty_files(Record.as_json(self), self.module_files)

    def executable(self):
        """The lines that run code at every start (sitecustomize: the whole file)."""
        return [x for x in self.lines if x.kind in ("import", "entry-point") and x.runs]

    def runs_code(self):
        return bool(self.executable()) or (self.kind in ("sitecustomize", "usercustomize")
                                           and not self.error)


class PathDirectory(Record):
    """A ``sys.path`` directory, or a ``.pth`` path line's (``source``: the ``.pth``
    file; ``cls``: ``pth``), and who else may change it (:class:`Writers`, or None)."""

    __slots__ = ("path", "source", "cls", "exists", "writers")
    FIELDS = _fields("path", "source") + (("class", "cls", None), ("exists", "exists", None),
                                          ("writers", "writers", Writers))

    def __init__(self, path, source, cls, exists, writers):
        self.path = path
        self.source = source
        self.cls = cls
        self.exists = exists
        self.writers = writers


class Acknowledgement(Record):
    """A ``startup:`` word of ``SITEWARDEN_SILENCE`` or a silence file (``source``), and
    what it does here (:mod:`.acknowledgements`): ``word`` (as written, after
    ``startup:``), ``file`` (the startup file it names), ``state``: ``acknowledged`` (the
    file's findings, its code as pinned), ``changed`` (the file, its owner or what it runs
    is not what was acknowledged: its findings stand), ``nothing-to-acknowledge`` (the
    file has no finding an acknowledgement lifts), ``cannot-pin`` (its code runs what it
    does not show: no pin covers that), ``untrusted-source`` (others than root and this
    user may change the silence file that holds it), ``not-administrator`` (the silence
    file that holds it is one a package can put there: a deployment's, in a site
    directory, or one a package's record lists), ``no-such-file``, ``not-startup-file``
    (not read by a start of this interpreter: another's, perhaps), ``unpinned`` (no
    digest: it acknowledges nothing)."""

    __slots__ = ("word", "source", "file", "state")
    FIELDS = _fields(*__slots__)

    def __init__(self, word, source, file=None, state=None):
        self.word = word
        self.source = source
        self.file = file
        self.state = state

    def meaning(self):
        """What it does, in ``status``'s and ``check``'s words."""
        state = self.state
        if state == "not-administrator" and self.source == SYSTEM_FILE:
            state = "placed-by-package"  # the machine's file, but a package put it there
        return _MEANINGS.get(state, "%s").replace("FILE", self.file or "")


_MEANINGS = {
    "acknowledged": "acknowledges FILE as it is: its path, owner and code are what was "
                    "acknowledged",
    "changed": "acknowledged FILE, whose path, owner or code changed since: its findings "
               "stand (review it, then sitewarden acknowledge it again)",
    "nothing-to-acknowledge": "names FILE, which has no finding an acknowledgement lifts",
    "cannot-pin": "acknowledges nothing: FILE's code runs what it does not show "
                  "(runs-hidden-code), which no pin covers",
    "untrusted-source": "acknowledges nothing: users other than root may change the "
                        "silence file that holds it (make it and its directory root's "
                        "alone: chown root, chmod go-w)",
    "not-administrator": "is in a site directory, where a package can put it: acknowledges "
                         "no startup code (only SITEWARDEN_SILENCE and %s do: sitewarden "
                         "acknowledge writes there)" % SYSTEM_FILE,
    "placed-by-package": "acknowledges no startup code: a package's record (dpkg's lists, "
                         "a RECORD) names %s, or it leads into a site directory: a package "
                         "can put it there (remove it, then sitewarden acknowledge the "
                         "finding again)" % SYSTEM_FILE,
    "no-such-file": "matches nothing: FILE does not exist",
    "not-startup-file": "matches nothing here: FILE is not a startup file of this "
                        "interpreter",
    "unpinned": "acknowledges nothing: it pins no content (what sitewarden acknowledge "
                "writes, startup:PATH@sha256:DIGEST, is pinned to the code it accepts)",
}


class StartupSection(Record):
    """``check``'s ``startup`` section: did ``site`` run, does it read ``.start`` files
    (``pep829``), the user site, the startup files, the ``sys.path`` directories, the
    acknowledgements of startup code and what each does here."""

    __slots__ = ("site", "pep829", "user_site", "files", "path_directories",
                 "acknowledgements")
    FIELDS = _fields("site", "pep829", "user_site") + (
        ("files", "files", StartupFile), ("path_directories", "path_directories", PathDirectory),
        ("acknowledgements", "acknowledgements", Acknowledgement))
    OPTIONAL = ("acknowledgements",)

    def __init__(self, site, pep829, user_site=None, files=None, path_directories=None):
        self.site = site
        self.pep829 = pep829
        self.user_site = user_site
        self.files = files or []
        self.path_directories = path_directories or []
        self.acknowledgements = None
