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
``find_spec`` in the earlier portions) and watched through
``sitewarden.HOOKS``; when one of them has executed, where it came from
decides.

``collect`` is the ``check`` collector: every shadowed module (recursing
into namespace packages), every distribution whose metadata is shadowed,
every violated requirement.  Runtime module: only ``os`` and ``sys`` at
module level.
"""

import os
import sys

_state = {"watch": {}}

#: Classes whose copies are watched for being shadowed.
WATCHED = ("distro", "system")


# ---------------------------------------------------------------- specs


def _path_finder():
    external = sys.modules.get("_frozen_importlib_external")
    finder = getattr(external, "PathFinder", None)
    if finder is None:
        from importlib.machinery import PathFinder as finder
    return finder


def find_in(fullname, entry):
    """The spec ``PathFinder`` finds for ``fullname`` in the one directory
    ``entry`` (a ``sys.path`` entry, or a package portion for a submodule)."""
    try:
        return _path_finder().find_spec(fullname, [entry])
    except Exception:
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
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except Exception:
        return a == b


def top_level_names(directory, suffixes=None):
    """Importable top-level names directly in ``directory`` (``os.scandir`` only)."""
    from ..pathfacts import top_level_names as _names

    return _names(directory, suffixes)


def _pkgutil_style(spec):
    """A regular package whose ``__init__`` extends its ``__path__`` over
    every portion (``pkgutil.extend_path``, ``pkg_resources.declare_namespace``)."""
    try:
        with open(spec.origin, "rb") as f:
            head = f.read(8192)
    except Exception:
        return False
    return b"extend_path" in head or b"declare_namespace" in head


# ---------------------------------------------------------------- describing copies


def describe_copy(module, index, entry, spec, cls, origin=None, pth=None):
    """``(json dict, Distribution or None)`` for one copy of ``module``.  ``pth``: the
    ``.pth`` file whose path line put ``entry`` on ``sys.path``; when no metadata in
    ``entry`` claims the module, the distribution that installed that ``.pth`` owns it
    (an editable install: PEP 660 ``__editable__.*.pth``, flit, hatchling)."""
    from . import distinfo

    origin = origin or spec.origin
    dist = distinfo.owner(module, origin, entry)
    editable = False
    if dist is None and pth:
        dist = distinfo.pth_owner(pth)
        editable = dist is not None
    path = copy_path(spec) if spec is not None else origin
    data = {
        "index": index,
        "entry": entry,
        "class": cls,
        "path": path,
        "file": origin,
        "distribution": dist.name if dist is not None else None,
        "version": dist.version if dist is not None else None,
        "metadata": dist.path if dist is not None else None,
    }
    if pth:
        data["pth"] = pth
        data["editable"] = editable
    return data, dist


def requirement_report(module, winner_dist, shadowed_dists, consumer_dirs):
    """Requirements of the distributions in ``consumer_dirs`` on the module's
    distribution(s), checked against the copy that is imported.

    Returns ``[dict]`` with ``consumer``, ``consumer_version``,
    ``consumer_metadata``, ``requirement`` (text as written), ``requires``,
    ``installed`` (the version imported), ``status`` (``ok``, ``violated``,
    ``cannot compare``, ``other distribution``) and ``detail``.
    """
    from . import distinfo

    names = set()
    for dist in list(shadowed_dists) + [winner_dist]:
        if dist is not None and dist.canonical_name:
            names.add(dist.canonical_name)
    if not names:
        names.add(distinfo.canonicalize(module.split(".")[0]))
    out = []
    for consumer, text in distinfo.requirers(names, consumer_dirs):
        if consumer.canonical_name in names:
            continue
        wanted = distinfo.canonicalize(distinfo.requirement_name(text))
        if winner_dist is None:
            status, detail = distinfo.check_requirement(text, None)
            installed = None
            if status == "cannot compare":
                detail = "the imported copy has no metadata: its version is unknown"
        elif wanted == winner_dist.canonical_name:
            installed = winner_dist.version
            status, detail = distinfo.check_requirement(text, installed)
        else:
            installed = winner_dist.version
            status, detail = distinfo.check_requirement(text, None)
            if status != "not applicable" and status != "unparsable":
                status = "other distribution"
                detail = "'%s' is imported from %s %s, another distribution" % (
                    module, winner_dist.name, winner_dist.version or "(no version)")
        if status == "not applicable":
            continue
        out.append({
            "consumer": consumer.name,
            "consumer_version": consumer.version,
            "consumer_metadata": consumer.path,
            "requirement": text.strip(),
            "requires": wanted,
            "installed": installed,
            "status": status,
            "detail": detail,
        })
    return out


def violated(reqs):
    return [r for r in reqs if r["status"] in ("violated", "other distribution")]


# ---------------------------------------------------------------- messages


def _where(copy):
    cls = copy["class"]
    entry = copy["entry"]
    if cls == "script":
        return "the current directory" if entry in ("", ".") else "the script's directory"
    if cls == "pth" and copy.get("pth"):
        if copy.get("editable"):
            return "an editable install whose %s adds %s to sys.path" % (copy["pth"], entry)
        return "a directory added to sys.path by %s" % copy["pth"]
    return {
        "local": "the local install directory",
        "user": "the user site",
        "pythonpath": "a PYTHONPATH entry",
        "pth": "a directory added by a .pth file",
        "system": "the base interpreter's site",
        "foreign": "another Python's directory",
        "distro": "a distro directory",
        "stdlib": "the standard library",
    }.get(cls, "a sys.path entry")


def _dist_text(copy):
    if copy.get("distribution"):
        return "%s %s" % (copy["distribution"], copy.get("version") or "(no version)")
    return "no distribution metadata"


def advice(case, marker_applies=None):
    """What to do, for the copy that wins."""
    w = case["winner"]
    cls = w["class"]
    if (cls in ("local", "user") or w.get("editable")) and w.get("distribution"):
        if marker_applies is None:
            try:
                from ..guard.marker import applies

                marker_applies = applies()
            except Exception:
                marker_applies = False
        cmd = "%s -m pip uninstall%s %s" % (
            sys.executable or "python3",
            " --break-system-packages" if marker_applies else "", w["distribution"])
        return ("consider removing it (%s) and installing %s in a virtual environment instead"
                % (cmd, w["distribution"]))
    if cls == "pythonpath":
        return "consider removing %s from PYTHONPATH" % w["entry"]
    if cls == "script":
        return "consider renaming or removing %s" % w["path"]
    if cls == "pth":
        if w.get("pth"):
            return "consider removing the line that adds %s from %s" % (w["entry"], w["pth"])
        return "consider removing the .pth file that adds %s to sys.path" % w["entry"]
    return "consider removing %s or moving it out of sys.path" % w["path"]


def format_case(case, marker_applies=None):
    """The warning: one paragraph naming both copies, the broken requirements
    and what to do."""
    if case.get("hidden"):
        return format_hidden(case, marker_applies)
    from .distinfo import compare_versions

    module = case["module"]
    w = case["winner"]
    s = case["shadowed"][0]
    startup = case.get("startup")
    if startup:
        how = "was imported at startup %s from" % (
            "by %s" % startup if startup is not True
            else "(by a .pth file, sitecustomize or usercustomize)")
    else:
        how = "is imported from"
    text = "'%s' %s %s (%s, %s), which shadows the distro's copy %s (%s)" % (
        module, how, w["path"], _dist_text(w), _where(w), s["path"], _dist_text(s))
    if w.get("version") and s.get("version") and \
            compare_versions(w["version"], s["version"]) == "cannot compare":
        text += "; the versions cannot be compared (not PEP 440)"
    if w.get("distribution") and s.get("distribution") and case.get("other_distribution"):
        text += "; it belongs to another project than the distro's %s" % s["distribution"]
    reqs = case.get("requirements") or []
    bad = violated(reqs)
    unknown = [r for r in reqs if r["status"] == "cannot compare"]
    if bad:
        parts = ["%s %s requires '%s'" % (r["consumer"], r["consumer_version"] or "",
                                          r["requirement"]) for r in bad]
        label = w.get("distribution") and "%s %s" % (w["distribution"], w.get("version") or "") \
            or "this copy"
        text += "; %s violates the requirements of distro packages: %s" % (
            label.strip(), "; ".join(p.replace("  ", " ") for p in parts))
    elif reqs and not unknown:
        text += "; the requirements of the distro packages that use it still hold"
    if unknown:
        text += "; cannot compare against %s" % ", ".join(
            "%s's '%s' (%s)" % (r["consumer"], r["requirement"], r["detail"]) for r in unknown)
    text += ". Distro programs that import '%s' get this copy and may break: %s." % (
        module, advice(case, marker_applies))
    return text


# ---------------------------------------------------------------- runtime


def on_candidate(name):
    """A name of the shadow index is about to be imported (once per process)."""
    from . import emit

    if not emit.claim(("shadow-checked", name)):
        return
    case = runtime_case(name)
    if case is not None:
        emit.emit("shadow", name, format_case(case), "ShadowWarning")


def on_startup_module(name, module):
    """``name`` was imported while ``site`` ran (by a ``.pth`` import line,
    sitecustomize or usercustomize) from outside the distro directories: warn now
    (the first import after startup) if that copy shadows the distro's."""
    try:
        from . import emit

        if not emit.claim(("shadow-checked", name)):
            return
        case = runtime_case(name)
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
        if case is None or not same_file(case["winner"]["file"], origin):
            return
        where = startup_importer(name)
        case["startup"] = where[0] if where else True
        emit.emit("shadow", name, format_case(case), "ShadowWarning", where=where)
    except Exception:
        pass


