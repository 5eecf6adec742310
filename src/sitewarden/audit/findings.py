"""What ``check`` finds in the startup inventory (:mod:`.inventory`): each finding of the
``startup`` section, its severity and its fix, from files already read, owned and analysed.

Nothing here reads a startup file again or runs one.  Module level: ``os``, ``sys`` and
sitewarden's modules.
"""

import os
import sys

from ..facts import private_cache
from ..facts.reader import READ_LIMIT
from ..facts.records import ID_MARK, Finding
from . import analysis, capabilities, line_checks, proof_checks, provenance, templates


def _short(text, n=80):
    return text if len(text) <= n else text[:n - 3] + "..."


def quarantine():
    """``sitewarden quarantine ID --python EXE`` (the CLI's ``cli/quarantine.py``): moves a
    startup file, the modules only it runs and the distribution that installed it into a
    root-only quarantine, without starting this interpreter (``--restore`` puts them
    back).  The id is :data:`.records.ID_MARK`, put in by the CLI, which computes it."""
    return "sitewarden quarantine %s --python %s" % (ID_MARK, _executable())


def _executable():
    return sys.executable or "python3"


def _apt_reinstall(package, conffile=False):
    """The Debian package's own files again, from apt's archive (its cache first), never
    asking: a conffile the quarantine took is missing, which ``confmiss`` puts back."""
    return "apt-get install --reinstall -y %s%s" % (
        "-o Dpkg::Options::=--force-confmiss " if conffile else "", package)


def _removal(o, conffile=False):
    """The command that takes a startup file of owner ``o`` out of every start of this
    interpreter, then puts its owner's own version back: a Debian package's from apt's
    archive; a distribution's goes whole into the quarantine (its files per its RECORD),
    nothing to put back; sitewarden's deployment is written again (``install`` starts
    nothing of the target)."""
    if o.kind == "sitewarden":
        return "sitewarden install --python %s" % _executable()
    if o.kind == "dpkg":
        return "%s && %s" % (quarantine(), _apt_reinstall(o.package, conffile))
    return quarantine()


def _fix(f):
    command = _removal(f.owner)
    if f.owner.kind == "dpkg":
        return ("it belongs to the Debian package %s: take it out of every start and "
                "reinstall the package (%s)" % (f.owner.package, command)), command
    if f.owner.kind == "distribution":
        return ("quarantine it with %s, which installed it (%s)" % (
            f.owner.distribution, command)), command
    if f.owner.kind == "sitewarden":
        return "deploy sitewarden again (%s)" % command, command
    return ("quarantine it (%s: no package installed it) or correct the line" % command,
            command)


def owner_json(o):
    """A finding's ``owner`` (:meth:`.records.Owner.finding_json`)."""
    return o.finding_json()


def _owner_words(owner):
    if owner.kind == "dpkg":
        return "the Debian package %s" % owner.package
    if owner.kind == "sitewarden":
        return "sitewarden's deployment"
    return "the distribution %s" % owner.text()


def _modified(f, runs):
    """The finding about a startup file whose content is not what its owner recorded
    (``verified`` false), or None (a changed conffile that runs no code)."""
    o = f.owner
    where = dict(file=f.path, owner=owner_json(o), expected=o.expected, actual=o.actual)
    holds = ": every start of this interpreter runs what it holds now" if runs else ""
    if o.kind == "dpkg":
        real = (" (%s)" % f.realpath) if f.realpath != f.path else ""
        if o.record == "conffile":
            if not runs:
                return None
            command = _removal(o, conffile=True)
            return Finding(
                "startup-file-modified", "medium",
                "%s%s, a configuration file of the Debian package %s, was changed by the "
                "administrator (%s): every start of this interpreter runs it as it is now; "
                "review the change, or take it out of every start and restore the "
                "package's version (%s)" % (f.path, real, o.package, o.mismatch, command),
                command=command, conffile=True, **where)
        command = _removal(o)
        return Finding(
            "startup-file-modified", "high",
            "%s%s is not what the Debian package %s installed (%s)%s: take it out of every "
            "start and reinstall the package (%s), and find out who changed it" % (
                f.path, real, o.package, o.mismatch, holds, command),
            command=command, conffile=False, **where)
    if o.kind == "sitewarden":
        command = _removal(o)
        return Finding(
            "startup-file-modified", "high",
            "%s is not what sitewarden deployed (%s)%s: deploy it again (%s) and find out "
            "who changed it" % (f.path, o.mismatch, holds, command),
            command=command, conffile=False, **where)
    command = _removal(o)
    return Finding(
        "startup-file-modified", "high",
        "%s is not what %s installed (%s)%s: quarantine it with %s (%s), and find out who "
        "changed it" % (f.path, o.text(), o.mismatch, holds, o.distribution, command),
        command=command, conffile=False, **where)


