"""One installed distribution, read by hand: every question about it is answered here.

A :class:`Distribution` is a ``*.dist-info``/``*.egg-info`` (directory or file), an
``.egg`` (directory or zip) or a ``*.dist-info`` in a zip on ``sys.path`` (Debian's and
Fedora's metadata too; without ``RECORD`` and ``top_level.txt`` the name stands in).  It
reads its own files lazily, once each (bounded, non-blocking; ``zipfile`` for a zip
only), knows their text's rules (headers, ``requires.txt``, ``RECORD``, PEP 503
names), and which of a directory's distributions claims a module.  :mod:`.distinfo`
lists a directory's distributions; :mod:`.metadata` compares versions and requirements.
Garbage never raises.  Module level: ``os`` and sitewarden's own modules.
"""

import os

from .. import _swallowed, pathfacts

#: Largest metadata file read (a METADATA with a huge description is cut).
MAX_BYTES = 1 << 22


# ---------------------------------------------------------------- reading files


def read_file(path):
    """Up to MAX_BYTES of a regular file, or None (missing, unreadable, a directory, a
    FIFO or device: never opened, never waited on): :func:`..pathfacts.read_regular`,
    ``os.open``/``os.read`` (a fraction of what ``open()`` costs, which matters for
    hundreds of metadata files).  A larger file is cut at MAX_BYTES."""
    return pathfacts.read_regular(path, MAX_BYTES, cut=True)[0]


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
    try:  # utf-8-sig without the codec registry's lookup (~1M instructions in a probe)
        return (data[3:] if data[:3] == b"\xef\xbb\xbf" else data).decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def zipfile_module():
    import zipfile  # only for zip entries; keeps the first warning cheap

    return zipfile


def open_archive(path):
    """The zip archive ``path`` as a file object for ``zipfile.ZipFile``, opened by
    :func:`..pathfacts.open_regular` (a FIFO named ``*.egg`` never waited on); OSError
    when it is not a regular file.  The caller closes it (``ZipFile`` does not)."""
    fd, _st, error = pathfacts.open_regular(path)
    if fd is None:
        raise error if isinstance(error, OSError) else OSError(21, "not a regular file")
    return os.fdopen(fd, "rb")


def _read_text(path, member=None):
    """A file's text (or a zip member's when ``member`` is given); None on error."""
    try:
        if member is None:
            return decode(read_file(path))
        with open_archive(path) as raw, zipfile_module().ZipFile(raw) as zf, \
                zf.open(member) as f:
            return decode(f.read(MAX_BYTES))
    except (OSError, KeyError, ValueError):  # missing, or not a zip (BadZipFile is neither)
        return None
    except Exception:
        _swallowed("reading %s" % (path if member is None else path + "/" + member))
        return None


# ---------------------------------------------------------------- names and versions


def canonicalize(name):
    """PEP 503 normalisation: lower case, runs of ``-_.`` as one ``-``."""
    text = str(name).strip().lower().replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text


#: The prefixes a distribution's name may put before its module's name.
NAME_PREFIXES = ("python_", "py_", "python", "py")


def name_variants(name):
    """Module names a distribution name may stand for when the metadata lists
    no files (Fedora RPM, stale metadata): ``python-dateutil`` -> ``dateutil``,
    ``PyYAML`` -> ``yaml``..."""
    key = canonicalize(name).replace("-", "_")
    out = [key]
    for prefix in NAME_PREFIXES:
        if key.startswith(prefix) and len(key) > len(prefix):
            out.append(key[len(prefix):])
    return out


def needle_fragments(needles):
    """The longest separator-free run of each needle (a canonical name, bytes): folding
    maps separators only, so a text that holds a needle once folded holds its fragment
    once lowered."""
    return [max(n.split(b"-"), key=len) for n in needles]


_packaging = []


def packaging_modules():
    """``(version, specifiers, requirements, markers, utils)`` or None when unavailable."""
    if not _packaging:
        try:
            from . import vendored  # only for what metadata.plain_ functions cannot read

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


# ---------------------------------------------------------------- the files' text


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


def _top_level_names(text):
    """The names a ``top_level.txt`` lists (a path's first part), or None without one."""
    if text is None:
        return None
    lines = (line.strip().replace("\\", "/") for line in text.splitlines())
    return {line.split("/")[0] for line in lines if line}


