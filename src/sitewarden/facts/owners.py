"""Who put a file there: dpkg's database, a distribution's RECORD.

Runs inside a target (``check``'s startup inventory) and in the pip guard (the Debian
package that owns a distribution pip was asked to uninstall).  dpkg is never spawned:
``/var/lib/dpkg/info/<package>[:<arch>].list`` holds each package's paths, and a file's
owner is the package whose list names it (``dpkg -S`` reads the same lists, all of
them, after starting a process).  The lists of the packages most likely to own a
Python file (``python*``, ``libpython*``, ``pypy*``, ``sitewarden``, and the caller's
guess) are read first; the rest only while a path is still unowned, and only for paths
where a package may put files (not ``/usr/local``, a home or a virtual environment).
On Debian 12 with 855 packages: the first group is ~50 lists (~0.5 ms), all of them
~7.6 MB (~16 ms on a 2-core VM: the opens, the reads, the search in about equal parts;
what an unowned file under ``/usr/lib`` that runs code costs; for one that runs none,
the likely lists only).  ``check``'s probe asks an index of the startup files the lists
name instead, kept in its private cache (:func:`_index`).

A claim is then checked (:mod:`.integrity`): the file's md5 against the package's
``.md5sums`` (a conffile's against dpkg's status), its sha256 against the RECORD line.
Module level: ``os``, ``sys`` and sitewarden's own modules.
"""

import os

from .. import pathfacts
from . import distinfo, private_cache

#: dpkg's database: ``<package>[:<arch>].list`` holds the paths of the package's files.
DPKG_INFO = "/var/lib/dpkg/info"
#: Package name prefixes read first: those that ship Python files.
LIKELY = ("python", "libpython", "pypy", "sitewarden")
#: Where Debian packages put Python's startup files; ``/usr/local`` is the administrator's
#: (Debian policy 9.1.2), homes, virtual environments and checkouts are nobody's.
DPKG_DIRS = ("/usr/", "/etc/", "/lib/", "/lib64/", "/var/lib/")


def package_of(list_name):
    """``python3-six`` of ``python3-six.list``, ``libpython3.11-minimal`` of
    ``libpython3.11-minimal:amd64.list``."""
    return list_name[:-len(".list")].split(":")[0]


def dpkg_candidate(path):
    """May a Debian package own ``path``?  (Under ``/usr``, ``/etc``... not ``/usr/local``.)"""
    return path.startswith(DPKG_DIRS) and not path.startswith("/usr/local/")


def dpkg_owners(paths, guess=None, info=DPKG_INFO, likely_only=(), index_dir=None):
    """``{path: Debian package}`` for those of ``paths`` (absolute) that a package's
    ``.list`` names (as written, or resolved through symbolic links).  Reads the
    likely lists first (``guess``'s before all) and stops as soon as every path is
    found; the others only for a path not in ``likely_only`` (whose owner matters less
    than the time: ``check``'s startup files that run no code).  With ``index_dir`` (a
    directory private to this user: the probe's payload), startup files are answered
    from an index of every startup file the lists name instead, built the first time
    and again whenever dpkg's database changes (:func:`_index`): two ``stat`` calls and
    one small read where the search lists the info directory (~3,000 names on Debian
    12) and reads the likely lists.  ``{}`` without dpkg."""
    # (needle, the same at the start of a list, at its end, path): a list is one path a
    # line; the path as written, then as resolved (in that order, whatever the hash seed)
    wanted = []
    for path in paths:
        real = os.path.realpath(path)
        for variant in (path, real) if real != path else (path,):
            needle = b"\n" + os.fsencode(variant) + b"\n"
            wanted.append((needle, needle[1:], needle[:-1], path))
    if not wanted:
        return {}
    out = {}
    if index_dir is not None and guess is None and \
            all(w[2][1:].endswith(INDEXED) for w in wanted):
        index = _index(info, index_dir)
        if index is not None:
            # Each path's owner: the list the search would read first, of those naming
            # either form of it (the index keeps each listed path's first list, ranked).
            best = {}
            for w in wanted:
                found = index.get(w[2][1:])
                if found is not None and (w[3] not in best or found < best[w[3]]):
                    best[w[3]] = found
            return {path: package for path, (_rank, package) in best.items()}
    try:
        names = [n for n in os.listdir(info) if n.endswith(".list")]
    except OSError:
        return {}
    likely, rest = [], []
    for name in _search_order(names):
        package = package_of(name)
        if package == guess:
            likely.insert(0, (package, name))
        else:
            (likely if package.startswith(LIKELY) else rest).append((package, name))
    wanted = _search(info, likely, wanted, out, None)
    if not wanted or all(w[3] in likely_only for w in wanted):
        return out
    _search(info, rest, wanted, out, likely_only)
    return out