def startup_importer(name):
    """``(file, line number)`` of the first startup line that imports ``name``, in the
    order ``site`` runs them: the ``.pth`` files' import lines (user site, then the site
    directories, each sorted), then sitecustomize and usercustomize; or None."""
    from ..pathfacts import site_dirs, user_site

    files = []
    site = sys.modules.get("site")
    dirs = ([user_site()] if getattr(site, "ENABLE_USER_SITE", False) else []) + site_dirs()
    for d in dirs:
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".pth") and
                           not n.startswith("."))
        except (OSError, TypeError, ValueError):
            continue
        files.extend((os.path.join(d, n), True) for n in names)
    for hook in ("sitecustomize", "usercustomize"):
        origin = getattr(sys.modules.get(hook), "__file__", None)
        if origin:
            files.append((origin, False))
    from .distinfo import _read_file  # O_NONBLOCK: a FIFO cannot hang the process

    for path, pth in files:
        data = _read_file(path)
        if not data:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        for number, line in enumerate(lines, 1):
            if pth and not line.startswith(("import ", "import\t")):
                continue
            if _mentions(line, name):
                return path, number
    return None


def _mentions(line, name):
    start = line.find(name)
    while start >= 0:
        end = start + len(name)
        before = line[start - 1] if start else " "
        after = line[end] if end < len(line) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = line.find(name, end)
    return False


