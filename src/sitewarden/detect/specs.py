"""Facts about module specs found in one directory, shared by the runtime shadow check,
its cases and ``check``'s collectors (``PathFinder`` asked about a single entry)."""

import os
import sys

from .. import _swallowed, pathfacts


def _path_finder():
    external = sys.modules.get("_frozen_importlib_external")
    finder = getattr(external, "PathFinder", None)
    if finder is None:
        from importlib.machinery import PathFinder as finder  # only without the frozen one
    return finder


def find_in(fullname, entry):
    """The spec ``PathFinder`` finds for ``fullname`` in the one directory
    ``entry`` (a ``sys.path`` entry, or a package portion for a submodule)."""
    try:
        return _path_finder().find_spec(fullname, [entry])
    except Exception:
        _swallowed("looking for %r in %s" % (fullname, entry))
        return None


#: File names that match whatever their case (importlib then compares them itself).
_CASE_BLIND = sys.platform.startswith(("win", "cygwin", "darwin"))


def listed_among(entry, names, suffixes):
    """Which of the top-level ``names`` ``entry``'s listing may provide (a superset of
    those :func:`find_in` finds there), from the listing importlib's own ``FileFinder``
    keeps for it (:func:`.pathfacts.present_among`): a set lookup where ``find_in``
    costs a ``stat`` and a finder's search.  None when the entry's importer is not a
    ``FileFinder`` (a zip, a path hook's) or names match whatever their case: then
    ``find_in`` is asked for each name.  An entry no path hook accepts (a directory that
    does not exist: importlib keeps None for it) provides nothing."""
    if _CASE_BLIND or not isinstance(entry, str):
        return None
    try:
        found = pathfacts.present_among(entry, names, suffixes)  # creates the importer
        external = sys.modules["_frozen_importlib_external"]  # loaded at startup
        # importlib keeps the working directory's ('' on sys.path) under its path
        importer = sys.path_importer_cache.get(entry or pathfacts.cwd(), False)
        if importer is None:
            return set()  # what find_in finds there: PathFinder skips the entry
        if isinstance(importer, external.FileFinder):
            return found
    except Exception:
        _swallowed("listing %s (each module is looked up)" % (entry,))
    return None


def is_regular(spec):
    """A module or a regular package (not a namespace portion)."""
    return (spec is not None and spec.loader is not None
            and spec.origin not in (None, "namespace"))


def copy_path(spec):
    """A package's directory, or a module's file."""
    origin = spec.origin
    if spec.submodule_search_locations is not None and origin and \
            os.path.basename(origin).startswith("__init__."):
        return os.path.dirname(origin)
    return origin


def same_file(a, b):
    if not a or not b:
        return False
    return pathfacts.real(a) == pathfacts.real(b)


def pkgutil_style(spec):
    """A regular package whose ``__init__`` extends its ``__path__`` over
    every portion (``pkgutil.extend_path``, ``pkg_resources.declare_namespace``).
    Its head read by :func:`..pathfacts.read_regular` (never a FIFO; no file: None)."""
    head = pathfacts.read_regular(spec.origin, 8192, cut=True)[0] or b""
    return b"extend_path" in head or b"declare_namespace" in head


def portion(entry, name):
    """The directory of package ``name`` (dotted) inside ``entry``."""
    return os.path.join(entry or os.curdir, *name.split("."))
