"""``check``'s shadowing collector: every shadowed module (recursing into namespace
packages), every regular package hiding a distro namespace portion, every
distribution whose metadata is shadowed, every violated requirement.

Runs in the probe (guard disabled) and in the install report's child process,
never at an import: the runtime warns through ``shadowing`` and ``cases``.
"""

import os

from .. import _swallowed, pathfacts, settings
from ..facts import distinfo, distribution, metadata
from ..facts.records import (
    ID_MARK,
    Broken,
    DistCopy,
    Finding,
    HiddenNamespace,
    Portion,
    RefusedSilenceFile,
    ShadowCase,
    ShadowedMetadata,
    Shadowing,
    Violation,
)
from . import layout
from .cases import describe_copy, make_case, removal, violated
from .shadowing import WATCHED
from .specs import copy_path, find_in, is_regular, listed_among, pkgutil_style, portion, same_file


def _guard_copies(case):
    """Two deployments of sitewarden itself (``sitewarden install``'s beside the Debian
    package's): one runs, the other stays silent; ``status`` reports them."""
    return case.module == "sitewarden" and all(
        os.path.isfile(os.path.join(c.path or "", "_deployment.json"))
        for c in [case.winner] + case.shadowed)


def _severity(case, venv):
    classes = set(s.cls for s in case.shadowed)
    if classes == {"system"} or (venv and case.winner.cls == "local"):
        return "info"
    if _guard_copies(case):
        return "info"
    if violated(case.requirements) or case.other_distribution:
        return "high"
    return "medium"


class _Scanner:
    """Finds every shadow case and hidden namespace among classified entries."""

    def __init__(self, entries):
        self.entries = entries
        self.cases = []
        self.hidden = []
        self.suffixes = None
        self.names = ()
        self.listed = {}  # entry index -> the names it may provide, or None: ask find_in

    def cls(self, index):
        return self.entries[index].cls

    def usable(self, e):
        return isinstance(e.path, str) and e.duplicate_of is None

    def watched_entries(self):
        return [e for e in self.entries if e.cls in WATCHED and self.usable(e)
                and e.same_as is None]

    def run(self):
        names = set()
        for e in self.watched_entries():
            names |= pathfacts.top_level_names(e.path, self.suffixes)
        self.names = names
        for name in sorted(names):
            self.module(name)

    def may_hold(self, e, name):
        """May entry ``e`` provide the top-level module ``name``?  (Its listing says no:
        :func:`.specs.listed_among`, asked once per entry for every name.)"""
        if e.index not in self.listed:
            self.listed[e.index] = listed_among(e.path, self.names, self.suffixes)
        listed = self.listed[e.index]
        return listed is None or name in listed

    def module(self, name):
        held = [e for e in self.entries if self.usable(e) and self.may_hold(e, name)]
        if len(held) < 2:
            return  # one directory alone neither shadows nor hides: no spec to find
        copies = []
        portions = []
        for e in held:
            spec = find_in(name, e.path)
            if spec is None:
                continue
            if is_regular(spec):
                copies.append((e.index, e.path, spec))
            else:
                portions.append((e.index, e.path, portion(e.path, name)))
        if copies:
            winner = copies[0]
            shadowed = self.shadowed(winner, copies[1:])
            if shadowed:
                self.record(name, winner, shadowed)
                return
            watched_portions = [p for p in portions if self.cls(p[0]) in WATCHED]
            if watched_portions and self.cls(winner[0]) not in WATCHED:
                if pkgutil_style(winner[2]):
                    portions.insert(0, (winner[0], winner[1],
                                        os.path.dirname(winner[2].origin)))
                    self.namespace(name, portions, 1)
                else:
                    self.hidden.append(HiddenNamespace(
                        name, describe_copy(name, winner[0], winner[1], winner[2],
                                            self.cls(winner[0])),
                        [Portion(i, p, self.cls(i), d) for i, p, d in watched_portions]))
            return
        if portions:
            self.namespace(name, portions, 1)

    def shadowed(self, winner, rest):
        wcls = self.cls(winner[0])
        if wcls in ("distro", "stdlib"):
            return []
        out = []
        for copy in rest:
            cls = self.cls(copy[0])
            if cls not in WATCHED or (wcls == "system" and cls == "system"):
                continue
            if pathfacts.real(copy[1]) == pathfacts.real(winner[1]) or \
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
            subs |= pathfacts.top_level_names(p[2], self.suffixes)
        for sub in sorted(subs):
            full = name + "." + sub
            copies, subportions = [], []
            for index, entry, directory in portions:
                spec = find_in(full, directory)
                if spec is None:
                    continue
                if is_regular(spec):
                    copies.append((index, entry, spec))
                else:
                    subportions.append((index, entry, os.path.join(directory, sub)))
            if copies:
                shadowed = self.shadowed(copies[0], copies[1:])
                if shadowed:
                    self.record(full, copies[0], shadowed)
            elif subportions:
                self.namespace(full, subportions, depth + 1)

    def pth(self, index):
        source = self.entries[index].source
        return source if isinstance(source, str) and source.endswith(".pth") else None

    def record(self, name, winner, shadowed):
        wcopy = describe_copy(name, winner[0], winner[1], winner[2], self.cls(winner[0]),
                              pth=self.pth(winner[0]))
        scopies = [describe_copy(name, c[0], c[1], c[2], self.cls(c[0])) for c in shadowed]
        consumer_dirs = [e.path for e in self.entries
                         if e.cls == "distro" and self.usable(e) and e.same_as is None]
        self.cases.append(make_case(name, wcopy, scopies, consumer_dirs))