def _is_candidate(entry):
    from ..pathfacts import is_candidate

    return is_candidate(entry)


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
        candidate = _is_candidate(entry)
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
                if not _pkgutil_style(winner[2]):
                    return _hidden_case(name, winner, distro_portions)
                before.insert(0, (winner[0], winner[1]))
            if before:
                _watch_namespace(name, before, distro_portions)
        return None
    return _case_from(name, winner, distro_copy)


def _hidden_case(name, winner, portions):
    """A regular package ``name`` earlier on ``sys.path`` than the distro's portions
    of namespace package ``name``: their modules cannot be imported."""
    wi, wentry, wspec = winner
    f, classes = _exact_classes(wentry, *[e for _, e in portions])
    wcls, pclasses = classes[0], classes[1:]
    if wcls in ("distro", "stdlib") or (f["venv"] and wcls == "local") or \
            program_bundle(wentry):
        return None
    hidden = [(i, e) for (i, e), c in zip(portions, pclasses) if c == "distro"]
    if not hidden:
        return None
    wdata, _ = describe_copy(name, wi, wentry, wspec, wcls)
    subs = set()
    for _, entry in hidden:
        subs |= top_level_names(_portion(entry, name))
    return {
        "module": name,
        "winner": wdata,
        "hidden": [{"index": i, "entry": e, "class": "distro", "path": _portion(e, name)}
                   for i, e in hidden],
        "submodules": sorted("%s.%s" % (name, sub) for sub in subs),
    }