def _search_order(names):
    """The lists ``names`` in the order the search reads them (without a guess): the
    likely packages' in name order, then the others in name order."""
    names = sorted(names)
    return ([n for n in names if package_of(n).startswith(LIKELY)]
            + [n for n in names if not package_of(n).startswith(LIKELY)])


def _search(info, group, wanted, out, likely_only):
    """Read the lists of ``group`` in order until no path of ``wanted`` is left (or, with
    ``likely_only``, only those); each path found goes into ``out``.  The paths left."""
    for package, name in group:
        if not wanted or (likely_only is not None
                          and all(w[3] in likely_only for w in wanted)):
            break
        data = read_list(os.path.join(info, name))
        if data is None:
            continue  # unreadable: another package's list may still say
        hit = False
        for w in wanted:
            if w[0] in data or data.startswith(w[1]) or data.endswith(w[2]):
                out[w[3]] = package
                hit = True
        if hit:
            wanted = [w for w in wanted if w[3] not in out]
    return wanted


def marker_removed_from(state, info=DPKG_INFO):
    """The Debian package whose file list names the PEP 668 marker of ``state`` (a
    ``records.MarkerState``) when the marker is gone and not diverted: someone removed
    it.  None where it exists, where ``dpkg-divert`` moved it (the opt-out: with
    ``--rename`` a ``.distrib`` is left, without it dpkg's diversions list names it), or
    where no package ships it (a Python built from source, no dpkg)."""
    path = state.marker_path
    if state.marker_exists or state.diverted_to or not path or not dpkg_candidate(path) \
            or diverted(path, info):
        return None
    return dpkg_owners([path], info=info).get(path)


def diverted(path, info=DPKG_INFO):
    """Is ``path`` diverted (``dpkg-divert --add``)?  dpkg's ``diversions`` file, beside
    its info directory, holds three lines per diversion: the file, where it goes, the
    package (``:`` for a local one)."""
    data = read_list(os.path.join(os.path.dirname(info), "diversions"))
    if not data:
        return False
    lines = data.split(b"\n")
    return os.fsencode(path) in lines[0::3]


#: The largest of dpkg's files ``check`` reads (``status`` on a large system: ~10 MB).
MAX_LIST = 1 << 26


def read_list(path):
    """The bytes of one of dpkg's files (a ``.list``, ``.md5sums``, ``status``), or None,
    by the one reader (:func:`..pathfacts.read_regular`: never a FIFO or device; one read
    when the file did not grow): reading every list is most of what an unowned file
    costs."""
    return pathfacts.read_regular(path, MAX_LIST)[0]


# ---------------------------------------------------------------- the startup-file index

#: What the index keeps: the listed paths that end so, the startup files ``check`` asks
#: about (``site``'s ``.pth`` and ``.start`` files, ``sitecustomize``, ``usercustomize``).
INDEXED = (b".pth", b".start", b"/sitecustomize.py", b"/usercustomize.py")
#: The index file's first line starts so; the rest of it is the state of the database.
INDEX_FORMAT = "sitewarden dpkg startup-file index 2"


def _database_state(info):
    """``(state, the info directory's stat)``: what changes whenever dpkg installs,
    upgrades or removes a package: the info directory (dpkg renames every new ``.list``
    into it and deletes old ones) and the status file beside it, each by inode, size and
    modification and change times (the change time cannot be set back).  None when
    either cannot be read."""
    parts, stats = [], []
    try:
        for path in (info, os.path.join(os.path.dirname(info), "status")):
            st = os.stat(path)
            stats.append(st)
            parts.append("%d %d %d %d %d" % (st.st_dev, st.st_ino, st.st_size,
                                             st.st_mtime_ns, st.st_ctime_ns))
    except OSError:
        return None
    return "%s %s" % (INDEX_FORMAT, " ".join(parts)), stats[0]