def _failure(f, line, pep829):
    if f.kind in ("sitecustomize", "usercustomize"):
        said = "Error in %s; set PYTHONVERBOSE for traceback: %s" % (f.kind, f.error)
        where = dict(file=f.path, line=None, text=None, error=f.error)
    elif line.kind == "entry-point":
        said = ("Invalid entry point syntax in %s: %r" % (f.path, line.text)
                if line.error.startswith("ValueError") else
                "Error resolving entry point %s from %s: %s" % (line.text, f.path, line.error))
        where = dict(file=f.path, line=line.number, text=line.text, error=line.error)
    else:
        said = ("Error in import line from %s: %s: %s" % (f.path, _short(line.text), line.error)
                if pep829 else "Error processing line %d of %s: %s" % (
                    line.number, f.path, line.error))
        where = dict(file=f.path, line=line.number, text=line.text, error=line.error)
    rest = "" if pep829 or f.kind != "pth" else " (and ignores the rest of the file)"
    fix, command = _fix(f)
    return Finding("startup-line-fails", "high",
                   "%s: every start of this interpreter prints this error with a traceback%s; "
                   "%s" % (said, rest, fix), command=command, **where)


#: ``startup-file-special``: the severity and what a start does, by ``file_type``.
_SPECIAL = {
    "fifo": ("high", "every start of this interpreter waits at it until a process writes to "
                     "it (what it writes runs as the file's lines), or forever"),
    "character device": ("high", "every start of this interpreter reads the device as the "
                                 "file: one without end (/dev/zero, /dev/urandom) makes it hang "
                                 "or fail, a terminal makes it wait for input"),
    "block device": ("high", "every start of this interpreter reads the whole device"),
    "socket": ("info", "site cannot open it and skips it"),
    "pseudo file": ("high", "its content is made at each read (/proc, /sys: "
                            "/proc/self/environ is each process's environment), and every "
                            "start of this interpreter runs the lines its own process reads "
                            "there that start with 'import '"),
    "directory": ("info", "site cannot open it and skips it"),
    "symlink loop": ("info", "site cannot open it and skips it"),
    "broken symlink": ("info", "site cannot open it and skips it, until its target exists"),
    "unreadable": ("medium", "check cannot read it: a start that cannot either skips it, a "
                             "start by a user who can (root) runs what it holds, unjudged")}


def _file_finding(f):
    """The finding about a startup file not read as lines, or None: a FIFO, socket or
    device, a file ``site`` cannot decode, one over :data:`READ_LIMIT`."""
    if f.file_type:
        severity, does = _SPECIAL[f.file_type]
        try:
            if f.file_type == "character device" and \
                    os.stat(f.path).st_rdev == os.stat(os.devnull).st_rdev:
                severity, does = "info", "/dev/null: site reads it as an empty file, nothing runs"
        except (OSError, ValueError):
            pass
        return Finding("startup-file-special", severity, "%s is a %s (check shows none of its "
                       "lines): %s" % (f.path, f.file_type, does), file=f.path,
                       file_type=f.file_type)
    if f.decode_error and (f.error or f.kind == "start"):
        fix, command = _fix(f)
        return Finding("startup-file-undecodable", "high" if f.error else "medium",
                       "%s cannot be decoded as site reads it (%s): %s; %s" % (
                           f.path, f.decode_error, "every start of this interpreter fails "
                           "(Fatal Python error: Failed to import the site module)" if f.error
                           else "site skips it at every start: its entry points never run, "
                           "it turns off no .pth import lines", fix),
                       file=f.path, error=f.decode_error, command=command)
    if f.size is not None:
        return Finding("startup-file-too-large", "medium",
                       "%s is %d bytes, more than check reads (%d): its lines are neither "
                       "listed nor judged, and every start of this interpreter processes it "
                       "whole: find out what it holds" % (f.path, f.size, READ_LIMIT),
                       file=f.path, size=f.size)
    return None