def format_hidden(case, marker_applies=None):
    """The warning for a regular package hiding a distro namespace package."""
    module = case["module"]
    w = case["winner"]
    subs = case.get("submodules") or []
    shown = ", ".join("'%s'" % s for s in subs[:6]) + (", ..." if len(subs) > 6 else "")
    return ("'%s' is imported from %s (%s, %s), a regular package that hides the distro's "
            "namespace package %s: %s cannot be imported. Distro programs that import %s "
            "fail: %s." % (
                module, w["path"], _dist_text(w), _where(w),
                ", ".join(h["path"] for h in case["hidden"]),
                "its modules (%s)" % shown if subs else "its modules",
                shown or "them", advice(case, marker_applies)))


def program_bundle(entry):
    """Is ``entry`` a zip archive that the program runs from or put on ``sys.path`` itself
    (a zipapp, ``python pip.whl/pip``, get-pip's ``pip.zip``), rather than one the user's
    configuration names (``PYTHONPATH``, a ``.pth`` path line)?  Its copies are the
    program's own: removing them is not the user's move, and the distro's programs never
    see them (they do not run with that entry), so they are not reported."""
    from . import layout
    from .distinfo import archive_of

    n = layout.norm(entry)
    if archive_of(n) is None:
        return False
    if n in set(layout.norm(p) for p in layout.pythonpath_entries()):
        return False
    return n not in _pth_map()


def _pth_map():
    """``{norm(path): .pth file}`` of the path lines of the ``.pth`` files ``site`` read
    (read only when a shadowing copy needs it)."""
    from . import layout

    f = layout.current()[0]
    dirs = ([f["user"]] if f.get("user") else []) + list(f.get("site_dirs") or ())
    return layout.pth_entries([d for d in dirs if d])[0]


def _pth_adding(entry):
    from . import layout

    return _pth_map().get(layout.norm(entry))


def _exact_classes(*entries):
    from . import layout

    f, classified = layout.current()
    return f, [layout.class_of(e, classified) for e in entries]


def _case_from(name, winner, distro_copy, winner_origin=None):
    wi, wentry, wspec = winner
    di, dentry, dspec = distro_copy
    from . import layout

    if layout.real(wentry) == layout.real(dentry):
        return None
    if same_file(winner_origin or wspec.origin, dspec.origin):
        return None
    f, (wcls, dcls) = _exact_classes(wentry, dentry)
    if dcls != "distro" or wcls in ("distro", "stdlib"):
        return None
    if f["venv"] and wcls == "local":
        return None  # a venv's own packages shadowing the system's: what venvs are for
    if program_bundle(wentry):
        return None
    wdata, wdist = describe_copy(name, wi, wentry, wspec, wcls, winner_origin,
                                 pth=_pth_adding(wentry) if wcls == "pth" else None)
    sdata, sdist = describe_copy(name, di, dentry, dspec, dcls)
    consumer_dirs = [e for e in sys.path if isinstance(e, str) and _is_candidate(e)]
    _, classes = _exact_classes(*consumer_dirs) if consumer_dirs else (None, [])
    consumer_dirs = [d for d, c in zip(consumer_dirs, classes) if c == "distro"]
    reqs = requirement_report(name, wdist, [sdist], consumer_dirs)
    return {
        "module": name,
        "winner": wdata,
        "shadowed": [sdata],
        "other_distribution": bool(wdist and sdist and
                                   wdist.canonical_name != sdist.canonical_name),
        "requirements": reqs,
    }