def _index(info, index_dir):
    """``{path (bytes): (rank, package)}`` for every startup file the lists of ``info``
    name: the first list to name it in the search's order (:func:`_search_order`), and
    that list's place in the order: read from ``index_dir``
    when it was made from the database as it is now, else brought up to date there,
    reading again only the lists that changed (the others are known by inode, size and
    times).  None when ``index_dir`` is not private to this user (another user could
    hide a file's owner from ``check``) or the database cannot be read."""
    found = _database_state(info)
    if found is None or private_cache.private_directory(index_dir) is None:
        return None
    state, st = found
    path = os.path.join(index_dir, "dpkg-index-%x-%x" % (st.st_dev, st.st_ino))
    answers, known = _read_index(path, state)
    if answers is not None:
        return answers
    try:
        names = _search_order(n for n in os.listdir(info) if n.endswith(".list"))
    except OSError:
        return None
    lists = {}
    for name in names:
        try:
            st = os.stat(os.path.join(info, name))
        except OSError:
            continue
        sig = b"%d %d %d %d" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if name in known and known[name][0] == sig:
            lists[name] = known[name]
            continue
        data = read_list(os.path.join(info, name))
        if data is not None:  # unreadable: as the search, known by no path
            lists[name] = (sig, list(_startup_lines(data)))
    answers = {}
    for rank, name in enumerate(names):
        for listed in lists.get(name, ((), ()))[1]:
            answers.setdefault(listed, (rank, package_of(name)))
    if (_database_state(info) or (None,))[0] == state:  # dpkg ran meanwhile: do not keep it
        _write_index(path, state, names, lists)
    return answers


def _startup_lines(data):
    """The lines of a list (its paths) that end with one of :data:`INDEXED`."""
    for suffix in INDEXED:
        needle = suffix + b"\n"
        at = data.find(needle)
        while at >= 0:
            yield data[data.rfind(b"\n", 0, at) + 1:at + len(suffix)]
            at = data.find(needle, at + len(needle))
        if data.endswith(suffix):
            yield data[data.rfind(b"\n") + 1:]


# The index file: its first line is INDEX_FORMAT and the database's state; then a line
# "P <tab> list <tab> path" for each startup file a list names, the lists in the search's
# order (what a check reads), then
# "L <tab> list <tab> inode size mtime ctime" for each list (what an update reads).


def _read_index(path, state):
    """``(answers, None)`` from an index of the database in ``state``; else ``(None,
    {list: (signature, [paths])})`` from what the index knew (``{}`` without one)."""
    data = private_cache.read(path) or b""
    head, _, body = data.partition(b"\n")
    fresh = head == state.encode("ascii")
    answers, known, ranks = {}, {}, {}
    for line in body.split(b"\n"):
        kind, _, rest = line.partition(b"\t")
        name, _, value = rest.partition(b"\t")
        name = name.decode("utf-8", "surrogateescape")
        if kind == b"P":
            if fresh:  # the lists come in the search's order: rank them so
                rank = ranks.setdefault(name, len(ranks))
                answers.setdefault(value, (rank, package_of(name)))
            else:
                known.setdefault(name, [None, []])[1].append(value)
        elif kind == b"L":
            if fresh:
                break
            known.setdefault(name, [None, []])[0] = value
    if fresh:
        return answers, None
    return None, {name: tuple(v) for name, v in known.items() if v[0] is not None}


def _write_index(path, state, names, lists):
    """Keep the index (:func:`.private_cache.write`): one that cannot be kept costs the
    next check the reading of every list, nothing more."""
    rows = [state.encode("ascii")]
    kept = [(name, name.encode("utf-8", "surrogateescape")) for name in names if name in lists]
    rows += [b"P\t%s\t%s" % (key, listed) for name, key in kept for listed in lists[name][1]]
    rows += [b"L\t%s\t%s" % (key, lists[name][0]) for name, key in kept]
    private_cache.write(path, b"\n".join(rows) + b"\n")


def record_owner(path):
    """The distribution whose RECORD (or ``installed-files.txt``) in the same directory
    lists the file ``path`` (a ``.pth``, ``.start`` or ``sitecustomize.py`` at the top of
    a site directory), or None."""
    return distinfo.pth_owner(path)