def _dangerous_fix(f, names):
    """``(command, words)``: how to be rid of dangerous startup code, by its owner, never
    starting this interpreter (:func:`_removal`); the credentials advice only where the
    code reads credentials (``names``)."""
    o = f.owner
    rotate = (" (rotate the credentials this user could read)" if "reads-credentials" in names
              else "")
    command = _removal(o)
    if o.kind == "distribution":
        return command, "quarantine it with %s (%s: takes them out of every start without " \
            "starting this interpreter; --restore puts them back); then find out what it " \
            "did%s" % (o.distribution, command, rotate)
    if o.kind == "dpkg":
        if o.verified:  # what the package ships: reinstalling it brings it back
            return command.partition(" && ")[0], "take it out of every start (%s), then " \
                "remove %s (apt-get remove %s) or acknowledge it; find out what it did%s" % (
                    command.partition(" && ")[0], o.package, o.package, rotate)
        return command, "no Debian package ships such code: take it out of every start and " \
            "reinstall %s (%s), and find out who changed it%s" % (o.package, command, rotate)
    if o.kind == "sitewarden":
        return command, "sitewarden ships no such code: deploy it again (%s) and find out " \
            "who changed it" % command
    return command, "quarantine it (%s: no package installed it) and find out who put it " \
        "there%s" % (command, rotate)


def _said(reasons):
    """The prover's reasons as ``FILE:LINE: what``, the high ones only when there are some."""
    high = [r for r in reasons if r[0] == "high"]
    return ["%s: %s" % (where, text) for _s, where, text in (high or reasons)]


def _dangerous(f, unproven=()):
    """``dangerous-startup-code``: code a start runs (the file's lines, and the modules
    they run) that starts processes, uses the network, reads credentials or executes what
    it decodes (:mod:`.capabilities`), whoever owns it, verified or not (a RECORD proves
    "unchanged since installed", never "benign"); excused only by a known template whose
    content is exactly its own and written by its author (``f.template``, set only then);
    or None."""
    places = [p for p in _places(f) if capabilities.dangerous(p[2])]
    if not places:
        return None
    names, shown = [], []
    for _number, _text, found in places:
        names.extend(n for n, _e in found if n not in names)
        shown.extend(e for n, ev in found if n in capabilities.DANGEROUS for e in ev
                     if e not in shown)
    names = [n for n in capabilities.NAMES if n in names]
    number, text = places[0][:2]
    where = "(line %d: %s)" % (number, _short(text)) if number else "(the whole module)"
    command, fix = _dangerous_fix(f, names)
    owner = "%s, %s" % (f.owner.text(), f.owner.checked()) if f.owner.kind else "no owner"
    details = dict(file=f.path, lines=[p[0] for p in places if p[0]], capabilities=names,
                   evidence=capabilities.evidence(
                       tuple(p for place in places for p in place[2])),
                   owner=owner_json(f.owner), command=command)
    if unproven:
        details.update(unproven=list(unproven))
    if f.lookalike:
        details["looks_like"] = f.lookalike
    return Finding(
        "dangerous-startup-code", "high",
        "%s (%s) runs code at every start of this interpreter that %s %s: %s; startup files "
        "are where supply-chain payloads run (ATT&CK T1546.018): %s" % (
            f.path, owner, ", ".join(n for n in names if n in capabilities.DANGEROUS),
            where, "; ".join(_short(e, 60) for e in shown[:6]) + (
                "; ..." if len(shown) > 6 else ""), fix), **details)


