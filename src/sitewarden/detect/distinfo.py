"""Installed-distribution metadata, read by hand for only the distributions involved.

``importlib.metadata.packages_distributions()`` reads every distribution on
``sys.path`` (80-350 ms), has no locations and, on 3.10, misses distributions
without ``top_level.txt``; the ``importlib_metadata`` backport must never be
imported in a guarded process.  This module reads ``*.dist-info``
(``METADATA``, ``top_level.txt``, ``RECORD``), ``*.egg-info`` directories and
files (``PKG-INFO``, ``top_level.txt``, ``requires.txt``,
``installed-files.txt``) and ``.egg`` entries (directories and zips) of one
directory at a time, on demand, and the ``*.dist-info`` inside a zip or wheel on
``sys.path`` (``zipfile`` is imported only when such an entry is involved).
Fedora's RPM metadata (no ``RECORD``, no ``top_level.txt``) falls back to the
normalised name.  Ownership of a module is decided by where its file is, never
by the first metadata found.

What the files' text means (headers, requirement lists, names, versions and
requirements) is :mod:`.metadata`'s; this module finds the distributions, reads
their files when asked, and answers which one installed a module and which ones
require a name.  Garbage metadata never raises.  Module level: ``os`` and
sitewarden's own modules.
"""

import os

from .. import _swallowed, pathfacts
from . import metadata

_dir_cache = {}


def _zipfile():
    import zipfile  # only for zip entries; keeps the first warning cheap

    return zipfile


def _read_bytes(path, member=None):
    """A file's bytes (or a zip member's when ``member`` is given); None on error."""
    try:
        if member is None:
            return metadata.read_file(path)
        with _zipfile().ZipFile(path) as zf, zf.open(member) as f:
            return f.read(metadata.MAX_BYTES)
    except (OSError, KeyError, ValueError):  # missing, or not a zip (BadZipFile is neither)
        return None
    except Exception:
        _swallowed("reading %s" % (path if member is None else path + "/" + member))
        return None


