"""Which distributions a directory holds, found by hand for only the directories involved.

``importlib.metadata.packages_distributions()`` reads every distribution on
``sys.path`` (80-350 ms), has no locations and, on 3.10, misses distributions
without ``top_level.txt``; the ``importlib_metadata`` backport must never be
imported in a guarded process.  This module is the index: it lists the
``*.dist-info`` and ``*.egg-info`` of one directory at a time, on demand (cached until
the directory changes), an ``.egg`` entry, and the ``*.dist-info`` inside a zip or
wheel on ``sys.path`` (``zipfile`` is imported only when such an entry is involved);
and answers which distribution installed a module (decided by where its file is, never
by the first metadata found), which one installed a ``.pth`` file, and which ones
require a name.  What one distribution says is asked of it (:mod:`.distribution`).
Garbage metadata never raises.  Module level: ``os`` and sitewarden's own modules.
"""

import os

from .. import _swallowed, pathfacts
from . import distribution, metadata
from .distribution import Distribution

_dir_cache = {}


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
        zipfile = distribution.zipfile_module()
        with distribution.open_archive(archive) as raw, zipfile.ZipFile(raw) as zf:
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


#: ``id(dists)`` -> ``(dists, index)``: :func:`listing`'s index of one directory's list.
_listings = {}


def listing(dists, path):
    """The distributions of ``dists`` (a directory's, :func:`distributions`) whose
    :meth:`~.distribution.Distribution.may_list` passes for ``path`` (relative, '/'
    separated), in their order: every one whose :meth:`records` may say yes.  One search
    of their file lists' texts, joined once per list, where a scan asks each in turn (a
    ``check`` asks for every startup file and module among every distribution)."""
    if '"' in path:  # escaped in the CSV: may_list passes every list
        return list(dists)
    hit = _listings.get(id(dists))
    if hit is None or hit[0] is not dists:
        hit = _listings[id(dists)] = (dists, _index(dists))
    found = set(hit[1][0])
    for needle, (joined, starts) in zip((path, path.rpartition("/")[2]), hit[1][1]):
        at = joined.find(needle) if starts else -1
        while at >= 0:
            low, high = 0, len(starts) - 1  # the last text starting at or before ``at``
            while low < high:
                mid = (low + high + 1) // 2
                if starts[mid][0] <= at:
                    low = mid
                else:
                    high = mid - 1
            found.add(starts[low][1])
            nxt = starts[low + 1][0] if low + 1 < len(starts) else len(joined)
            at = joined.find(needle, max(at + 1, nxt))
    return [dists[i] for i in sorted(found)]


def _index(dists):
    """``(positions of the distributions whose list may_list never searches, ((joined
    RECORD texts, [(offset, position)]), (joined installed-files.txt texts, ...)))``:
    the texts ``may_list`` searches (the path in a RECORD, its last part in an
    ``installed-files.txt``), NUL-separated: no path holds one."""
    always, kinds = [], {"RECORD": ([], []), "installed-files.txt": ([], [])}
    for i, dist in enumerate(dists):
        member = {"dist-info": "RECORD", "egg-info": "installed-files.txt"}.get(dist.kind)
        text = dist._member(member) if member is not None else None
        if text is None:
            always.append(i)
            continue
        texts, starts = kinds[member]
        starts.append((sum(len(t) + 1 for t in texts[-1:]) + (starts[-1][0] if starts else 0),
                       i))
        texts.append(text)
    return always, tuple(("\0".join(texts), starts) for texts, starts in kinds.values())


def pth_owner(pth):
    """The distribution that installed the ``.pth`` file ``pth`` (its RECORD lists it:
    PEP 660 ``__editable__.*.pth``, flit's and hatchling's editable ``.pth``), or None."""
    try:
        directory, name = os.path.split(pth)
        for dist in listing(distributions(directory), name):
            if dist.records(name):
                return dist
    except Exception:
        _swallowed("the owner of %s" % (pth,))
    return None


def lister(path):
    """The distribution in ``path``'s own directory whose file list names ``path``: a
    ``RECORD`` row (where pip recorded the file, a wheel's ``.data/purelib`` one too) or
    an ``installed-files.txt`` line, each resolved against that directory; or None.  A
    file some package put there (``settings.refusal``: a silence file no package may
    provide).  One search of the directory's lists for the name, then the candidates'
    lists parsed."""
    directory, name = os.path.split(os.path.normpath(path))
    target = os.path.join(directory, name)
    for dist in listing(distributions(directory), name):
        for listed in dist.files() or ():
            if os.path.normpath(os.path.join(directory, listed)) == target:
                return dist
    return None


def pth_paths(dist):
    """The directories that the ``.pth`` files ``dist`` installed add to ``sys.path``."""
    from . import reader  # check only (shadowscan): the startup files' one reader

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
    _listings.clear()


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
    rel = _relative(origin, entry) if origin else None
    return distribution.claimant(dists, module, rel, listing)


def requirers(names, directories):
    """Distributions in ``directories`` with a requirement on one of ``names``
    (canonical): ``[(dist, requirement text)]``, in directory order.  Only the
    distributions whose raw requirement text mentions a name are parsed."""
    wanted = set(names)
    needles = [n.encode("utf-8", "replace") for n in wanted if n]
    fragments = distribution.needle_fragments(needles)
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
                if distribution.canonicalize(metadata.requirement_name(text)) in wanted:
                    out.append((dist, text))
    return out