def _places(f):
    """``[(line number, text, what it does)]`` of ``f``'s code, less what is excused: a
    known template's own files (``f.template``: its lines too) and modules that are a
    known tool's pinned content (:func:`.provenance.excused`).  What runs beyond them is
    judged as any code is."""
    if f.kind in ("sitecustomize", "usercustomize"):
        return [(None, None, capabilities.from_evidence(f.evidence))]
    excused, own = provenance.excused(f), f.template in templates.EXACT
    if not excused and not own:
        return [(x.number, x.text, capabilities.from_evidence(x.evidence))
                for x in f.executable()]
    return [(x.number, x.text, analysis._merged(
        () if own else analysis.LINE_FOUND.get(x.text, ()),
        *(analysis.FOUND.get(m, ()) for m in x.module_files if m not in excused)))
        for x in f.executable()]


def _module_modified(f, path, o):
    """``startup-module-modified``: a module file ``f``'s lines run that is not what its
    owner ``o`` recorded (its ``.md5sums`` line, its RECORD's hash, sitewarden's deployment
    record): high, with the fix (``f`` out of every start, and the module's owner's own
    version back: :func:`_removal`)."""
    where = dict(file=f.path, path=path, expected=o.expected, actual=o.actual,
                 owner=owner_json(o))
    if o.kind == "dpkg":  # both packages' files again when the startup file is another's
        packages = o.package
        if f.owner.kind == "dpkg" and f.owner.package != o.package:
            packages += " " + f.owner.package
        command = "%s && %s" % (quarantine(), _apt_reinstall(packages))
    else:
        command = _removal(o) if o.kind == "sitewarden" else quarantine()
    return Finding(
        "startup-module-modified", "high",
        "%s, a module that %s runs at every start of this interpreter, is not what %s "
        "installed (%s): every start runs what it holds now; take them out of every start "
        "(%s) and find out who changed it" % (path, f.path, _owner_words(o), o.mismatch,
                                              command),
        command=command, **where)


def _code_findings(f):
    """What ``f``'s code is: dangerous, modified (the file, or a module it runs), unowned
    (medium, a template's look-alike too), or a distribution's (info)."""
    out = []
    code = [x for x in f.executable() if not x.error]  # a failing line is reported as such
    first = code[0] if code else None
    what = ("(line %d: %s)" % (first.number, _short(first.text)) if first
            else "(the whole module)")
    runs = code or (f.kind in ("sitecustomize", "usercustomize") and not f.error)
    found = _proof_reasons(f)
    danger = _dangerous(f, _said(found[0]))
    unproven = _unproven(f, danger, found)
    if danger or unproven:
        out.append(danger or unproven)
    out.extend(_module_modified(f, path, o) for path, o in sorted(f.modules.items())
               if o.claimed() and o.verified is False)
    if f.owner.claimed() and f.owner.verified is False:
        found = _modified(f, runs)
        return out + ([found] if found else [])
    if danger or unproven or not runs or f.template or _trusted(f.owner):
        return out  # each says more than unowned- or distribution-startup-code
    lines = [x.number for x in code]
    if f.owner.kind is None or not f.owner.verified:
        out.append(_unowned(f, what, lines, found))
    elif f.owner.kind == "distribution":
        out.append(Finding(
            "distribution-startup-code", "info",
            "%s, installed by %s, runs code at every start of this interpreter %s" % (
                f.path, f.owner.text(), what),
            file=f.path, lines=lines, owner=owner_json(f.owner)))
    return out


def _trusted(owner):
    """A verified Debian package's or sitewarden's deployment: trusted as the standard
    library is (the distribution is the authority the interpreter comes from)."""
    return owner.kind in ("dpkg", "sitewarden") and owner.verified is True


