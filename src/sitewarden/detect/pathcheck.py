"""``sys.path`` order problems.

Findings and severities (``check`` lists them all):

- a module in the ``script`` entry, a ``pythonpath`` entry or an entry added
  at startup ahead of the standard library that shadows a standard library
  module: high (there is no script entry under ``-P``/``PYTHONSAFEPATH``/``-I``);
- a ``foreign`` entry (another interpreter's directory): high;
- a ``distro`` entry ahead of a ``local`` entry: medium;
- an entry inserted ahead of the standard library by a ``.pth`` import line
  (or other startup code): medium;
- duplicate entries, one directory twice through a symlink, missing
  directories (a missing ``pythonXY.zip`` is normal): low.

At runtime (armed by ``_watch`` at the first import after startup) only high
findings warn, once
each, as ``sitewarden.PathWarning``, and only when they matter: a foreign
entry at the first import after startup (``sys.path`` is complete then), a
shadowed standard library module when it is actually imported from the
shadowing entry (or already was, while ``site`` ran).  The standard-library
names present in the entries ahead of the standard library (one
``os.scandir`` per such entry) are watched (``sitewarden._watch_module``): no
per-import cost beyond the dict lookup the finder makes anyway.
``layout`` (the exact classification) is loaded only to word a warning and
for ``check``: watching costs this module, ``emit`` and ``shadowing``.
"""

import os
import sys

from .. import _swallowed, _watch_module, pathfacts
from ..facts import distinfo
from ..facts.records import Finding, PathSection
from . import emit
from .specs import copy_path, find_in, is_regular, same_file


def _layout():
    """The ``layout`` module, loaded to word a warning (and by ``check``)."""
    from . import layout  # not at module level: watching the standard library skips it

    return layout


def _stdlib_real():
    d = pathfacts.stdlib_dir()
    return pathfacts.real(d) if d else None


def _builtin_or_frozen(name):
    bootstrap = sys.modules.get("_frozen_importlib")
    for importer in ("BuiltinImporter", "FrozenImporter"):
        finder = getattr(bootstrap, importer, None)
        if finder is None:
            continue
        try:
            if finder.find_spec(name) is not None:
                return True
        except Exception:
            _swallowed("asking %s about %r" % (importer, name))
    return name in sys.builtin_module_names


def describe_entry(index, entry):
    """Where an entry ahead of the standard library comes from, in words."""
    layout = _layout()
    pythonpath = set(layout.path_key(p) for p in layout.pythonpath_entries())
    if index == 0 and layout.has_script_entry():
        if entry in ("", "."):
            return "the current directory ('' at sys.path[0])"
        return "the script's directory (%s, sys.path[0])" % entry
    if layout.path_key(entry) in pythonpath:
        if layout.empty_pythonpath_entry(entry):
            return "the empty PYTHONPATH entry (the current directory, %s)" % entry
        return "the PYTHONPATH entry %s" % entry
    starters = _starters()
    if not starters:
        return "%s, put ahead of the standard library at startup (by a .pth file's import " \
            "line or sitecustomize)" % entry
    return "%s, put ahead of the standard library at startup by %s%s" % (
        entry, "" if len(starters) == 1 else "one of: ", ", ".join(
            "%s (%s)" % (path, "installed by %s %s" % (d.name, d.version or "") if d
                         else "no package's record lists it") for path, d in starters))


def _starters():
    """``[(file, distribution or None)]``: the startup code that can have put an entry
    ahead of the standard library, and who installed it: each ``.pth`` file with an
    import line in the site directories (``site`` ran them), then the ``sitecustomize``
    and ``usercustomize`` this process loaded.  Read only to word a warning."""
    layout = _layout()
    dirs = pathfacts.site_dirs() + [d for d in [pathfacts.user_site()] if d]
    own = os.path.join(_own_site_dir(), "sitewarden.pth")  # the guard's hook: not it
    out = [(pth, distinfo.pth_owner(pth)) for pth in layout.pth_entries(dirs)[1]
           if pth != own]
    for name in ("sitecustomize", "usercustomize"):
        path = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(path, str):
            out.append((path, distinfo.lister(path)))
    return out