def _portion(entry, name):
    return os.path.join(entry or os.curdir, *name.split("."))


def _watch_namespace(name, before, distro_portions):
    """Watch the real submodules of the distro's portions of namespace package
    ``name`` that an earlier portion duplicates."""
    from .. import HOOKS as hooks
    for dindex, dentry in distro_portions:
        dportion = _portion(dentry, name)
        for sub in sorted(top_level_names(dportion)):
            full = name + "." + sub
            if full in _state["watch"]:
                continue
            dspec = find_in(full, dportion)
            if not is_regular(dspec):
                continue
            for bindex, bentry in before:
                if bindex > dindex:
                    continue
                bspec = find_in(full, _portion(bentry, name))
                if is_regular(bspec):
                    _state["watch"][full] = ((bindex, bentry), (dindex, dentry, dspec))
                    if hooks.get(full) is None:  # None: a shadow-index name
                        hooks[full] = "detect.shadowing:on_watched_module"
                    break


def on_watched_module(module):
    """After a watched submodule executed: warn if it is not the distro's copy."""
    try:
        from . import emit

        name = module.__name__
        info = _state["watch"].get(name)
        spec = getattr(module, "__spec__", None)
        if info is None or spec is None or not is_regular(spec):
            return
        if not emit.claim(("shadow-checked", name)):
            return
        (bindex, bentry), distro_copy = info
        top = name.split(".")[0]
        # The sys.path entry that holds the imported file.
        entry, index = bentry, bindex
        for i, e in enumerate(sys.path):
            if isinstance(e, str) and _under_portion(spec.origin, e, top):
                entry, index = e, i
                break
        case = _case_from(name, (index, entry, spec), distro_copy)
        if case is not None:
            emit.emit("shadow", name, format_case(case), "ShadowWarning")
    except Exception:
        pass


def _under_portion(origin, entry, top):
    root = os.path.join(os.path.realpath(entry or os.curdir), top) + os.sep
    try:
        return os.path.realpath(origin).startswith(root)
    except Exception:
        return False


# ---------------------------------------------------------------- check


def _guard_copies(case):
    """Two deployments of sitewarden itself (``sitewarden install``'s beside the Debian
    package's): one runs, the other stays silent; ``status`` reports them."""
    return case["module"] == "sitewarden" and all(
        os.path.isfile(os.path.join(c["path"] or "", "_deployment.json"))
        for c in [case["winner"]] + case["shadowed"])


def _severity(case, venv):
    classes = set(s["class"] for s in case["shadowed"])
    if classes == {"system"} or (venv and case["winner"]["class"] == "local"):
        return "info"
    if _guard_copies(case):
        return "info"
    if violated(case["requirements"]) or case.get("other_distribution"):
        return "high"
    return "medium"


