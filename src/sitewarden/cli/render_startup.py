"""Human output of ``check``'s ``startup`` section: what a start runs, who installed it.

One block per startup file, in the order ``site`` reads them: the file (and where its
links lead), its owner and template, then its lines that do something (path lines with
their directory, import lines and entry points, with the error a start prints).  The
findings themselves are rendered with the others, by ``render``.
"""

from __future__ import annotations

import os

from ..facts.startup_records import StartupSection

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

    from ..facts.records import CheckReport
    from ..facts.startup_records import Owner, StartupLine, Writers

WIDTH = 72
#: Where what a startup line does, or the error it raises, is shown: under its text.
INDENT = " " * 6

#: What a text ``check`` shows may hold that would forge a line or that a terminal would
#: act on (line ends, escape sequences, C1 controls, Unicode line breaks and direction
#: overrides), shown escaped; tabs kept.  :data:`_LINES`: the same, line feeds kept.
_ESCAPES = {c: "\\x%02x" % c for c in [*range(0x20), 0x7f, *range(0x80, 0xa0)] if c != 0x09}
_ESCAPES.update({0x0a: "\\n", 0x0d: "\\r"})
_ESCAPES.update({c: "\\u%04x" % c for c in (0x200e, 0x200f, 0x2028, 0x2029, *range(0x202a, 0x202f),
                                          *range(0x2066, 0x206a))})
_LINES = dict(_ESCAPES)
del _LINES[0x0a]


def printable(text: str, lines: bool = False) -> str:
    """``text`` (a path, a name, a line of a file, a message quoting them) as the text
    output shows it: what could forge a line or act on a terminal escaped (``\\n``,
    ``\\x1b``, ``\\u2028``), bytes that are not UTF-8 (a name's ``surrogateescape``) as
    ``\\xff``; tabs kept, and line feeds where ``lines`` (a text made of lines).  The one
    escaping of the text output: the JSON keeps every string as it is."""
    if text.isprintable():
        return text
    text = text.translate(_LINES if lines else _ESCAPES)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: a name's undecodable bytes, shown as bytes
        try:
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate surrogateescape did not make
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _made_of_lines(name: str, holder: Any) -> bool:
    """Is ``holder``'s ``name`` a text of lines (a marker's message, a start's stderr)?"""
    return name == "startup_stderr" or (name == "message" and (
        "marker_path" in holder if isinstance(holder, dict) else hasattr(holder, "marker_path")))


def escaped(value: Any, lines: bool = False) -> Any:
    """A copy of ``value`` (a report's record, or its JSON form) whose every string is
    :func:`printable` (``lines``: a text of lines), for the text output to show: every
    path, name, startup line and message escaped once, at render time; ``value`` and
    the JSON left as they are."""
    if isinstance(value, str):
        return printable(value, lines)
    if isinstance(value, (list, tuple)):
        return type(value)(escaped(v) for v in value)
    if isinstance(value, dict):
        return {k: escaped(v, _made_of_lines(k, value)) for k, v in value.items()}
    slots = [n for c in type(value).__mro__ for n in getattr(c, "__slots__", ())]
    if not slots or not hasattr(value, "as_json"):  # not a record: a number, None, a bool
        return value
    copy = object.__new__(type(value))
    for name in slots:
        if hasattr(value, name):
            setattr(copy, name, escaped(getattr(value, name), _made_of_lines(name, value)))
    return copy


def _short(text: str) -> str:
    text = printable(text)
    return text if len(text) <= WIDTH else text[:WIDTH - 3] + "..."


def owner_text(owner: Owner) -> str:
    """``Debian package P, matches dpkg's md5sums``, ``D 1.0, matches its RECORD`` (what
    was checked: the file is what its owner installed, never that it is benign), ``...,
    MODIFIED: does not match ...``, ``..., conffile changed since installed``, ``claimed by
    ..., unverified`` (no hash to check), ``sitewarden``, ``owned by nobody``."""
    if owner.kind is None:
        return "owned by nobody"
    if owner.kind not in ("dpkg", "distribution"):
        return owner.text()
    if owner.verified:
        return "%s, %s" % (owner.text(), owner.checked())
    if owner.verified is False:
        return "%s, %s" % (owner.text(), "conffile changed since installed"
                           if owner.record == "conffile" else "MODIFIED: " + owner.checked())
    return "claimed by %s, %s" % (owner.text(), owner.checked())


def _writers_text(w: Writers | None) -> str:
    if not w:
        return ""
    who = ("group %s" % w.gid if w.scope == "group"
           else "every user" if w.mode & 0o002 else "user %s" % w.uid)
    how = {"write": "writable", "create": "creatable", "rename": "renamable"}[w.how]
    return "; %s by %s (%s %04o)" % (how, who, w.via, w.mode)


#: ``audit.capabilities.DANGEROUS``: what makes a line ``dangerous-startup-code``.
_DANGEROUS = ("runs-hidden-code", "decodes-and-executes", "starts-processes", "network",
              "reads-credentials")


def does_text(names: list[str] | None, evidence: list[str] | None, style: Any) -> str | None:
    """``does: starts-processes (subprocess.Popen), ...``: a startup line's or module's
    capabilities with what shows each (from their JSON ``evidence``), or None."""
    if not names:
        return None
    shown = []
    for name in names:
        seen = [e.partition(": ")[2] for e in evidence or () if e.startswith(name + ": ")]
        more = " and %d more" % (len(seen) - 3) if len(seen) > 3 else ""
        shown.append("%s (%s%s)" % (name, "; ".join(seen[:3]), more) if seen else name)
    text = printable("does: " + ", ".join(shown))
    return style.bad(text) if any(n in _DANGEROUS for n in names) else style.dim(text)