def _distribution_view(entries):
    """pip's and ``importlib.metadata``'s view: for each distribution name, its
    copies along ``sys.path``; the first one is what they see."""
    by_name = {}
    order = []
    for e in entries:
        if not isinstance(e.path, str) or e.duplicate_of is not None or \
                e.same_as is not None:
            continue
        for dist in distinfo.distributions(e.path):
            key = dist.canonical_name
            if not key:
                continue
            if key not in by_name:
                by_name[key] = []
                order.append(key)
            if any(d.identity() == dist.identity() for _, d, _ in by_name[key]):
                continue
            if any(i == e.index for i, _, _ in by_name[key]):
                continue  # two metadata of one project in one directory (Debian's cryptography)
            by_name[key].append((e.index, dist, e.cls))
    return order, by_name


def _module_names(dist):
    names = dist.top_level()
    if names is None:
        names = dist.top_level_from_files()
    if not names:
        names = set(distribution.name_variants(dist.name or ""))
    return sorted(n for n in names if n)


def _module_present(dist, location):
    """Is one of the modules the metadata claims importable from its own directory, or
    from a directory that a ``.pth`` file it installed adds (an editable install)?"""
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


def collect():
    """``check`` collector: shadowed modules, shadowed metadata, violated requirements."""
    f, entries = layout.current(read_pth=True)
    scanner = _Scanner(entries)
    scanner.suffixes = pathfacts.module_suffixes()
    scanner.run()
    scanner.cases.sort(key=lambda case: case.module)
    effective = {}  # canonical distribution name -> [(version, how, location)]
    breaks = [[] for _case in scanner.cases]
    findings = [_module_finding(case, f.venv, effective, broken)
                for case, broken in zip(scanner.cases, breaks)]
    findings += [_hidden_finding(hidden) for hidden in scanner.hidden]
    order, by_name = _distribution_view(entries)
    shadowed_names = set(effective)
    for case in scanner.cases:
        for s in case.shadowed:
            if s.distribution and case.severity != "info":
                shadowed_names.add(distribution.canonicalize(s.distribution))
    distributions = _shadowed_metadata(order, by_name, f.venv, shadowed_names, effective,
                                       findings)
    violations = _violations(shadowed_names, effective, order, by_name)
    loose = _attach(scanner.cases, findings, breaks, violations)
    findings += [_violation_finding(v) for v in loose]
    data = Shadowing.make(modules=scanner.cases, hidden_namespaces=scanner.hidden,
                          distributions=distributions, violations=violations)
    _acknowledge(data, findings, entries)
    for finding, broken in zip(findings, breaks):  # the JSON form of each list
        finding.details.update(breaks=[b.as_json() for b in broken])
    return "shadowing", data, findings