def _own_site_dir():
    """The site directory this runtime is deployed in (``sitewarden/detect/`` is two
    levels below it)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _by_startup(index, entry):
    """Was ``entry`` put ahead of the standard library by startup code (a ``.pth``
    import line, ``sitecustomize``), not by the user (the script's directory,
    ``PYTHONPATH``)?"""
    layout = _layout()
    if index == 0 and layout.has_script_entry():
        return False
    return layout.path_key(entry) not in set(
        layout.path_key(p) for p in layout.pythonpath_entries())


def stdlib_shadow(name, path=None):
    """``(index, entry, shadowing spec, stdlib spec)`` when importing ``name``
    would load a copy from an entry ahead of the standard library instead of
    the standard library's own; else None."""
    if _builtin_or_frozen(name):
        return None
    path = list(sys.path) if path is None else path
    stdlib_real = _stdlib_real()
    winner = None
    stdlib_entries = []
    for index, entry in enumerate(path):
        if not isinstance(entry, str):
            continue
        if pathfacts.is_stdlib_entry(entry, stdlib_real):
            stdlib_entries.append(entry)
            continue
        if winner is None and not stdlib_entries:
            spec = find_in(name, entry)
            if is_regular(spec):
                winner = (index, entry, spec)
    if winner is None:
        return None
    for entry in stdlib_entries:
        spec = find_in(name, entry)
        if is_regular(spec):
            return winner + (spec,)
    return None


def format_stdlib(name, shadow, already=False):
    index, entry, spec, stdlib_spec = shadow
    path = copy_path(spec)
    head = "'%s' %s from %s instead of the standard library's %s: %s comes first on " \
        "sys.path." % (name, "was already imported" if already else "is imported", path,
                       copy_path(stdlib_spec), describe_entry(index, entry))
    if _by_startup(index, entry):  # not the user's file to rename: what put it there goes
        return head + (" Startup code put it there, not you: do not rename a package's file. "
                       "Consider removing that code: `sitewarden check` names it and the "
                       "command that takes it out of every start without starting this "
                       "interpreter (sitewarden quarantine ID); or, if it is meant, "
                       "SITEWARDEN_SILENCE=path silences this warning.")
    return head + (" Consider renaming '%s' since it has the same name as the standard "
                   "library module named '%s' and the import system gives it precedence."
                   % (path, name))


def format_foreign(entry, version, source):
    here = "%d.%d" % sys.version_info[:2]
    return ("sys.path entry %s%s belongs to Python %s, not to this Python %s: modules "
            "imported from it can fail or shadow this interpreter's own (python2.7's enum34 "
            "breaks 're'). Consider removing it%s." % (
                entry, " (from %s)" % source if source else "", version, here,
                " from %s" % source if source else " from sys.path"))


# ---------------------------------------------------------------- runtime


#: ``[(index, entry)]`` ahead of the standard library when the watch started.
_ahead = []


def watch_stdlib(names, ahead):
    """Watch standard library ``names`` that the entries ``ahead`` of the standard
    library provide (called by ``_watch`` at the first import after startup)."""
    _ahead[:] = ahead

    # Imported while site ran, or by the display of a foreign-entry warning.
    for name in sorted(names):
        module = sys.modules.get(name)
        if module is not None and emit.claim(("stdlib-checked", name)):
            _check_loaded(name, module, already=True)
    # Checked after the module executed (a post-exec hook, see ``patching``), not
    # before: showing a warning imports linecache -> tokenize -> re -> enum, which
    # must not import a shadowing ``enum`` a second time in the middle of its import.
    for name in names:
        if name not in sys.modules:
            _watch_module(name, on_stdlib_loaded)


def _source_of(entry):
    layout = _layout()
    if layout.path_key(entry) in set(layout.path_key(p) for p in layout.pythonpath_entries()):
        return "PYTHONPATH"
    return None


def warn_foreign():
    for entry in list(sys.path):
        if not isinstance(entry, str):
            continue
        version = pathfacts.foreign_version(entry)
        if version is not None:
            emit.emit("path", ("foreign", entry),
                       format_foreign(entry, version, _source_of(entry)), "PathWarning")