def _proof_reasons(f):
    """``(reasons, what the code changes)``: :func:`.proof_checks.reasons` and
    :func:`.proof_checks.effects` of ``f``'s code, trusted files set aside."""
    excused = provenance.excused(f)
    own = f.template in templates.EXACT or _trusted(f.owner)
    return (proof_checks.reasons(f, analysis.PROOFS, excused, own),
            proof_checks.effects(f, analysis.PROOFS, excused))


def _unproven(f, danger, found):
    """``unproven-startup-code``: what ``f``'s code (its lines, every module they run, a
    ``sitecustomize`` whole) does that the prover could not show harmless
    (:mod:`.prover`): high for a callee it cannot resolve, code run from data, an
    import or a path change it cannot evaluate, code it cannot read; else medium, with
    what the code changes.  Set aside: trusted files (:func:`_trusted`), a template's own
    files and pinned content.  One cause, one finding: with ``danger`` (what the code is
    known to do) the reasons join that finding; a medium one of code nobody's verified
    record vouches for joins ``unowned-startup-code``; None then, and when all is proved.
    ``found``: :func:`_proof_reasons`."""
    found, changes = found
    if not found:
        return None
    high = [r for r in found if r[0] == "high"]
    said = _said(found)
    if danger is not None:
        return None  # its reasons are the danger's ``unproven``
    if not high and (f.owner.kind is None or not f.owner.verified) and not _trusted(f.owner):
        return None  # said by unowned-startup-code, with these reasons
    severity = "high" if high else "medium"
    owner = "%s, %s" % (f.owner.text(), f.owner.checked()) if f.owner.kind else "no owner"
    if severity == "high":
        command, fix = _dangerous_fix(f, [])
    else:
        command, fix = None, "find out what it changes and whether it should run; if it " \
            "should, acknowledge it as it is (sitewarden acknowledge ID)"
    return Finding(
        "unproven-startup-code", severity,
        "%s (%s) runs code at every start of this interpreter that the audit cannot prove "
        "harmless: %s%s; %s" % (
            f.path, owner, "; ".join(_short(x, 120) for x in said[:4]) + (
                "; ..." if len(said) > 4 else ""),
            " (it changes: %s)" % ", ".join(changes[:4]) if changes and not high else "",
            fix),
        file=f.path, unproven=said, changes=changes or None, owner=owner_json(f.owner),
        command=command, **({"looks_like": f.lookalike} if f.lookalike else {}))


def _unowned(f, what, lines, found=((), ())):
    """``unowned-startup-code``, medium: a template's look-alike too (never lower); with
    what the prover could not show harmless in it (``found``: :func:`_proof_reasons`)."""
    reasons, changes = found
    unproven = ["%s: %s" % (where, text) for _s, where, text in reasons]
    claim = f.owner.claimed()
    looks = ("; it reads as the %s template, but what it runs or who wrote it is not the "
             "template's: judged as any code is" % f.lookalike if f.lookalike else "")
    fix = (" (%s)" % _fix(f)[0]) if f.owner.kind == "sitewarden" else (
        "; %s takes it out of every start, and --restore puts it back" % quarantine())
    if unproven:
        looks += "; the audit cannot prove it harmless: %s" % "; ".join(
            _short(x, 120) for x in unproven[:3])
    return Finding(
        "unowned-startup-code", "medium",
        "%s runs code at every start of this interpreter %s and %s%s: find out what "
        "it does and remove it if nobody should run it%s (startup files are where "
        "supply-chain payloads live: ATT&CK T1546.018)" % (
            f.path, what, "is claimed by %s, not verified (%s): judged as if no "
            "package installed it" % (_owner_words(f.owner), f.owner.mismatch)
            if claim else "no package installed it (no Debian package, no "
            "distribution's RECORD lists it)", looks, fix),
        file=f.path, lines=lines, command=_removal(f.owner) if f.owner.kind == "sitewarden"
        else quarantine(),
        **({"unproven": unproven, "changes": changes or None} if unproven else {}),
        **({"owner": owner_json(f.owner)} if claim else {}),
        **({"looks_like": f.lookalike} if f.lookalike else {}))


