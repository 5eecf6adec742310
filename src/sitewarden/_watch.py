"""The part of the shadowing and ``sys.path`` checks that runs in every process.

Registered in ``sitewarden.STARTED_HOOKS``, :func:`started` runs once, at the
first import after ``site`` has built ``sys.path``.  It is kept small (one
module besides ``settings``; no ``sysconfig``, ``warnings``, ``threading``,
metadata or ``packaging``) because every guarded process pays for it:

- foreign entries (another interpreter's directories) are recognised by their
  names alone and warned about right away (``pathcheck``);
- the standard-library names present in the entries ahead of the standard
  library (one ``os.scandir`` each) are watched (``sitewarden._watch_module``),
  checked after such a module executed (``pathcheck.on_stdlib_loaded``);
- the top-level names of the directories that may be distro-owned
  (:func:`distro_candidates`, one ``os.scandir`` each) form the shadow index;
  its names join ``sitewarden.HOOKS`` (with no post-exec hook), the one dict
  the finder tests every import against, and only a name in the index reaches
  ``shadowing`` (once per process).

What an entry is (foreign, standard library, distro candidate) is decided by
``pathfacts``.  Runtime module: ``os``, ``sys`` and ``pathfacts`` (which :func:`started`
loads at every start anyway) at module level.
"""

import os
import sys

from .pathfacts import (
    absolute,
    entries_ahead_of_stdlib,
    foreign_version,
    listed_parts,
    module_suffixes,
    present_among,
    stdlib_names,
)
from .pathfacts import (
    candidates as distro_candidates,
)

# ---------------------------------------------------------------- started


def started(finder):
    """``STARTED_HOOKS`` entry: keep the guard first, arm the ``sys.path`` and
    shadowing watches."""
    _move_to_front(finder)
    quiet = ()
    if os.environ.get("SITEWARDEN_SILENCE"):
        from .settings import silenced_kinds  # only when a silence is asked for

        quiet = silenced_kinds()
        if quiet and os.environ.get("SITEWARDEN_DEBUG"):
            from .failopen import tell  # only when asked why warnings do not come

            for kind in sorted(quiet):
                tell("%s warnings are off in this process: silenced by SITEWARDEN_SILENCE=%s"
                     % (kind, os.environ["SITEWARDEN_SILENCE"]))
    suffixes = module_suffixes()
    if "path" not in quiet:
        _start_path(suffixes)
    if "shadow" not in quiet:
        _start_shadow(finder, suffixes)


def _move_to_front(finder):
    """Finders that later ``.pth`` files put ahead (``_distutils_hack``) must not
    hide watched modules from the guard.  Safe during the import system's
    iteration: entries after ours keep their indexes."""
    meta_path = sys.meta_path
    if meta_path and meta_path[0] is not finder and finder in meta_path:
        meta_path.remove(finder)
        meta_path.insert(0, finder)


def _start_path(suffixes):
    for entry in list(sys.path):
        if isinstance(entry, str) and foreign_version(entry) is not None:
            from .detect.pathcheck import warn_foreign  # only for another version's entry

            warn_foreign()
            break
    pre = entries_ahead_of_stdlib()
    if not pre:
        return
    names = set(stdlib_names()).difference(sys.builtin_module_names)
    watch = set()
    for _index, entry in pre:
        watch |= present_among(entry, names, suffixes)
    if watch:
        from .detect.pathcheck import watch_stdlib  # only when a stdlib name is ahead

        watch_stdlib(watch, pre)


def _start_shadow(finder, suffixes):
    candidates = distro_candidates()
    if not candidates:
        return
    # A superset of the names the candidates provide (every dot-separated part of
    # their file names): a name that is not a module costs only its own import.
    index = set()
    done = set()
    for entry in list(sys.path):
        if not isinstance(entry, str):
            continue
        n = absolute(entry)
        if n not in candidates or n in done:
            continue
        done.add(n)
        index |= listed_parts(n)
    if index:
        finder._checks.append(_make_check(index))
        # Only the names in HOOKS reach the check (value None: no post-exec hook);
        # added after the check, so a racing thread that sees a name finds its check.
        hooks = finder.HOOKS
        hooks.update(dict.fromkeys(index.difference(hooks)))
        _check_startup_modules(index, candidates)


def _check_startup_modules(index, candidates):
    """Modules that ``.pth`` files, sitecustomize or usercustomize imported while
    ``site`` ran are never imported again: those of the index whose file is not
    in a distro candidate directory are checked now (a few string operations per
    module loaded at startup; ``shadowing`` is imported only for a suspect)."""
    stdlib = stdlib_names()  # the standard library's own, loaded before site: not shadows
    own = __name__.partition(".")[0]  # the guard's two copies (install's, the Debian
    # package's): one runs, the other stays silent, ``status`` reports both
    for name, module in list(sys.modules.items()):
        if name not in index or module is None or name in stdlib or name == own:
            continue
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
        if not origin or not isinstance(origin, str) or not os.path.isabs(origin):
            continue  # built in, frozen, a namespace package
        entry = os.path.dirname(origin)
        if getattr(module, "__path__", None) is not None:
            entry = os.path.dirname(entry)
        if absolute(entry) in candidates:
            continue  # the distro's own copy
        from .detect.shadowing import on_startup_module  # only for a suspect

        on_startup_module(name, module)


def _make_check(index):
    def check(name):
        if name in index:
            from .detect.shadowing import on_candidate  # only for a candidate name

            on_candidate(name)

    return check
