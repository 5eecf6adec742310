"""Shadow cases found at runtime: built once a copy shadows, and their warning.

Loaded by ``shadowing`` only when an import's winning copy sits earlier on
``sys.path`` than the distro's copy (or a regular package hides the distro's
namespace portions): the exact layout (``layout``), the copies' distributions
(``distinfo`` finds them, ``distribution`` reads them) and the distro distributions'
requirements (``metadata``) decide, and
:func:`warning` words the one ``ShadowWarning``.  ``shadowscan`` (the ``check``
collector) describes copies and requirements with the same functions.
"""

import os
import sys

from .. import pathfacts
from ..facts import distinfo, distribution, metadata
from ..facts.records import (
    SHOWN,
    Copy,
    Finding,
    HiddenNamespace,
    Portion,
    Requirement,
    ShadowCase,
    finding_id,
)
from . import layout
from .specs import copy_path, portion, same_file

# ---------------------------------------------------------------- describing copies


def describe_copy(module, index, entry, spec, cls, pth=None):
    """The :class:`~.records.Copy` of ``module`` in ``entry``.  ``pth``: the
    ``.pth`` file whose path line put ``entry`` on ``sys.path``; when no metadata in
    ``entry`` claims the module, the distribution that installed that ``.pth`` owns it
    (an editable install: PEP 660 ``__editable__.*.pth``, flit, hatchling)."""
    origin = spec.origin
    dist = distinfo.owner(module, origin, entry)
    editable = False
    if dist is None and pth:
        dist = distinfo.pth_owner(pth)
        editable = dist is not None
    return Copy(index, entry, cls, copy_path(spec), origin, dist, pth, editable)


def make_case(module, winner, shadowed, consumer_dirs):
    """The one way a :class:`~.records.ShadowCase` is built (at runtime and by
    ``check``): ``winner`` and ``shadowed`` are :class:`~.records.Copy`; the
    requirements of the distributions in ``consumer_dirs`` are checked."""
    wdist, sdists = winner.dist, [c.dist for c in shadowed]
    first = shadowed[0]
    comparison = metadata.compare_versions(winner.version, first.version) \
        if winner.version and first.version else "cannot compare"
    other = bool(wdist and sdists[0] and wdist.canonical_name != sdists[0].canonical_name)
    return ShadowCase(module, winner, shadowed, comparison, other,
                      requirement_report(module, wdist, sdists, consumer_dirs))


def requirement_report(module, winner_dist, shadowed_dists, consumer_dirs):
    """Requirements of the distributions in ``consumer_dirs`` on the module's
    distribution(s), checked against the copy that is imported.

    Returns :class:`~.records.Requirement` records: ``requirement`` is the text as
    written, ``installed`` the version imported.
    """
    names = set()
    for dist in list(shadowed_dists) + [winner_dist]:
        if dist is not None and dist.canonical_name:
            names.add(dist.canonical_name)
    if not names:
        names.add(distribution.canonicalize(module.split(".")[0]))
    out = []
    for consumer, text in distinfo.requirers(names, consumer_dirs):
        if consumer.canonical_name in names:
            continue
        wanted = distribution.canonicalize(metadata.requirement_name(text))
        if winner_dist is None:
            status, detail = metadata.check_requirement(text, None)
            installed = None
            if status == "cannot compare":
                detail = "the imported copy has no metadata: its version is unknown"
        elif wanted == winner_dist.canonical_name:
            installed = winner_dist.version
            status, detail = metadata.check_requirement(text, installed)
        else:
            installed = winner_dist.version
            status, detail = metadata.check_requirement(text, None)
            if status != "not applicable" and status != "unparsable":
                status = "other distribution"
                detail = "'%s' is imported from %s %s, another distribution" % (
                    module, winner_dist.name, winner_dist.version or "(no version)")
        if status == "not applicable":
            continue
        out.append(Requirement(consumer.name, consumer.version, consumer.path, text.strip(),
                               wanted, installed, status, detail))
    return out


def violated(reqs):
    return [r for r in reqs if r.broken()]


# ---------------------------------------------------------------- messages


def _where(copy):
    cls = copy.cls
    entry = copy.entry
    if cls == "script":
        return "the current directory" if entry in ("", ".") else "the script's directory"
    if cls == "pth" and copy.pth:
        if copy.editable:
            return "an editable install whose %s adds %s to sys.path" % (copy.pth, entry)
        return "a directory added to sys.path by %s" % copy.pth
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