def _line(line: StartupLine, style: Any) -> str | None:
    kind = line.kind
    if kind == "comment":
        return None
    # An import line is shown as what it does ("runs import os; ..."), not as its kind.
    label = {"entry-point": "entry", "import": "runs"}.get(kind, kind)
    head = "    line %d: %s " % (line.number, label)  # "line 2: runs ...": not a count
    if kind == "path":
        state = "exists" if line.exists else style.warn("missing")
        text = "%s (%s%s)" % (printable(line.directory), state, _writers_text(line.writers))
        if line.writers:
            text = style.bad(text)
    else:
        text = _short(line.text)
    if line.error:
        text += "\n" + INDENT + style.bad("fails at every start: " + line.error)
    elif line.note:
        text += style.dim(" (%s)" % line.note)
    does = does_text(line.capabilities, line.evidence, style)
    if does:
        text += "\n" + INDENT + does
    for item in line.unread or ():  # what check's reading left unread (audit.analysis)
        text += "\n" + INDENT + style.warn("not read: " + printable(item))
    return head + text


def render_startup(data: dict[str, Any], style: Any, found: dict[str, list[str]] | None = None,
                   verbose: bool = True) -> list[str]:
    """The ``Startup code (N)`` block of ``check``'s text output (``data``: the
    ``startup`` section's JSON form, read back into its record here): each file, its
    owner, then its lines that do something; a file with findings names their ids
    (``found``: ``{path: ids}``) instead, its lines said by the findings (and shown with
    ``verbose``)."""
    found = found or {}
    section = StartupSection.from_json(data)
    files = section.files or []
    lines = [style.bold("Startup code (%d)" % len(files))]
    if not section.site:
        lines.append("  none: site is disabled (-S): no .pth file runs")
        return lines
    if not files:
        lines.append("  " + style.good("none"))
    for f in files:
        path = printable(f.path + (" -> %s" % f.realpath
                                   if f.realpath not in (None, f.path) else ""))
        label = [owner_text(f.owner)]
        if f.template and f.template != label[0]:  # sitewarden's own: said once
            label.append(f.template)
        if f.disabled_by:
            label.append("import lines turned off by %s" % f.disabled_by)
        if f.started_by:
            label.append("read by the site.addsitedir of %s line %d" % tuple(f.started_by))
        if f.file_type:
            label.append("a %s: not read" % f.file_type)
        if f.size is not None:
            label.append("%d bytes: not read" % f.size)
        owner = printable("[%s]" % ", ".join(label))
        trusted = f.owner.kind == "sitewarden" or f.owner.verified
        shown = (style.bad(owner) if f.owner.verified is False and f.owner.record != "conffile"
                 else style.dim(owner) if trusted else style.warn(owner))
        ids = found.get(f.path) or (found.get(f.realpath) if f.realpath else None)
        lines.append("  %s %s %s%s" % (f.kind, path, shown, " (finding %s)" % ", ".join(ids)
                                       if ids else ""))
        if ids and not verbose:
            continue  # what its code does, and where it fails: the findings say it
        if f.error:
            lines.append("    " + style.bad("fails at every start: " + f.error))
        does = does_text(f.capabilities, f.evidence, style)
        if does:
            lines.append("    " + does)
        lines.extend("    " + style.warn("not read: " + printable(item)) for item in f.unread or ())
        if trusted and f.template and not f.error and not f.unread:
            continue  # a known template, its owner's: its lines say nothing more
        for line in f.lines:
            text = _line(line, style)
            if text:
                lines.append(text)
    return lines


def hook_lines(exe: str, report: CheckReport, changed: dict[str, str]) -> list[str]:
    """The apt hook's lines for one interpreter: each startup line that fails at every
    start of it now (``startup-line-fails``), with the Debian package that ships the file
    when this run changed it (``changed``: ``{path: package}``)."""
    out = []
    name = exe.rsplit("/", 1)[-1]
    for f in report.findings or ():
        if f.kind != "startup-line-fails":
            continue
        package = changed.get(f.details.get("file") or "")
        out.append("  %s: %s%s" % (printable(name), printable(f.message), " (%s)" % printable(
            package) if package and package not in f.message else ""))
    return out


#: What the apt hook reports about the startup files of the packages a run changed.
SUSPECT_KINDS = ("startup-file-modified", "dangerous-startup-code")


def hook_suspect_lines(exe: str, report: CheckReport, changed: dict[str, str]) -> list[str]:
    """The apt hook's lines for one interpreter about the startup files of the packages
    this run changed (``changed``: ``{path: package}``): each now not what its package
    recorded (a conffile the administrator changed aside), or running dangerous code."""
    out = []
    name = exe.rsplit("/", 1)[-1]
    for f in report.findings or ():
        path = f.details.get("file") or ""
        package = changed.get(path) or changed.get(os.path.realpath(path))
        if f.kind not in SUSPECT_KINDS or not package or f.details.get("conffile"):
            continue
        out.append("  %s: %s%s" % (printable(name), printable(f.message), "" if package in
                                   f.message else " (%s)" % printable(package)))
    return out


def suspect_header(changes: dict[str, str] | None) -> str:
    return "sitewarden: startup files of the packages this %s run changed are not what " \
        "they should be:" % ("apt" if changes is not None else "dpkg")


def hook_header(changes: dict[str, str] | None) -> str:
    return "sitewarden: startup code fails at every start of these interpreters%s:" % (
        " after this apt run" if changes is not None else " after this dpkg run")