class _Scanner:
    def __init__(self, facts, entries):
        self.facts = facts
        self.entries = entries
        self.path = [e["path"] for e in entries]
        self.cases = []
        self.hidden = []
        self.suffixes = None

    def cls(self, index):
        return self.entries[index]["class"]

    def usable(self, e):
        return isinstance(e["path"], str) and e["duplicate_of"] is None

    def watched_entries(self):
        return [e for e in self.entries if e["class"] in WATCHED and self.usable(e)
                and e["same_as"] is None]

    def run(self):
        seen = set()
        for e in self.watched_entries():
            for name in sorted(top_level_names(e["path"], self.suffixes)):
                if name not in seen:
                    seen.add(name)
                    self.module(name)

    def module(self, name):
        copies = []
        portions = []
        for e in self.entries:
            if not self.usable(e):
                continue
            spec = find_in(name, e["path"])
            if spec is None:
                continue
            if is_regular(spec):
                copies.append((e["index"], e["path"], spec))
            else:
                portions.append((e["index"], e["path"], _portion(e["path"], name)))
        if copies:
            winner = copies[0]
            shadowed = self.shadowed(name, winner, copies[1:])
            if shadowed:
                self.record(name, winner, shadowed)
                return
            watched_portions = [p for p in portions if self.cls(p[0]) in WATCHED]
            if watched_portions and self.cls(winner[0]) not in WATCHED:
                if _pkgutil_style(winner[2]):
                    portions.insert(0, (winner[0], winner[1],
                                        os.path.dirname(winner[2].origin)))
                    self.namespace(name, portions, 1)
                else:
                    self.hidden.append({
                        "module": name,
                        "winner": describe_copy(name, winner[0], winner[1], winner[2],
                                                self.cls(winner[0]))[0],
                        "hidden": [{"index": i, "entry": p, "class": self.cls(i), "path": d}
                                   for i, p, d in watched_portions],
                    })
            return
        if portions:
            self.namespace(name, portions, 1)

    def shadowed(self, name, winner, rest):
        wcls = self.cls(winner[0])
        if wcls in ("distro", "stdlib"):
            return []
        out = []
        for copy in rest:
            cls = self.cls(copy[0])
            if cls not in WATCHED or (wcls == "system" and cls == "system"):
                continue
            if layout_real(copy[1]) == layout_real(winner[1]) or \
                    same_file(copy[2].origin, winner[2].origin):
                continue
            out.append(copy)
        return out

    def namespace(self, name, portions, depth):
        if depth > 4:
            return
        watched = [p for p in portions if self.cls(p[0]) in WATCHED]
        if not watched or all(self.cls(p[0]) in WATCHED for p in portions):
            return
        subs = set()
        for p in watched:
            subs |= top_level_names(p[2], self.suffixes)
        for sub in sorted(subs):
            full = name + "." + sub
            copies, subportions = [], []
            for index, entry, portion in portions:
                spec = find_in(full, portion)
                if spec is None:
                    continue
                if is_regular(spec):
                    copies.append((index, entry, spec))
                else:
                    subportions.append((index, entry, os.path.join(portion, sub)))
            if copies:
                shadowed = self.shadowed(full, copies[0], copies[1:])
                if shadowed:
                    self.record(full, copies[0], shadowed)
            elif subportions:
                self.namespace(full, subportions, depth + 1)

    def pth(self, index):
        source = self.entries[index]["source"]
        return source if isinstance(source, str) and source.endswith(".pth") else None

    def record(self, name, winner, shadowed):
        wdata, wdist = describe_copy(name, winner[0], winner[1], winner[2], self.cls(winner[0]),
                                     pth=self.pth(winner[0]))
        sdatas, sdists = [], []
        for copy in shadowed:
            data, dist = describe_copy(name, copy[0], copy[1], copy[2], self.cls(copy[0]))
            sdatas.append(data)
            sdists.append(dist)
        consumer_dirs = [e["path"] for e in self.entries
                         if e["class"] == "distro" and self.usable(e) and e["same_as"] is None]
        from .distinfo import compare_versions

        case = {
            "module": name,
            "winner": wdata,
            "shadowed": sdatas,
            "comparison": compare_versions(wdata["version"], sdatas[0]["version"])
            if wdata["version"] and sdatas[0]["version"] else "cannot compare",
            "other_distribution": bool(wdist and sdists[0] and
                                       wdist.canonical_name != sdists[0].canonical_name),
            "requirements": requirement_report(name, wdist, sdists, consumer_dirs),
        }
        case["_dists"] = (wdist, sdists)
        self.cases.append(case)


def layout_real(path):
    from .layout import real

    return real(path)


