"""Whether the ``sitewarden`` a start of the target imports is this sitewarden's runtime,
byte for byte: the one running this check.

A hook line, a deployment record, a RECORD: each is a file a wheel can ship.  So what
makes sitewarden's hook sitewarden's is the code it runs: the ``sitewarden`` package the
import system's own finders find on the emulated ``sys.path`` (:func:`runtime_found`)
holds the same files, byte for byte, as this check's own package (the CLI's payload),
and no bytecode a start would run instead of them is other code (:func:`ours`).  Then
that code is known and not read again (:mod:`.analysis`); anything else is read and
judged as any code is (:mod:`.provenance`).  Runs in ``check``'s probe; module level:
``os``, ``sys`` and sitewarden's modules.
"""

import os
import sys

from .. import pathfacts
from ..facts import integrity, private_cache
from . import modules


def _mine():
    """This sitewarden's runtime package: the one running this check (the CLI's payload)."""
    return os.path.dirname(os.path.abspath(
        getattr(sys.modules.get("sitewarden"), "__file__", None) or "/nonexistent/x"))


def runtime_found():
    """The ``sitewarden`` package a start imports (``import sitewarden``, as the import
    system's own finders find it on the emulated ``sys.path``): its directory, or None
    (not found, or no package of source files: a module, an extension, a zip member)."""
    where = modules.locate("sitewarden")
    if where is None or where[0] != "source" or \
            os.path.basename(where[1]) != "__init__.py":
        return None
    return os.path.dirname(where[1])


def runs_ours():
    """Does ``import sitewarden`` in a start of the target load this sitewarden's runtime,
    byte for byte (:func:`ours`)?  What sitewarden's hook runs is then known: it is the
    code running this check."""
    found = runtime_found()
    return found is not None and ours(found)


def not_ours_text():
    """Why a sitewarden hook is judged as any code is (the owner's ``mismatch``)."""
    return ("the sitewarden package it imports (%s) is not byte for byte this sitewarden's "
            "runtime (%s): another sitewarden's, or a look-alike; judged as any code is" % (
                runtime_found() or "none found", getattr(sys.modules.get("sitewarden"),
                                                         "__version__", "?")))


#: Files of a deployed runtime that are not code: ``sitewarden install``'s manifest and
#: record, the Debian package's copies of the hooks (``sitewarden/_hooks``).
NOT_CODE = ("_deployment.json", "_deployment.record", "_hooks/sitewarden.pth",
            "_hooks/sitewarden.start", "_hooks/sitecustomize-block.py")

_ours = {}  # real path of a package directory -> ours(), for this check (one process)


def ours(package):
    """Is the package directory ``package`` byte for byte this sitewarden's runtime
    (:func:`_mine`)?  Every file in it but :data:`NOT_CODE` is one of ours with the same
    bytes, every one of ours is there, nothing in it is a symbolic link, and each
    ``__pycache__`` file this interpreter would run instead of its source (a header valid
    for the source, at any optimisation level) is that source's code.  Anything else (a
    file more or less, another byte, another version) is not ours: its hook is read and
    judged as any code is, whatever record stands beside it.  A tree found to be ours is
    known by its files' inodes, sizes and modification and change times (a change time
    cannot be set back) until the next check (:class:`OursMemo`): one ``lstat`` a file."""
    key = os.path.realpath(package)
    if key not in _ours:
        mine = _mine()
        try:
            _ours[key] = key == os.path.realpath(mine) or _verified(package, mine)
        except OSError:  # a file that cannot be read: its bytes are not known to be ours
            _ours[key] = False
    return _ours[key]


def _verified(package, mine):
    found = _listing(package)
    if found is None:
        return False
    memo = OursMemo(private_cache.DIRECTORY)
    key = _sha_bytes(("%s\n%s" % (os.path.realpath(mine), "\n".join(sorted(found[2])))).encode(
        "utf-8", "surrogateescape"))
    verdict = memo.known.get(key) is True or _same_runtime(found, mine)
    if verdict:
        memo.used[key] = True
    memo.save()
    return verdict