def _acknowledge(data, findings, entries):
    """Mark the shadows acknowledged by name (``SITEWARDEN_SILENCE=shadow:NAME``, the
    silence files): no warning is shown for them, so they are listed as acknowledged,
    severity ``info`` (what it would be otherwise: ``unacknowledged_severity``), and
    are no problem for the exit status.  The requirements a shadow breaks are in its one
    finding (:func:`_attach`): acknowledged with it.  A deployment's silence file that
    a package put there, or others may write (``settings.refusal``), acknowledges
    nothing, as at run time: listed in ``refused_silence_files``, and a shadow it names
    keeps its severity, its finding saying why (``acknowledgement_refused``)."""
    acks = settings.acknowledgements(pathfacts.deployment_dirs(
        [e.path for e in entries if e.duplicate_of is None]))
    if not acks:
        return
    refused = {}
    for _name, where in acks:
        if where != "SITEWARDEN_SILENCE" and where not in refused:
            refused[where] = _refusal(where)
    held = [(name, where) for name, where in acks if not refused.get(where)]
    denied = [(name, where) for name, where in acks if refused.get(where)]
    if denied:
        data.refused_silence_files = [
            RefusedSilenceFile.make(path=path, state=why[0], reason=why[1],
                                    names=[n for n, w in denied if w == path])
            for path, why in refused.items() if why]

    def source(module, pairs):
        for name, where in pairs:
            if settings.matches(module, (name,)):
                return name, where
        return None

    for item in data.modules + data.hidden_namespaces:
        found = source(item.module, held)
        if found is not None:
            item.acknowledged = True
            item.acknowledged_by = found[1]
            if isinstance(item, ShadowCase) and item.severity is not None:
                item.unacknowledged_severity = item.severity
                item.severity = "info"
    for f in findings:
        if f.kind not in ("shadowed-module", "hidden-namespace"):
            continue
        module = f.details.get("module") or ""
        found = source(module, held)
        if found is None:
            found = source(module, denied)
            if found is not None:
                _refused_here(f, found, refused[found[1]])
            continue
        f.details.update(acknowledged=True, acknowledged_by=found[1],
                         unacknowledged_severity=f.severity)
        f.severity = "info"
        breaks = f.details.get("breaks") or ()
        f.message = f.message.split("; remove the local copy: ")[0] + (
            "; acknowledged (shadow:%s in %s): no warning is shown%s" % (found + (
                ", and the requirement%s it breaks %s acknowledged with it" % (
                    ("", "is") if len(breaks) == 1 else ("s", "are"))
                if breaks else "",)))


def _refusal(path):
    """``settings.refusal`` of the silence file ``path``, as the runtime judges it (a
    failure to judge it refuses it, as there)."""
    try:
        return settings.refusal(path, distinfo.lister)
    except Exception:
        _swallowed("whether a package put %s there (taken as one did)" % path)
        return settings.PLACED_BY_PACKAGE, "it could not be told"


def _refused_here(f, found, why):
    """Say in ``f`` (its severity kept) that ``shadow:NAME`` in ``found``'s file
    acknowledges nothing, and why, ahead of the fix."""
    name, path = found
    f.details["acknowledgement_refused"] = path
    head, sep, fix = f.message.partition("; remove the local copy: ")
    f.message = "%s; NOT acknowledged: shadow:%s in %s acknowledges nothing: %s%s%s" % (
        head, name, path, settings.refusal_text(why[0], why[1], path), sep, fix)


def _module_finding(case, venv, effective, breaks):
    """Set ``case``'s severity, note the version it makes imported in ``effective``,
    and return its ``shadowed-module`` finding: the one finding of the shadow, with the
    requirements it breaks (``breaks``, a list of :class:`.records.Broken`, completed by
    :func:`_attach`, in its JSON form once collected) and the command that removes the
    local copy (``command``: :func:`.cases.removal`), or None."""
    case.severity = _severity(case, venv)
    w = case.winner
    breaks.extend(Broken.of(r, "distro") for r in violated(case.requirements))
    if w.dist is not None and case.severity != "info":
        effective.setdefault(w.dist.canonical_name, []).append(
            (w.dist.version, "import", w.path))
    command = removal(case, ID_MARK) if case.severity != "info" else None
    return Finding("shadowed-module", case.severity, _message(case, breaks, command),
                   module=case.module, breaks=breaks, command=command)


def _requirements(n):
    return "a requirement" if n == 1 else "%d requirements" % n


def _message(case, breaks, command):
    """The shadow's finding in words: both copies, what it breaks, the fix."""
    w, s = case.winner, case.shadowed[0]
    message = "%s: %s (%s) from %s shadows %s (%s) in %s" % (
        case.module, w.path, w.dist_text(), w.cls, s.path, s.dist_text(), s.cls)
    if case.comparison == "cannot compare" and w.version and s.version:
        message += "; versions cannot be compared"
    if case.other_distribution:
        message += "; another project than %s" % s.distribution
    if _guard_copies(case):
        message += " (two deployments of the guard: the first runs, see sitewarden status)"
    elif case.severity == "info" and not case.acknowledged:
        message += " (the virtual environment's own copy: expected)"
    if breaks:
        message += "; it breaks %s: %s" % (_requirements(len(breaks)),
                                           "; ".join(b.text() for b in breaks))
    if command:
        message += "; remove the local copy: %s" % command
    return message