def _check_loaded(name, module, already=False):
    """Warn if ``module`` (standard library ``name``) was loaded from an entry
    ahead of the standard library that has its own copy."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if not origin or origin in ("built-in", "frozen"):
        return
    for index, entry in list(_ahead):
        if not same_file(getattr(find_in(name, entry), "origin", None), origin):
            continue
        stdlib = [e for e in sys.path if pathfacts.is_stdlib_entry(e)]
        sspec = next((s for s in (find_in(name, e) for e in stdlib) if is_regular(s)), None)
        if sspec is not None:
            emit.emit("path", ("stdlib", name),
                       format_stdlib(name, (index, entry, spec, sspec), already=already),
                       "PathWarning")
        return


def on_stdlib_loaded(module):
    """Post-exec hook of a watched standard library name."""
    try:
        name = module.__name__
        if emit.claim(("stdlib-checked", name)):
            _check_loaded(name, module)
    except Exception:
        _swallowed("the sys.path check of %r" % (getattr(module, "__name__", module),))


# ---------------------------------------------------------------- check


def collect():
    """``check`` collector: every ``sys.path`` order finding."""
    entries = _layout().current(read_pth=True)[1]
    stdlib_seen = False
    pre = []
    for e in entries:
        if e.cls == "stdlib":
            stdlib_seen = True
            break
        pre.append(e)
    findings = _stdlib_shadowed(pre, entries) if stdlib_seen else []
    findings += [_foreign_finding(e) for e in entries if e.cls == "foreign"]
    findings += _distro_before_local(entries)
    findings += [_inserted_finding(e) for e in pre
                 if e.source not in ("script", "PYTHONPATH") and isinstance(e.path, str)]
    findings += [f for f in (_entry_finding(e, entries) for e in entries) if f is not None]
    return "path", PathSection(findings), findings


def _stdlib_shadowed(pre, entries):
    """``stdlib-shadowed``: a standard library module in an entry ahead of it."""
    names = pathfacts.stdlib_names()
    suffixes = pathfacts.module_suffixes()
    path = [e.path for e in entries]
    found = set()
    out = []
    for e in pre:
        if not isinstance(e.path, str):
            continue
        for name in sorted(pathfacts.top_level_names(e.path, suffixes)):
            if name not in names or name in found:
                continue
            shadow = stdlib_shadow(name, path)
            if shadow is None or shadow[0] != e.index:
                continue
            found.add(name)
            out.append(Finding("stdlib-shadowed", "high", format_stdlib(name, shadow),
                               module=name, entry=e.path, entry_class=e.cls,
                               path=shadow[2].origin, stdlib=shadow[3].origin))
    return out


def _foreign_finding(e):
    return Finding("foreign-entry", "high",
                   format_foreign(e.path, e.foreign,
                                  e.source if e.source == "PYTHONPATH" else None),
                   entry=e.path, version=e.foreign, source=e.source)


def _distro_before_local(entries):
    first_distro = next((e for e in entries if e.cls == "distro"), None)
    if first_distro is None:
        return []
    later_local = [e for e in entries if e.cls == "local"
                   and e.index > first_distro.index and e.duplicate_of is None]
    if not later_local:
        return []
    return [Finding(
        "distro-before-local", "medium",
        "the distro directory %s (sys.path[%d]%s) comes before the install "
        "directory %s (sys.path[%d]): packages upgraded with pip are hidden behind the "
        "distro's copies" % (
            first_distro.path, first_distro.index,
            ", from %s" % first_distro.source
            if first_distro.source not in (None, "site") else "",
            later_local[0].path, later_local[0].index),
        entry=first_distro.path, local=later_local[0].path)]


def _inserted_finding(e):
    return Finding(
        "inserted-ahead-of-stdlib", "medium",
        "%s (sys.path[%d]) was put ahead of the standard library at startup%s: "
        "any module in it can shadow the standard library" % (
            e.path, e.index,
            " (by %s)" % e.source if e.source not in (None, "startup", "site")
            else " (by a .pth file's import line or sitecustomize)"),
        entry=e.path, source=e.source)


def _entry_finding(e, entries):
    """A duplicate, symbolically linked or missing entry's finding, or None."""
    if e.duplicate_of is not None:
        return Finding("duplicate-entry", "low",
                       "%s is on sys.path twice (sys.path[%d] and [%d])" % (
                           e.path or "''", e.duplicate_of, e.index),
                       entry=e.path, first=e.duplicate_of)
    if e.same_as is not None:
        other = entries[e.same_as]
        return Finding("symlinked-entry", "low",
                       "%s (sys.path[%d]) is the same directory as %s (sys.path[%d]), through "
                       "a symbolic link" % (e.path, e.index, other.path, other.index),
                       entry=e.path, first=other.path)
    if not e.exists and isinstance(e.path, str):
        if e.cls == "stdlib" and os.path.basename(e.path).endswith(".zip"):
            return None  # pythonXY.zip is on sys.path whether it exists or not
        return Finding("missing-entry", "low",
                       "%s (sys.path[%d], %s) does not exist" % (
                           e.path or "'' (the working directory, deleted)", e.index, e.cls),
                       entry=e.path)
    return None