def removable(copy):
    """Is ``copy`` (a winning :class:`~.records.Copy`) a distribution's that
    ``sitewarden quarantine`` removes, by its RECORD: one installed into the local
    directory or the user site, or an editable install, whose ``*.dist-info`` lists its
    files?"""
    dist = copy.dist
    return bool((copy.cls in ("local", "user") or copy.editable) and copy.distribution
                and dist is not None and dist.kind == "dist-info" and dist.files())


def removal(case, mark=None):
    """The command that removes ``case``'s winning copy, the distribution that installed
    it, unattended and without starting the interpreter: ``sitewarden quarantine ID
    --python EXE`` (``ID``: ``mark``, which the CLI replaces, in ``check``; else the id
    ``check`` gives the finding, computed here); None when it is no such copy."""
    if not removable(case.winner):
        return None
    if mark is None:  # check's finding about it, as the CLI identifies it
        finding = Finding("hidden-namespace", None, "", module=case.module) if isinstance(
            case, HiddenNamespace) else Finding("shadowed-module", None, "", module=case.module)
        mark = finding_id(finding, {})[:SHOWN]
    return "sitewarden quarantine %s --python %s" % (mark, sys.executable or "python3")


def advice(case):
    """What to do, for the copy that wins."""
    w = case.winner
    cls = w.cls
    cmd = removal(case)
    if cmd:
        return ("consider removing it (%s) and installing %s in a virtual environment instead"
                % (cmd, w.distribution))
    if cls == "pythonpath":
        return "consider removing %s from PYTHONPATH" % w.entry
    if cls == "script":
        return "consider renaming or removing %s" % w.path
    if cls == "pth":
        if w.pth:
            return "consider removing the line that adds %s from %s" % (w.entry, w.pth)
        return "consider removing the .pth file that adds %s to sys.path" % w.entry
    return "consider removing %s or moving it out of sys.path" % w.path


def warning(case):
    """The ``ShadowWarning``: one paragraph naming both copies, the broken requirements
    and what to do."""
    if isinstance(case, HiddenNamespace):
        return _hidden_warning(case)
    module = case.module
    w = case.winner
    s = case.shadowed[0]
    startup = case.startup
    if startup:
        how = "was imported at startup %s from" % (
            "by %s" % startup if startup is not True
            else "(by a .pth file, sitecustomize or usercustomize)")
    else:
        how = "is imported from"
    text = "'%s' %s %s (%s, %s), which shadows the distro's copy %s (%s)" % (
        module, how, w.path, w.dist_text(), _where(w), s.path, s.dist_text())
    if w.version and s.version and case.comparison == "cannot compare":
        text += "; the versions cannot be compared (not PEP 440)"
    if w.distribution and s.distribution and case.other_distribution:
        text += "; it belongs to another project than the distro's %s" % s.distribution
    reqs = case.requirements or []
    bad = violated(reqs)
    unknown = [r for r in reqs if r.status == "cannot compare"]
    if bad:
        parts = ["%s %s requires '%s'" % (r.consumer, r.consumer_version or "", r.requirement)
                 for r in bad]
        label = w.distribution and "%s %s" % (w.distribution, w.version or "") or "this copy"
        text += "; %s violates the requirements of distro packages: %s" % (
            label.strip(), "; ".join(p.replace("  ", " ") for p in parts))
    elif reqs and not unknown:
        text += "; the requirements of the distro packages that use it still hold"
    if unknown:
        text += "; cannot compare against %s" % ", ".join(
            "%s's '%s' (%s)" % (r.consumer, r.requirement, r.detail) for r in unknown)
    text += ". Distro programs that import '%s' get this copy and may break: %s." % (
        module, advice(case))
    return text


def startup_importer(name):
    """``(file, line number)`` of the first startup line that imports ``name``, in the
    order ``site`` runs them: the ``.pth`` files' import lines (user site, then the site
    directories, each sorted), then sitecustomize and usercustomize; or None."""
    files = []
    site = sys.modules.get("site")
    user = [pathfacts.user_site()] if getattr(site, "ENABLE_USER_SITE", False) else []
    dirs = user + pathfacts.site_dirs()
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
    for path, pth in files:
        data = distribution.read_file(path)  # O_NONBLOCK: a FIFO cannot hang the process
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