def _attach(cases, findings, breaks, violations):
    """Put each violated requirement that a shadow causes (the version imported is its
    winning copy's) into that shadow's finding (``breaks``: one list per case; its
    severity the higher of the two): one cause, one finding.  The violations no shadow
    causes (seen in metadata only), to be findings of their own."""
    by_copy = {}
    for case, f, broken in zip(cases, findings, breaks):  # the shadows' findings first
        w = case.winner
        if w.dist is not None and case.severity != "info":
            by_copy.setdefault((w.dist.canonical_name, w.path), (case, f, broken))
    loose = []
    for v in violations:
        found = by_copy.get((v.requires, v.installed_location)) \
            if "import" in v.seen_by else None
        if found is None:
            loose.append(v)
            continue
        case, f, broken = found
        if any(b.consumer == v.consumer and b.requirement == v.requirement for b in broken):
            continue
        broken.append(Broken.of(v, v.consumer_class))
        severity = _violation_severity(v)
        if SEVERITIES.index(severity) > SEVERITIES.index(f.severity):
            f.severity = case.severity = severity
        f.message = _message(case, broken, f.details.get("command"))
    return loose


#: Severities, lowest first.
SEVERITIES = ("info", "low", "medium", "high")


def _hidden_finding(hidden):
    command = removal(hidden, ID_MARK)
    return Finding(
        "hidden-namespace", "medium",
        "%s: the regular package %s hides the distro's namespace portion%s %s: its "
        "modules cannot be imported%s" % (
            hidden.module, hidden.winner.path, "s" if len(hidden.hidden) > 1 else "",
            ", ".join(h.path for h in hidden.hidden),
            "; remove the local copy: %s" % command if command else ""),
        module=hidden.module, command=command)


def _shadowed_metadata(order, by_name, venv, shadowed_names, effective, findings):
    """The distributions whose metadata hides a watched copy's (``distributions`` of
    the section); adds to ``shadowed_names``, ``effective`` and ``findings``."""
    distributions = []
    for key in order:
        copies = by_name[key]
        if len(copies) < 2:
            continue
        first_index, first, first_cls = copies[0]
        watched = [c for c in copies[1:] if c[2] in WATCHED]
        if not watched or first_cls in ("distro", "stdlib"):
            continue
        venv_own = venv and first_cls == "local"
        present = _module_present(first, first.location)
        distributions.append(ShadowedMetadata(
            first.name, DistCopy(first_index, first, first_cls),
            [DistCopy(i, d, c) for i, d, c in watched], present))
        if not venv_own:
            shadowed_names.add(key)
            effective.setdefault(key, []).append((first.version, "metadata", first.location))
        if not present and not venv_own:
            findings.append(Finding("stale-metadata", "low", _stale_message(first, watched),
                                    distribution=first.name))
    return distributions


def _violation_severity(v):
    return "high" if v.consumer_class == "distro" else "medium"


def _violation_finding(v):
    return Finding(
        "requirement-violated", _violation_severity(v),
        "%s (%s) requires '%s', but %s %s" % (
            v.consumer_text(), v.consumer_class, v.requirement, v.requires,
            "is imported as %s" % v.installed if "import" in v.seen_by
            else "is %s (its metadata)" % v.installed),
        consumer=v.consumer, requires=v.requires)


def _violations(names, effective, order, by_name):
    """Requirements on the shadowed distributions, by the distributions pip sees
    (the first per name) and by every distro distribution, checked against
    the version imported and the version whose metadata is seen."""
    consumers = []
    seen = set()
    for key in order:
        copies = by_name[key]
        chosen = [copies[0]] + [c for c in copies[1:] if c[2] == "distro"]
        for index, dist, cls in chosen:
            ident = dist.identity()
            if ident not in seen:
                seen.add(ident)
                consumers.append((index, dist, cls))
    out = []
    done = {}
    for _index, dist, cls in consumers:
        for text in dist.requires():
            wanted = distribution.canonicalize(metadata.requirement_name(text))
            if wanted not in names or wanted == dist.canonical_name:
                continue
            for version, how, location in effective.get(wanted, ()):
                status, detail = metadata.check_requirement(text, version)
                if status != "violated":
                    continue
                key = (dist.identity(), text.strip(), version)
                if key in done:
                    done[key].seen_by.append(how)
                    continue
                done[key] = Violation(dist, cls, text.strip(), wanted, version, location, how,
                                      status, detail)
                out.append(done[key])
    return out