def _installed_files(text, rel_root):
    """``installed-files.txt`` (paths relative to the egg-info directory ``rel_root``)
    as paths relative to the directory it was installed into, '/' separated."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            out.append(os.path.normpath(os.path.join(rel_root, line)).replace(os.sep, "/"))
    return out


def _modules_of_files(files):
    """The top-level module names a file list installs (metadata, ``.data`` and ``.pth``
    aside; a directory counts when its name is an identifier's)."""
    suffixes = pathfacts.module_suffixes()
    names = set()
    for path in files:
        first, sep, _ = path.partition("/")
        if not first or first in ("..", ".", "__pycache__"):
            continue
        if first.endswith((".dist-info", ".egg-info", ".data", ".pth")):
            continue
        if sep:
            if "." not in first and "-" not in first:
                names.add(first)
        else:
            name = pathfacts.module_name_of_file(first, suffixes)
            if name:
                names.add(name)
    return names


# ---------------------------------------------------------------- one distribution


def _member_text(dist, name):
    """The text of metadata file ``name`` of ``dist`` where its layout keeps it, or None."""
    if dist.archive is not None:
        return _read_text(dist.archive[0], dist.archive[1] + "/" + name)
    if dist.kind == "egg":
        if dist.is_dir:
            return _read_text(os.path.join(dist.path, "EGG-INFO", name))
        return _read_text(dist.path, "EGG-INFO/" + name)
    if dist.kind == "egg-info" and not dist.is_dir:
        return _read_text(dist.path) if name == "PKG-INFO" else None
    return _read_text(os.path.join(dist.path, name))


class MetadataFiles:
    """Where one distribution's metadata is kept, and its files read from there, once
    each.  ``location``: the directory (``sys.path`` entry) it was installed into;
    ``path``: its ``*.dist-info``/``*.egg-info`` (directory or file) or ``.egg``;
    ``kind``: ``dist-info``, ``egg-info`` or ``egg``."""

    def __init__(self, location, path, kind, is_dir=None):
        self.location = location
        self.path = path
        self.kind = kind
        self._cache = {}
        self._is_dir = is_dir  # known from the directory scan, else looked up once
        #: ``(zip file, member directory)`` for metadata inside a zip or wheel on sys.path
        self.archive = None

    @property
    def is_dir(self):
        if self._is_dir is None:
            self._is_dir = os.path.isdir(self.path)
        return self._is_dir

    def identity(self):
        """Equal for two paths of one metadata, not for two copies: device and inode (one
        ``stat``; ``realpath`` costs one per component), else (in an archive) the path resolved."""
        found = self._cache.get("identity")
        if found is None:
            try:
                st = os.stat(self.path) if self.archive is None else None
            except (OSError, ValueError):
                st = None
            found = (st.st_dev, st.st_ino) if st else os.path.realpath(self.path)
            self._cache["identity"] = found
        return found

    def _member(self, name):
        """Text of a metadata file, or None (read once)."""
        key = "file:" + name
        if key not in self._cache:
            self._cache[key] = _member_text(self, name)
        return self._cache[key]

    def _headers(self):
        if "headers" not in self._cache:
            name = "METADATA" if self.kind == "dist-info" else "PKG-INFO"
            try:
                self._cache["headers"] = parse_headers(self._member(name))
            except Exception:
                _swallowed("the %s of %s" % (name, self.path))
                self._cache["headers"] = []
        return self._cache["headers"]

    def header(self, key):
        key = key.lower()
        for k, v in self._headers():
            if k == key:
                return v
        return None

    def _name_version_from_filename(self):
        base = os.path.basename(self.path.rstrip("/" + os.sep))
        parts = base.rsplit(".", 1)[0].split("-")
        return (parts[0] if parts else None), (parts[1] if len(parts) > 1 else None)

    def may_require(self, needles, fragments=None):
        """Could this distribution require one of ``needles`` (canonical names, bytes)?

        A byte search in the raw requirement sources (``METADATA``/``PKG-INFO``,
        ``requires.txt``), separators and case folded, before anything is parsed: False
        means no requirement names one.  ``fragments`` (:func:`needle_fragments`): a
        source whose lowered bytes hold none of them cannot hold a needle: not folded.
        """
        kind = self.kind
        if kind == "egg" or self.archive is not None or not needles:
            return True
        # (file, its requirements are headers): only a metadata file's header block is
        # searched, up to its first empty line (a long description follows it).
        if kind == "dist-info":
            sources = ((self.path + "/METADATA", True),)
        elif self.is_dir:
            sources = ((self.path + "/PKG-INFO", True), (self.path + "/requires.txt", False))
        else:
            sources = ((self.path, True),)
        if fragments is None:
            fragments = needle_fragments(needles)
        for source, headers in sources:
            if not headers and not exists(source):
                continue  # most egg-info directories have no requires.txt
            data = read_file(source)
            if not data:
                continue
            if headers:
                # The first empty line: parse_headers stops there or earlier
                # (a line of blanks, or a line break other than \n, ends it too).
                end = data.find(b"\n\n")
                if end >= 0:
                    data = data[:end]
            hay = data.lower()
            for fragment in fragments:
                if fragment in hay:
                    break
            else:
                continue
            hay = hay.replace(b"_", b"-").replace(b".", b"-")
            while b"--" in hay:
                hay = hay.replace(b"--", b"-")
            for needle in needles:
                if needle in hay:
                    return True
        return False


class Distribution(MetadataFiles):
    """One installed distribution: what its metadata says (names, version, installer,
    requirements, files), and how strongly it claims a module."""

    def __repr__(self):
        return "<Distribution %s %s at %s>" % (self.name, self.version, self.path)

    @property
    def file_name(self):
        """The project name as the metadata's file name spells it (no file read)."""
        return self._name_version_from_filename()[0]

    @property
    def name(self):
        return self.header("name") or self._name_version_from_filename()[0] or None

    @property
    def version(self):
        return self.header("version") or self._name_version_from_filename()[1] or None

    @property
    def canonical_name(self):
        return canonicalize(self.name or "")

    @property
    def installer(self):
        text = self._member("INSTALLER") if self.kind == "dist-info" else None
        return text.strip() if text else None

    def top_level(self):
        """Names in ``top_level.txt``, or None when there is none."""
        if "top" not in self._cache:
            self._cache["top"] = _top_level_names(self._member("top_level.txt"))
        return self._cache["top"]

    def files(self):
        """Installed files, relative to :attr:`location` ('/' separated), or None."""
        if "files" not in self._cache:
            out = None
            try:
                if self.kind == "dist-info":
                    text = self._member("RECORD")
                    if text is not None:
                        out = [record_path(line) for line in text.splitlines() if line.strip()]
                elif self.kind == "egg-info" and self.is_dir:
                    text = self._member("installed-files.txt")
                    if text is not None:
                        out = _installed_files(text, os.path.basename(self.path))
            except Exception:
                _swallowed("the file list of %s" % (self.path,))
                out = None
            self._cache["files"] = None if out is None else [p for p in out if p]
        return self._cache["files"]

    def may_list(self, path):
        """False when :meth:`files` surely lacks ``path`` (relative, '/' separated): the
        list's text lacks it (``installed-files.txt``, normalised: its last part).  A
        substring search per distribution, where a parse of every ``RECORD`` would be."""
        member = {"dist-info": "RECORD", "egg-info": "installed-files.txt"}.get(self.kind)
        if member is None or '"' in path or "files" in self._cache:
            return True  # a quoted path is escaped in the CSV; a parsed list is cheap
        text = self._member(member)
        return text is None or (path if member == "RECORD" else path.rpartition("/")[2]) in text

    def records(self, path):
        """Does the file list name ``path`` (relative, '/' separated)?  Searched before
        it is parsed (:meth:`may_list`)."""
        return self.may_list(path) and path in (self.files() or ())

    def top_level_from_files(self):
        files = self.files()
        return None if files is None else _modules_of_files(files)

    def editable(self):
        """PEP 610: ``direct_url.json`` says ``"editable": true``."""
        text = self._member("direct_url.json") if self.kind == "dist-info" else None
        if not text:
            return False
        try:
            import json  # only for an editable install's direct_url.json; keeps warnings cheap

            return bool(json.loads(text).get("dir_info", {}).get("editable"))
        except (ValueError, AttributeError):  # not JSON, or not PEP 610's shape
            return False

    def requires(self):
        """Requirement strings (markers included), as ``importlib.metadata``
        gives them: ``Requires-Dist`` headers, else ``requires.txt``."""
        if "requires" not in self._cache:
            out = []
            try:
                out = [v for k, v in self._headers() if k == "requires-dist" and v]
                if not out and self.kind != "dist-info":
                    out = requires_txt_to_requirements(self._member("requires.txt"))
            except Exception:
                _swallowed("the requirements of %s" % (self.path,))
                out = []
            self._cache["requires"] = out
        return self._cache["requires"]

    def claims(self, top):
        """Does the metadata say it installed top-level name ``top``?"""
        names = self.top_level()
        if names is None:
            names = self.top_level_from_files()
        if names is not None:
            return top in names
        return top.lower() in name_variants(self.name or "")

    def claim(self, module, top, want):
        """How strongly the metadata claims ``module`` (top-level name ``top``, canonical
        name ``want``): 4/3 the project is named after it (4: and claims it), 2 its
        top-level names list it, 1 only a name variant matches, 0 none."""
        if self.canonical_name == want:
            return 4 if self.claims(top) else 3
        top_level = self.top_level()
        if top_level is not None and top in top_level:
            return 2
        if self.files() is not None:
            names = self.top_level_from_files()
            return 2 if names and top in names else 0
        if "." not in module and top.lower() in name_variants(self.name or ""):
            return 1
        return 0

    def as_json(self):
        return {"name": self.name, "version": self.version, "metadata": self.path,
                "kind": self.kind, "installer": self.installer}


# ---------------------------------------------------------------- which one claims a module


def claimant(dists, module, rel, listing=None):
    """The one of ``dists`` (a directory's) that installed ``module`` (a dotted name) whose
    file is ``rel`` (relative to the directory, or None), or None when none claims it.
    ``listing(dists, rel)``: those whose file list may name it (``distinfo.listing``)."""
    top = module.split(".")[0]
    want = canonicalize(module)
    # Distributions named after the module (six, PyYAML for yaml, python-dateutil for
    # dateutil) first: when one's metadata claims the module, the rest of the directory
    # (hundreds of distributions in a distro directory) is not read.
    named = named_after(dists, top.lower())
    if named:
        best, score = _best(named, module, top, rel, want)
        if score >= 2:
            return best
    return _best(dists, module, top, rel, want, listing)[0]


#: A distribution "named after" module ``m`` has a key ``m`` or ``m`` with one of these
#: prefixes (see :func:`name_variants`).
_NAMED_AFTER = ("",) + NAME_PREFIXES


def named_after(dists, low):
    """The distributions named after module ``low`` (lower case), from their metadata file
    names alone, in :data:`_NAMED_AFTER` order, then directory order.  A file name is
    canonicalised only when its lowered text holds the longest separator-free run of
    ``low``, which every such key keeps: hundreds of distributions cost a substring test."""
    fragment = max(low.split("_"), key=len)
    wanted = {p + low: [] for p in _NAMED_AFTER}
    for dist in dists:
        if fragment not in dist.path.rpartition("/")[2].lower():
            continue
        found = wanted.get(canonicalize(dist.file_name or "").replace("-", "_"))
        if found is not None:
            found.append(dist)
    return [d for p in _NAMED_AFTER for d in wanted[p + low]]


def _best(dists, module, top, rel, want, listing=None):
    """The distribution with the strongest claim on ``module``, and that claim's score:
    5 its file is recorded, else :meth:`Distribution.claim`'s."""
    if rel is not None:
        # The strongest claim first, from the file lists alone (searched before parsed):
        # the one whose list records the file wins, no METADATA or top_level.txt read.
        best = None
        for dist in dists if listing is None else listing(dists, rel):
            if dist.records(rel) and _prefer(dist, best):
                best = dist
        if best is not None:
            return best, 5
    best, best_score = None, 0
    for dist in dists:
        score = dist.claim(module, top, want)
        if score > best_score or (score == best_score and score and _prefer(dist, best)):
            best, best_score = dist, score
    return best, best_score


def _prefer(dist, other):
    """Tie-break between two claimants: a parsable version, then a newer file."""
    if other is None:
        return True
    a = parse_version(dist.version) is not None
    b = parse_version(other.version) is not None
    if a != b:
        return a
    try:
        return os.stat(dist.path).st_mtime > os.stat(other.path).st_mtime
    except OSError:
        return False