def hidden(name, winner, portions):
    """A regular package ``name`` earlier on ``sys.path`` than the distro's portions
    of namespace package ``name``: their modules cannot be imported."""
    wi, wentry, wspec = winner
    f, classes = _exact_classes(wentry, *[e for _, e in portions])
    wcls, pclasses = classes[0], classes[1:]
    if wcls in ("distro", "stdlib") or (f.venv and wcls == "local") or \
            program_bundle(wentry):
        return None
    hidden = [(i, e) for (i, e), c in zip(portions, pclasses) if c == "distro"]
    if not hidden:
        return None
    subs = set()
    for _, entry in hidden:
        subs |= pathfacts.top_level_names(portion(entry, name))
    return HiddenNamespace(
        name, describe_copy(name, wi, wentry, wspec, wcls),
        [Portion(i, e, "distro", portion(e, name)) for i, e in hidden],
        sorted("%s.%s" % (name, sub) for sub in subs))


def _hidden_warning(case):
    """The warning for a regular package hiding a distro namespace package."""
    module = case.module
    w = case.winner
    subs = case.submodules or []
    shown = ", ".join("'%s'" % s for s in subs[:6]) + (", ..." if len(subs) > 6 else "")
    return ("'%s' is imported from %s (%s, %s), a regular package that hides the distro's "
            "namespace package %s: %s cannot be imported. Distro programs that import %s "
            "fail: %s." % (
                module, w.path, w.dist_text(), _where(w),
                ", ".join(h.path for h in case.hidden),
                "its modules (%s)" % shown if subs else "its modules",
                shown or "them", advice(case)))


def program_bundle(entry):
    """Is ``entry`` a zip archive that the program runs from or put on ``sys.path`` itself
    (a zipapp, ``python pip.whl/pip``, get-pip's ``pip.zip``), rather than one the user's
    configuration names (``PYTHONPATH``, a ``.pth`` path line)?  Its copies are the
    program's own: removing them is not the user's move, and the distro's programs never
    see them (they do not run with that entry), so they are not reported."""
    n = layout.path_key(entry)
    if distinfo.archive_of(n) is None:
        return False
    if n in set(layout.path_key(p) for p in layout.pythonpath_entries()):
        return False
    return n not in _pth_map()


def _pth_map():
    """``{path_key(path): .pth file}`` of the path lines of the ``.pth`` files ``site`` read
    (read only when a shadowing copy needs it)."""
    f = layout.current()[0]
    dirs = ([f.user] if f.user else []) + list(f.site_dirs or ())
    return layout.pth_entries([d for d in dirs if d])[0]


def _pth_adding(entry):
    return _pth_map().get(layout.path_key(entry))


def _exact_classes(*entries):
    f, classified = layout.current()
    return f, [layout.class_of(e, classified) for e in entries]


def build(name, winner, distro_copy):
    """The case of ``winner`` (``(index, entry, spec)``) imported instead of the distro's
    ``distro_copy``, or None when the exact layout says it is no shadowing to report."""
    wi, wentry, wspec = winner
    di, dentry, dspec = distro_copy
    if pathfacts.real(wentry) == pathfacts.real(dentry):
        return None
    if same_file(wspec.origin, dspec.origin):
        return None
    f, (wcls, dcls) = _exact_classes(wentry, dentry)
    if dcls != "distro" or wcls in ("distro", "stdlib"):
        return None
    if f.venv and wcls == "local":
        return None  # a venv's own packages shadowing the system's: what venvs are for
    if program_bundle(wentry):
        return None
    wcopy = describe_copy(name, wi, wentry, wspec, wcls,
                          pth=_pth_adding(wentry) if wcls == "pth" else None)
    scopy = describe_copy(name, di, dentry, dspec, dcls)
    consumer_dirs = [e for e in sys.path if isinstance(e, str) and pathfacts.is_candidate(e)]
    _, classes = _exact_classes(*consumer_dirs) if consumer_dirs else (None, [])
    consumer_dirs = [d for d, c in zip(consumer_dirs, classes) if c == "distro"]
    return make_case(name, wcopy, [scopy], consumer_dirs)