class Distribution:
    """One installed distribution's metadata, read lazily.

    ``location`` is the directory (``sys.path`` entry) it was installed into;
    ``path`` its ``*.dist-info``/``*.egg-info`` (directory or file) or ``.egg``;
    ``kind`` is ``dist-info``, ``egg-info`` or ``egg``.
    """

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

    def __repr__(self):
        return "<Distribution %s %s at %s>" % (self.name, self.version, self.path)

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
        """Text of a metadata file, or None."""
        key = "file:" + name
        if key in self._cache:
            return self._cache[key]
        text = None
        if self.archive is not None:
            text = metadata.decode(_read_bytes(self.archive[0], self.archive[1] + "/" + name))
        elif self.kind == "egg":
            if self.is_dir:
                text = metadata.decode(_read_bytes(os.path.join(self.path, "EGG-INFO", name)))
            else:
                text = metadata.decode(_read_bytes(self.path, "EGG-INFO/" + name))
        elif self.kind == "egg-info" and not self.is_dir:
            text = metadata.decode(_read_bytes(self.path)) if name == "PKG-INFO" else None
        else:
            text = metadata.decode(_read_bytes(os.path.join(self.path, name)))
        self._cache[key] = text
        return text

    def _headers(self):
        if "headers" not in self._cache:
            name = "METADATA" if self.kind == "dist-info" else "PKG-INFO"
            try:
                self._cache["headers"] = metadata.parse_headers(self._member(name))
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
        stem = base.rsplit(".", 1)[0]
        parts = stem.split("-")
        name = parts[0] if parts else None
        version = parts[1] if len(parts) > 1 else None
        return name, version

    @property
    def file_name(self):
        """The project name as the metadata's file name spells it (no file read)."""
        return self._name_version_from_filename()[0]

    def may_require(self, needles, fragments=None):
        """Could this distribution require one of ``needles`` (canonical names, bytes)?

        A byte search in the raw requirement sources (``METADATA``/``PKG-INFO``,
        ``requires.txt``), separators and case folded, before anything is
        parsed: False means no requirement of it names one of them.  ``fragments``
        (:func:`metadata.needle_fragments`): a source whose lowered bytes hold none of them
        cannot hold a needle, and is not folded.
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
            fragments = metadata.needle_fragments(needles)
        for source, headers in sources:
            if not headers and not metadata.exists(source):
                continue  # most egg-info directories have no requires.txt
            data = metadata.read_file(source)
            if not data:
                continue
            if headers:
                # The first empty line: metadata.parse_headers stops there or earlier
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

    @property
    def name(self):
        value = self.header("name")
        if not value:
            value = self._name_version_from_filename()[0]
        return value or None

    @property
    def version(self):
        value = self.header("version")
        if not value:
            value = self._name_version_from_filename()[1]
        return value or None

    @property
    def canonical_name(self):
        return metadata.canonicalize(self.name or "")

    @property
    def installer(self):
        text = self._member("INSTALLER") if self.kind == "dist-info" else None
        return text.strip() if text else None

    def top_level(self):
        """Names in ``top_level.txt``, or None when there is none."""
        if "top" not in self._cache:
            text = self._member("top_level.txt")
            names = None
            if text is not None:
                names = set()
                for line in text.splitlines():
                    line = line.strip().replace("\\", "/")
                    if line:
                        names.add(line.split("/")[0])
            self._cache["top"] = names
        return self._cache["top"]

    def files(self):
        """Installed files, relative to :attr:`location` ('/' separated), or None."""
        if "files" in self._cache:
            return self._cache["files"]
        out = None
        try:
            if self.kind == "dist-info":
                text = self._member("RECORD")
                if text is not None:
                    out = [metadata.record_path(line) for line in text.splitlines() if line.strip()]
            elif self.kind == "egg-info" and self.is_dir:
                text = self._member("installed-files.txt")
                if text is not None:
                    rel_root = os.path.basename(self.path)
                    out = []
                    for line in text.splitlines():
                        line = line.strip()
                        if line:
                            out.append(os.path.normpath(os.path.join(rel_root, line))
                                       .replace(os.sep, "/"))
        except Exception:
            _swallowed("the file list of %s" % (self.path,))
            out = None
        if out is not None:
            out = [p for p in out if p]
        self._cache["files"] = out
        return out

    def may_list(self, path):
        """False when :meth:`files` surely lacks ``path`` (relative, '/' separated): the
        list's text lacks it (``installed-files.txt``, normalised: its last part).  A
        substring search per distribution, where a parse of every ``RECORD`` would be."""
        member = {"dist-info": "RECORD", "egg-info": "installed-files.txt"}.get(self.kind)
        if member is None or '"' in path or "files" in self._cache:
            return True  # a quoted path is escaped in the CSV; a parsed list is cheap
        text = self._member(member)
        return text is None or (path if member == "RECORD" else path.rpartition("/")[2]) in text

    def top_level_from_files(self):
        files = self.files()
        if files is None:
            return None
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
                    out = metadata.requires_txt_to_requirements(self._member("requires.txt"))
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
        return top.lower() in metadata.name_variants(self.name or "")

    def as_json(self):
        return {
            "name": self.name,
            "version": self.version,
            "metadata": self.path,
            "kind": self.kind,
            "installer": self.installer,
        }


# ---------------------------------------------------------------- per directory


_METADATA_SUFFIXES = (".dist-info", ".egg-info")


def _metadata_kind(name):
    if name.endswith(".dist-info"):
        return "dist-info"
    if name.endswith(".egg-info"):
        return "egg-info"
    return None


def is_egg(entry):
    return entry.rstrip("/" + os.sep).lower().endswith(".egg")


def distributions(directory):
    """The distributions whose metadata is directly in ``directory`` (cached)."""
    real = pathfacts.real(directory)
    try:
        stamp = os.stat(real).st_mtime_ns  # entries added or removed: read again
    except (OSError, TypeError, ValueError):
        stamp = None
    hit = _dir_cache.get(real)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    key = real
    out = []
    if is_egg(key):
        out.append(Distribution(directory, directory, "egg"))
    else:
        try:
            with os.scandir(key) as it:
                found = {e.name: e for e in it if e.name.endswith(_METADATA_SUFFIXES)}
        except NotADirectoryError:  # a zip or wheel on sys.path, or a directory inside one
            found = {}
            out = _zip_distributions(directory, key)
        except (OSError, TypeError, ValueError):
            found = {}
        base = (directory or os.curdir).rstrip("/") + "/"
        for name in sorted(found):
            try:
                is_dir = found[name].is_dir()
            except OSError:
                is_dir = False
            out.append(Distribution(directory, base + name,
                                    "dist-info" if name.endswith(".dist-info") else "egg-info",
                                    is_dir))
    _dir_cache[key] = (stamp, out)
    return out


def archive_of(path):
    """``(zip file, member directory or '')`` when ``path`` is a zip file or a path inside
    one (as zipimport reads ``sys.path`` entries); else None.  ``stat`` only."""
    p = os.path.normpath(path)
    inner = []
    while True:
        try:
            if os.path.isfile(p):
                return p, "/".join(reversed(inner))
            if os.path.isdir(p):
                return None
        except (OSError, TypeError, ValueError):
            return None
        head, tail = os.path.split(p)
        if not tail or head == p:
            return None
        inner.append(tail)
        p = head


def _zip_distributions(directory, path):
    """The ``*.dist-info``/``*.egg-info`` directories inside a zip (a wheel on
    ``PYTHONPATH``) at ``path``; ``zipfile`` is imported only for zip entries."""
    found = archive_of(path)
    if found is None:
        return []
    archive, inner = found
    try:
        zipfile = _zipfile()
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
    except (OSError, zipfile.BadZipFile):
        return []
    prefix = inner + "/" if inner else ""
    tops = set()
    for member in names:
        if member.startswith(prefix):
            first = member[len(prefix):].split("/", 1)[0]
            if _metadata_kind(first) and "/" in member[len(prefix):]:
                tops.add(first)
    base = (directory or os.curdir).rstrip("/") + "/"
    out = []
    for name in sorted(tops):
        dist = Distribution(directory, base + name, _metadata_kind(name), True)
        dist.archive = (archive, prefix + name)
        out.append(dist)
    return out


def pth_owner(pth):
    """The distribution that installed the ``.pth`` file ``pth`` (its RECORD lists it:
    PEP 660 ``__editable__.*.pth``, flit's and hatchling's editable ``.pth``), or None."""
    try:
        directory, name = os.path.split(pth)
        for dist in distributions(directory):
            if not dist.may_list(name):
                continue
            files = dist.files()
            if files and name in files:
                return dist
    except Exception:
        _swallowed("the owner of %s" % (pth,))
    return None


def pth_paths(dist):
    """The directories that the ``.pth`` files ``dist`` installed add to ``sys.path``."""
    from ..audit import reader  # check only (shadowscan): the startup files' one reader

    out = []
    try:
        for rel in dist.files() or ():
            if "/" not in rel and rel.endswith(".pth"):
                out.extend(reader.pth_directories(os.path.join(dist.location or os.curdir, rel)))
    except Exception:
        _swallowed("the .pth paths of %s" % (getattr(dist, "path", dist),))
    return out


def clear_cache():
    _dir_cache.clear()


def _relative(origin, entry):
    try:
        rel = os.path.relpath(pathfacts.real(origin), pathfacts.real(entry))
    except ValueError:  # not on one drive (Windows)
        return None
    return None if rel.startswith("..") else rel.replace(os.sep, "/")


def owner(module, origin, entry):
    """The distribution that installed ``module`` (a dotted name) whose file is
    ``origin``, found through the ``sys.path`` entry ``entry``; None when no
    metadata in that entry claims it.  Never raises."""
    try:
        return _owner(module, origin, entry)
    except Exception:
        _swallowed("the distribution of %s" % (module,))
        return None


def _owner(module, origin, entry):
    dists = distributions(entry)
    if is_egg(entry or ""):
        return dists[0] if dists else None
    if not dists:
        return None
    top = module.split(".")[0]
    rel = _relative(origin, entry) if origin else None
    want = metadata.canonicalize(module)
    # Distributions named after the module (six, PyYAML for yaml, python-dateutil for
    # dateutil) first: when one's metadata claims the module, the rest of the directory
    # (hundreds of distributions in a distro directory) is not read.
    named = _named_after(dists, top.lower())
    if named:
        best, score = _best(named, module, top, rel, want)
        if score >= 2:
            return best
    return _best(dists, module, top, rel, want)[0]


#: A distribution "named after" module ``m`` has a key ``m`` or ``m`` with one of these
#: prefixes (see :func:`metadata.name_variants`).
_NAME_PREFIXES = ("", "python_", "py_", "python", "py")


def _named_after(dists, low):
    """The distributions named after module ``low`` (lower case), from the metadata file
    names alone (nothing read), in :data:`_NAME_PREFIXES` order, then directory order.
    A file name is canonicalised (key: canonical name with '_' for '-') only when its
    lowered text holds the longest separator-free run of ``low``, which every such key
    keeps (canonicalising maps separators only): hundreds of distributions cost one
    substring test each."""
    fragment = max(low.split("_"), key=len)
    wanted = {p + low: [] for p in _NAME_PREFIXES}
    for dist in dists:
        if fragment not in dist.path.rpartition("/")[2].lower():
            continue
        found = wanted.get(metadata.canonicalize(dist.file_name or "").replace("-", "_"))
        if found is not None:
            found.append(dist)
    return [d for p in _NAME_PREFIXES for d in wanted[p + low]]


def _best(dists, module, top, rel, want):
    """The distribution with the strongest claim on ``module``, and that claim's score:
    5 its file is recorded, 4/3 the project is named after it, 2 top-level names
    list it, 1 only a name variant matches, 0 none."""
    if rel is not None:
        # The strongest claim first, from the file lists alone (a substring test of each
        # one's text before any parse): a distribution whose list records the file wins
        # without the others' METADATA and top_level.txt being read.
        best = None
        for dist in dists:
            if dist.may_list(rel) and rel in (dist.files() or ()) and _prefer(dist, best):
                best = dist
        if best is not None:
            return best, 5
    best, best_score = None, 0
    for dist in dists:
        score = 0
        if dist.canonical_name == want and dist.claims(top):
            score = 4
        elif dist.canonical_name == want:
            score = 3
        elif dist.top_level() is not None and top in dist.top_level():
            score = 2
        elif dist.files() is not None:
            names = dist.top_level_from_files()
            score = 2 if names and top in names else 0
        elif "." not in module and top.lower() in metadata.name_variants(dist.name or ""):
            score = 1
        if score > best_score or (score == best_score and score and _prefer(dist, best)):
            best, best_score = dist, score
    return best, best_score


def _prefer(dist, other):
    """Tie-break between two claimants: a parsable version, then a newer file."""
    if other is None:
        return True
    a = metadata.parse_version(dist.version) is not None
    b = metadata.parse_version(other.version) is not None
    if a != b:
        return a
    try:
        return os.stat(dist.path).st_mtime > os.stat(other.path).st_mtime
    except OSError:
        return False


def requirers(names, directories):
    """Distributions in ``directories`` with a requirement on one of ``names``
    (canonical): ``[(dist, requirement text)]``, in directory order.  Only the
    distributions whose raw requirement text mentions a name are parsed."""
    wanted = set(names)
    needles = [n.encode("utf-8", "replace") for n in wanted if n]
    fragments = metadata.needle_fragments(needles)
    out = []
    seen = set()
    for directory in directories:
        location = pathfacts.real(directory)
        for dist in distributions(directory):
            if not dist.may_require(needles, fragments):
                continue
            key = (dist.canonical_name, location)
            if key in seen:
                continue
            seen.add(key)
            for text in dist.requires():
                if metadata.canonicalize(metadata.requirement_name(text)) in wanted:
                    out.append((dist, text))
    return out