def _distribution_view(entries):
    """pip's and ``importlib.metadata``'s view: for each distribution name, its
    copies along ``sys.path``; the first one is what they see."""
    from . import distinfo

    by_name = {}
    order = []
    for e in entries:
        if not isinstance(e["path"], str) or e["duplicate_of"] is not None or \
                e["same_as"] is not None:
            continue
        for dist in distinfo.distributions(e["path"]):
            key = dist.canonical_name
            if not key:
                continue
            if key not in by_name:
                by_name[key] = []
                order.append(key)
            if any(os.path.realpath(d.path) == os.path.realpath(dist.path)
                   for _, d, _ in by_name[key]):
                continue
            if any(i == e["index"] for i, _, _ in by_name[key]):
                continue  # two metadata of one project in one directory (Debian's cryptography)
            by_name[key].append((e["index"], dist, e["class"]))
    return order, by_name


def _module_names(dist):
    from . import distinfo

    names = dist.top_level()
    if names is None:
        names = dist.top_level_from_files()
    if not names:
        names = set(distinfo.name_variants(dist.name or ""))
    return sorted(n for n in names if n)


def _module_present(dist, location):
    """Is one of the modules the metadata claims importable from its own directory, or
    from a directory that a ``.pth`` file it installed adds (an editable install)?"""
    from . import distinfo

    places = [location] + distinfo.pth_paths(dist)
    return any(find_in(name, p) is not None for name in _module_names(dist) for p in places)


def _stale_message(first, watched):
    """The stale-metadata finding: what pip sees, and which copy Python imports."""
    other_index, other, _cls = watched[0]
    imported = None
    for name in _module_names(first):
        spec = find_in(name, other.location)
        if spec is not None and spec.origin not in (None, "namespace"):
            imported = copy_path(spec)
            break
    copy = "%s (%s %s)" % (imported, other.name, other.version or "no version") if imported \
        else "the copy of %s (%s)" % (other.name, other.version or "no version")
    if first.editable():
        return ("%s %s: an editable install (metadata %s) that Python does not use: its "
                "modules are found by a finder that comes after sys.path's, so Python imports "
                "%s" % (first.name, first.version or "", first.path, copy))
    return ("%s %s: metadata %s is what pip and importlib.metadata see, but its modules are "
            "not in %s; Python imports %s" % (
                first.name, first.version or "", first.path, first.location, copy))


def _dist_json(index, dist, cls):
    data = dist.as_json()
    data.update({"index": index, "class": cls, "location": dist.location})
    return data