def _line_findings(f, pep829):
    """A file's failures and special forms, and its path lines' missing directories."""
    out = []
    if f.error and f.kind in ("sitecustomize", "usercustomize"):
        out.append(_failure(f, None, pep829))
    found = _file_finding(f)
    if found:
        out.append(found)
    for line in f.lines:
        if line.error:
            out.append(_failure(f, line, pep829))
        if line.kind == "path" and line.exists is False and line.runs is not False:
            out.append(Finding(
                "missing-pth-directory", "info",
                "%s line %d names %s, which does not exist%s" % (
                    f.path, line.number, line.directory,
                    ": Python 3.15+ prints an error about it at every start" if pep829
                    else ""),
                file=f.path, line=line.number, directory=line.directory))
    return out


def findings(files, directories, euid, pep829, lines=None):
    out = []
    proof_checks.LISTED_DIRS.clear()
    proof_checks.LISTED_DIRS.update(os.path.normcase(os.path.abspath(f.site_dir))
                                    for f in files if f.site_dir)
    analysis.annotate(files, private_cache.DIRECTORY, lines)
    provenance.vouch(files, private_cache.DIRECTORY)
    if line_checks.STATIC is not None:
        analysis.not_applied(files)
    for f in files:
        out.extend(_line_findings(f, pep829))
        out.extend(_code_findings(f))
    out.extend(analysis.unread_findings(files, euid))
    out.extend(_writable_files(files, euid))
    for d in directories:
        w = d.writers
        if not w:
            continue
        entry = "sys.path directory %s (%s)" % (d.path, _source_text(d))
        out.append(Finding("writable-path-entry", line_checks.severity_of(w, euid),
                           line_checks.writers_text(entry, w, euid), entry=d.path,
                           source=d.source, scope=w.scope, via=w.via, how=w.how,
                           mode="%04o" % w.mode))
    return out


def _writable_files(files, euid):
    """``writable-startup-file`` and ``writable-startup-module``: a startup file, or a
    module a startup line imports, that others than this interpreter's user and root may
    change (the file itself; its directory is ``writable-path-entry``'s)."""
    out, seen = [], set()
    for f in files:
        if f.file_type:
            continue
        places = [("writable-startup-file", f.realpath or f.path, f, None)]
        places += [("writable-startup-module", m, f, x) for x in f.executable()
                   for m in x.module_files]
        for kind, path, where, line in places:
            if path in seen:
                continue
            seen.add(path)
            w = line_checks.file_writers(path, euid)
            if w is None:
                continue
            severity = line_checks.severity_of(w, euid)
            text = _writable_text(kind, path, where, line, w, euid)
            details = dict(file=where.path, path=path, scope=w.scope, mode="%04o" % w.mode,
                           uid=w.uid, gid=w.gid)
            if line is None:
                if path == where.path:  # ``path``: only where a link leads elsewhere
                    del details["path"]
                out.append(Finding("writable-startup-file", severity, text, **details))
            else:
                out.append(Finding("writable-startup-module", severity, text,
                                   line=line.number, **details))
    return out


def _writable_text(kind, path, f, line, w, euid):
    what = ("startup file %s" % path if kind == "writable-startup-file" else
            "module %s, imported by %s line %d" % (path, f.path, line.number))
    how = ("group-writable" if w.scope == "group" else "world-writable"
           if w.mode & 0o002 else "owned by user %d" % w.uid)
    fix = ("chown %d %s" % (euid if euid is not None else 0, path)
           if w.scope == "others" and not w.mode & 0o002 else "chmod go-w %s" % path)
    return ("%s may change %s: it is %s (mode %04o): they choose what every start of "
            "this interpreter%s runs; make it writable by its owner only (%s)" % (
                w.who(), what, how, w.mode, ", run as root," if euid == 0 else "", fix))


def _source_text(d):
    source = d.source
    if source in (None, "site"):
        return "a site directory" if source else "the standard library"
    if source == "PYTHONPATH":
        return "from PYTHONPATH"
    return "from %s" % source
