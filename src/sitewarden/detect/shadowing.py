"""Modules whose distro copy is shadowed by a copy earlier on ``sys.path``.

At runtime (``_watch``, at the first import after startup): an index of the
top-level names in the directories that may be distro-owned
(``pathfacts.distro_candidates``, ``os.scandir`` only) is built, and the
per-import check is one dict membership test; for modules that shadow
nothing it does nothing else.  For a name in the index (:func:`on_candidate`),
once per process,
``PathFinder.find_spec(name, [entry])`` asks each entry in ``sys.path`` order
(cached directory listings) which copy wins; only when a copy earlier than a
distro copy wins is the exact layout computed, the two copies' metadata read
(``distinfo``) and the distro distributions' requirements checked.  Then one
``sitewarden.ShadowWarning`` is issued.  What gets imported never changes.

Namespace packages: a namespace portion is not shadowing; a real module
inside one that is duplicated earlier is (``lazr.uri`` when a local
``lazr/uri`` exists).  When a namespace name from the index is imported, the
duplicated real submodules are found (scandir of the distro portion,
``find_spec`` in the earlier portions) and watched
(``sitewarden._watch_module``); when one of them has executed, where it came
from decides.

This module is all that an import of a name in the index loads (with ``emit``)
when it shadows nothing; a case that does shadow is built and worded by
``cases``, loaded then.  ``shadowscan`` is the ``check`` collector: every
shadowed module (recursing into namespace packages), every distribution whose
metadata is shadowed, every violated requirement.
"""

import os
import sys

from .. import _swallowed, _watch_module, pathfacts
from . import emit
from .specs import find_in, is_regular, pkgutil_style, portion, same_file

_state = {"watch": {}}

#: Classes whose copies are watched for being shadowed.
WATCHED = ("distro", "system")


# ---------------------------------------------------------------- runtime


def _cases():
    """The ``cases`` module, loaded once a copy shadows."""
    from . import cases  # not at module level: an import that shadows nothing skips it

    return cases


def on_candidate(name):
    """A name of the shadow index is about to be imported (once per process)."""
    if not emit.claim(("shadow-checked", name)):
        return
    pathfacts.remember_real()  # until the warning is worded: each directory resolved once
    try:
        case = runtime_case(name)
        if case is not None:
            emit.emit("shadow", name, _cases().warning(case), "ShadowWarning")
    finally:
        pathfacts.forget_real()


def on_startup_module(name, module):
    """``name`` was imported while ``site`` ran (by a ``.pth`` import line,
    sitecustomize or usercustomize) from outside the distro directories: warn now
    (the first import after startup) if that copy shadows the distro's."""
    try:
        if not emit.claim(("shadow-checked", name)):
            return
        pathfacts.remember_real()
        case = runtime_case(name)
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
        if case is None or not same_file(case.winner.file, origin):
            return
        where = _cases().startup_importer(name)
        case.startup = where[0] if where else True
        emit.emit("shadow", name, _cases().warning(case), "ShadowWarning", where=where)
    except Exception:
        _swallowed("the shadow check of %r, imported at startup" % (name,))
    finally:
        pathfacts.forget_real()


def runtime_case(name):
    """The shadowing of top-level ``name`` about to be imported, or None."""
    winner = None
    distro_copy = None
    before = []  # namespace portions (or pkgutil-style packages) ahead of the distro's
    distro_portions = []
    for index, entry in enumerate(list(sys.path)):
        if not isinstance(entry, str):
            continue
        spec = find_in(name, entry)
        if spec is None:
            continue
        candidate = pathfacts.is_candidate(entry)
        if is_regular(spec):
            if winner is None:
                if candidate:
                    return None  # the distro's own copy is imported
                winner = (index, entry, spec)
            elif candidate:
                distro_copy = (index, entry, spec)
                break
        elif candidate:
            distro_portions.append((index, entry))
            if winner is not None:
                break
        elif winner is None:
            before.append((index, entry))
    if distro_copy is None:
        if distro_portions:
            if winner is not None:
                if not pkgutil_style(winner[2]):
                    return _cases().hidden(name, winner, distro_portions)
                before.insert(0, (winner[0], winner[1]))
            if before:
                _watch_namespace(name, before, distro_portions)
        return None
    return _cases().build(name, winner, distro_copy)


def _watch_namespace(name, before, distro_portions):
    """Watch the real submodules of the distro's portions of namespace package
    ``name`` that an earlier portion duplicates."""
    for dindex, dentry in distro_portions:
        dportion = portion(dentry, name)
        for sub in sorted(pathfacts.top_level_names(dportion)):
            full = name + "." + sub
            if full in _state["watch"]:
                continue
            dspec = find_in(full, dportion)
            if not is_regular(dspec):
                continue
            for bindex, bentry in before:
                if bindex > dindex:
                    continue
                bspec = find_in(full, portion(bentry, name))
                if is_regular(bspec):
                    _state["watch"][full] = ((bindex, bentry), (dindex, dentry, dspec))
                    _watch_module(full, on_watched_module)
                    break


def on_watched_module(module):
    """After a watched submodule executed: warn if it is not the distro's copy."""
    try:
        name = module.__name__
        info = _state["watch"].get(name)
        spec = getattr(module, "__spec__", None)
        if info is None or spec is None or not is_regular(spec):
            return
        if not emit.claim(("shadow-checked", name)):
            return
        pathfacts.remember_real()
        (bindex, bentry), distro_copy = info
        top = name.split(".")[0]
        # The sys.path entry that holds the imported file.
        entry, index = bentry, bindex
        for i, e in enumerate(sys.path):
            if isinstance(e, str) and _underportion(spec.origin, e, top):
                entry, index = e, i
                break
        case = _cases().build(name, (index, entry, spec), distro_copy)
        if case is not None:
            emit.emit("shadow", name, _cases().warning(case), "ShadowWarning")
    except Exception:
        _swallowed("the shadow check of %r" % (getattr(module, "__name__", module),))
    finally:
        pathfacts.forget_real()


def _underportion(origin, entry, top):
    root = os.path.join(pathfacts.real(entry), top) + os.sep
    return isinstance(origin, str) and pathfacts.real(origin).startswith(root)