def collect():
    """``check`` collector: shadowed modules, shadowed metadata, violated requirements."""
    from . import distinfo, layout
    from .check import finding

    f, entries = layout.current(read_pth=True)
    scanner = _Scanner(f, entries)
    scanner.suffixes = distinfo.module_suffixes()
    scanner.run()
    scanner.cases.sort(key=lambda case: case["module"])
    findings = []
    modules = []
    effective = {}  # canonical distribution name -> [(version, how, location)]
    for case in scanner.cases:
        wdist, sdists = case.pop("_dists")
        case["severity"] = _severity(case, f["venv"])
        modules.append(case)
        w, s = case["winner"], case["shadowed"][0]
        message = "%s: %s (%s) from %s shadows %s (%s) in %s" % (
            case["module"], w["path"], _dist_text(w), w["class"], s["path"], _dist_text(s),
            s["class"])
        if case["comparison"] == "cannot compare" and w["version"] and s["version"]:
            message += "; versions cannot be compared"
        if case["other_distribution"]:
            message += "; another project than %s" % s["distribution"]
        if _guard_copies(case):
            message += " (two deployments of the guard: the first runs, see sitewarden status)"
        elif case["severity"] == "info":
            message += " (the virtual environment's own copy: expected)"
        bad = violated(case["requirements"])
        if bad:
            message += "; violates %d requirement%s" % (len(bad), "" if len(bad) == 1 else "s")
        findings.append(finding("shadowed-module", case["severity"], message,
                                module=case["module"]))
        if wdist is not None and case["severity"] != "info":
            effective.setdefault(wdist.canonical_name, []).append(
                (wdist.version, "import", w["path"]))
    for hidden in scanner.hidden:
        findings.append(finding(
            "hidden-namespace", "medium",
            "%s: the regular package %s hides the distro's namespace portion%s %s: its "
            "modules cannot be imported" % (
                hidden["module"], hidden["winner"]["path"],
                "s" if len(hidden["hidden"]) > 1 else "",
                ", ".join(h["path"] for h in hidden["hidden"])),
            module=hidden["module"]))

    order, by_name = _distribution_view(entries)
    distributions = []
    shadowed_names = set(effective)
    for case in modules:
        for s in case["shadowed"]:
            if s["distribution"] and case["severity"] != "info":
                shadowed_names.add(distinfo.canonicalize(s["distribution"]))
    for key in order:
        copies = by_name[key]
        if len(copies) < 2:
            continue
        first_index, first, first_cls = copies[0]
        watched = [c for c in copies[1:] if c[2] in WATCHED]
        if not watched or first_cls in ("distro", "stdlib"):
            continue
        venv_own = f["venv"] and first_cls == "local"
        present = _module_present(first, first.location)
        record = {
            "name": first.name,
            "visible": _dist_json(first_index, first, first_cls),
            "shadowed": [_dist_json(i, d, c) for i, d, c in watched],
            "modules_present": present,
        }
        distributions.append(record)
        if not venv_own:
            shadowed_names.add(key)
            effective.setdefault(key, []).append((first.version, "metadata", first.location))
        if not present and not venv_own:
            findings.append(finding("stale-metadata", "low", _stale_message(first, watched),
                                    distribution=first.name))

    violations = _violations(shadowed_names, effective, order, by_name, entries)
    for v in violations:
        findings.append(finding(
            "requirement-violated", "high" if v["consumer_class"] == "distro" else "medium",
            "%s %s (%s) requires '%s', but %s %s" % (
                v["consumer"], v["consumer_version"] or "", v["consumer_class"],
                v["requirement"], v["requires"],
                "is imported as %s" % v["installed"] if "import" in v["seen_by"]
                else "is %s (its metadata)" % v["installed"]),
            consumer=v["consumer"], requires=v["requires"]))
    data = {
        "modules": modules,
        "hidden_namespaces": scanner.hidden,
        "distributions": distributions,
        "violations": violations,
    }
    return "shadowing", data, findings


def _violations(names, effective, order, by_name, entries):
    """Requirements on the shadowed distributions, by the distributions pip sees
    (the first per name) and by every distro distribution, checked against
    the version imported and the version whose metadata is seen."""
    from . import distinfo

    consumers = []
    seen = set()
    for key in order:
        copies = by_name[key]
        chosen = [copies[0]] + [c for c in copies[1:] if c[2] == "distro"]
        for index, dist, cls in chosen:
            ident = os.path.realpath(dist.path)
            if ident not in seen:
                seen.add(ident)
                consumers.append((index, dist, cls))
    out = []
    done = {}
    for _index, dist, cls in consumers:
        for text in dist.requires():
            wanted = distinfo.canonicalize(distinfo.requirement_name(text))
            if wanted not in names or wanted == dist.canonical_name:
                continue
            for version, how, location in effective.get(wanted, ()):
                status, detail = distinfo.check_requirement(text, version)
                if status != "violated":
                    continue
                key = (os.path.realpath(dist.path), text.strip(), version)
                if key in done:
                    done[key]["seen_by"].append(how)
                    continue
                done[key] = {
                    "consumer": dist.name,
                    "consumer_version": dist.version,
                    "consumer_class": cls,
                    "consumer_metadata": dist.path,
                    "requirement": text.strip(),
                    "requires": wanted,
                    "installed": version,
                    "installed_location": location,
                    "seen_by": [how],
                    "status": status,
                    "detail": detail,
                }
                out.append(done[key])
    return out