def _listing(top):
    """``({relative path: path}, {relative path: path of a __pycache__ file}, [a line per
    file that matters: path, inode, size, times])`` of the files under ``top``, or None
    when one of them (or ``top``) is a symbolic link or neither a file nor a directory."""
    if os.path.islink(top) or not os.path.isdir(top):
        return None
    tag = ".%s." % sys.implementation.cache_tag
    files, pycs, rows, pending = {}, {}, [], [(top, "")]

    def row(name, entry):
        st = entry.stat(follow_symlinks=False)
        rows.append("%s %d %d %d %d" % (name, st.st_ino, st.st_size, st.st_mtime_ns,
                                        st.st_ctime_ns))

    while pending:
        directory, rel = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                name = rel + entry.name
                if entry.is_symlink():
                    return None
                if entry.is_dir(follow_symlinks=False):
                    if entry.name == "__pycache__":
                        with os.scandir(entry.path) as cached:
                            for c in cached:
                                pycs[name + "/" + c.name] = c.path
                                if tag in c.name:  # this interpreter's: the others never run
                                    row(name + "/" + c.name, c)
                    else:
                        pending.append((entry.path, name + "/"))
                elif entry.is_file(follow_symlinks=False):
                    files[name] = entry.path
                    row(name, entry)
                else:
                    return None
    return files, pycs, rows


def _same_runtime(found, mine):
    expected = _listing(mine)
    if expected is None:
        return False
    files = {rel: path for rel, path in found[0].items() if rel not in NOT_CODE}
    if set(files) != set(expected[0]):
        return False
    sources = {}
    for rel, path in files.items():
        data, st = _read(path)
        if data is None or data != _read(expected[0][rel])[0]:
            return False
        sources[rel] = (data, st)
    memo = RuntimePycMemo(private_cache.DIRECTORY)
    try:
        return all(_pyc_ours(rel, path, sources, expected[1].get(rel), memo)
                   for rel, path in sorted(found[1].items()))
    finally:
        memo.save()


#: The largest file of a deployed runtime read (its modules and their bytecode: ~100 KB).
MAX_FILE = 1 << 24


def _read(path):
    """``(bytes, stat)`` of the regular file ``path`` (no link followed), or ``(None,
    None)``: read by :func:`..pathfacts.read_regular` (never a FIFO, never waiting)."""
    data, st, _why = pathfacts.read_regular(path, MAX_FILE, follow=False)
    return (data, st) if data is not None else (None, None)


#: ``NAME.TAG.pyc`` and ``NAME.TAG.opt-N.pyc``: the optimisation level of each.
_LEVELS = (("", 0), (".opt-1", 1), (".opt-2", 2))


def _pyc_ours(rel, path, sources, mine, memo):
    """Is the ``__pycache__`` file ``rel`` of a deployed runtime harmless: not one this
    interpreter runs (another interpreter's, or not valid for its source: the source is
    compiled instead), or its source's code (the same bytes as our own copy of it,
    ``mine``, or compiled alike)?"""
    directory, _, name = ("/" + rel).rpartition("/__pycache__/")
    directory = directory[1:]
    tag = sys.implementation.cache_tag
    ends = [(".%s%s.pyc" % (tag, suffix), level) for suffix, level in _LEVELS
            if name.endswith(".%s%s.pyc" % (tag, suffix))]
    if not ends:
        return True  # another interpreter's bytecode: never run by this one
    end, level = ends[0]
    source = sources.get((directory + "/" if directory else "") + name[:-len(end)] + ".py")
    if source is None:
        return True  # bytecode in __pycache__ without its source is never imported
    data = _read(path)[0]
    if data is None:
        return False
    if not modules.runs_for(data, source[0], source[1]):
        return True  # the source is compiled instead
    if mine is not None and _read(mine)[0] == data:
        return True
    return memo.alike(source[0], data[16:], level)


class RuntimePycMemo(private_cache.Memo):
    """Whether a deployed runtime's bytecode is its source's code, by the sha256 of both
    and the optimisation level, kept from one check to the next: a repeat check compiles
    nothing."""

    FORMAT = 1
    NAME = "runtime-pycs-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)

    @staticmethod
    def valid(value):
        return type(value) is bool

    def alike(self, source, body, level):
        key = "%d %s %s" % (level, _sha_bytes(source), _sha_bytes(body))
        found = self.known.get(key)
        if found is None:
            found = modules.compiled_alike(source, body, level)
        self.used[key] = found
        return found


class OursMemo(private_cache.Memo):
    """The deployed runtimes found to be ours (:func:`ours`), by their files' ``lstat``
    lines and our own package's path, kept until the next check."""

    FORMAT = 1
    NAME = "own-runtime-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)

    @staticmethod
    def valid(value):
        return value is True


def _sha_bytes(data):
    h = integrity._hasher("sha256")
    h.update(data)
    return h.hexdigest()
