"""What an install changed of the code every start runs: said while it can be undone.

A ``.pth``, ``.start``, ``sitecustomize`` or ``usercustomize`` that an install adds or
changes runs at every start of the interpreter afterwards (LiteLLM 1.82.8's
``litellm_init.pth``); so does a module an existing ``.pth`` imports, its bytecode, or
what lands in a directory a path line adds.  :func:`snapshot`
(:mod:`.startup_watch`) names every such place before an install the guard lets through
(a ``stat`` each, no hashing); :func:`report` looks again after it and, only when one
changed, asks ``check``'s own probe, run in a child of the same interpreter without
``site`` (``-I -S``: nothing it reports runs), what each startup file concerned is, who
installed it and what it does, and prints it; a high one in pip's error layout headed
``warning:`` (the install succeeded).  It never changes what was installed nor the
installer's exit status: a failure is one line (``policy.Decision.report``), the reason
under ``SITEWARDEN_DEBUG``.  Runtime module (imported with the installer, see
``install_report``).
"""

import json
import os
import subprocess
import sys

# failopen: a failed report goes through it (policy.Decision.report), after pip 26.3
# forbids imports
from .. import _swallowed, failopen, settings  # noqa: F401
from ..facts.records import SHOWN, CheckReport, _contents, _sha256, identify
from ..facts.startup_records import StartupSection
from ..facts.text import fit
from ..probe.runner import STATIC_BOOTSTRAP  # with this module: pip 26.3 forbids imports later
from .startup_watch import changes, snapshot  # noqa: F401 - the policy asks them here

_sha256()  # the findings' ids hash with it after the install: pip 26.3 forbids imports then


def _package_root():
    """The directory that holds the ``sitewarden`` package (this is its guard/...)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def static_report(kind="report", timeout=60):
    """``check``'s report on this interpreter (its JSON form), from a child started isolated
    and without ``site`` (``-I -S``: nothing of ``PYTHONPATH`` or the working directory
    runs; the environment is its data); ``kind`` ``shadows``: the shadowing section alone.
    Raises when the child gives no report (its last line of stderr says why)."""
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", STATIC_BOOTSTRAP, _package_root(),
                           kind], capture_output=True, stdin=subprocess.DEVNULL,
                          timeout=timeout, cwd=os.path.sep)
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError("the report's child exited with status %d%s" % (
            proc.returncode, ": " + why[-1] if why else ""))
    return json.loads(proc.stdout.decode("utf-8")).pop("check")


def acknowledged(found):
    """The acknowledgement that lifted the findings ``found`` of one startup file, as the
    child's ``check`` read it (pinned to the file, its owner and its code:
    ``audit.acknowledgements``), in words, or None."""
    for x in found:
        if x.details.get("acknowledged"):
            return "as it is (its pinned code, in %s)" % (x.details.get("acknowledged_by"),)
    return None


def tell_unmatched(startup):
    """Under ``SITEWARDEN_DEBUG``: each acknowledgement of startup code that acknowledges
    nothing here (its file changed, is gone, or it pins nothing), as the child read it
    (``startup``: its ``StartupSection``, or None)."""
    if failopen.mode() != "print" or startup is None:
        return
    for ack in startup.acknowledgements or ():
        if ack.state != "acknowledged":
            failopen.tell("%s in %s: %s" % (settings.short_word(ack.word or ""), ack.source,
                                            ack.meaning()))


def report(before, stream=None, check=None, high_only=False, verb="install"):
    """Print what this install added, changed or removed of the startup files (``before``:
    :func:`snapshot`'s, taken before it); nothing when it changed none.  ``check``: a
    callable giving the child's report (shared with the shadow report).  ``high_only``:
    the high blocks alone (pip's ``-qq``: its errors only).  A failure propagates: the
    caller (``policy.Decision.report``) says it in one line."""
    stream = sys.stderr if stream is None else stream
    if before is None:
        return
    added, changed, removed, affected = changes(before, snapshot())
    if not (added or changed or removed or affected):
        return
    check = static_report if check is None else check
    text = format_report(check() if added or changed or affected else None, added, changed,
                         removed, high_only, affected, verb)
    if text:
        stream.write(fit(text.rstrip("\n")) + "\n")  # no line wider than a screen
        stream.flush()


def _owner(o):
    if o.kind is None:
        return "no package's record lists it"
    checked = o.checked()  # what was checked, never a bare "verified" (a RECORD is its
    # own wheel's word: it proves the file unchanged, not benign)
    return "installed by %s%s" % (o.text(), ", %s" % checked if checked else "")


def _removal(finding):
    """The command that takes the startup file of ``finding`` (high, its id set) out of
    every start without starting this interpreter: ``check``'s fix for it
    (``sitewarden quarantine ID``, then the owner's own version back where it has one)."""
    return finding.details.get("command") or "sitewarden quarantine %s --python %s" % (
        finding.id[:SHOWN], sys.executable or "python3")


def _detail(f, code, found):
    """The lines under pip's ``╰─>``: the code, what it does, why it matters."""
    out = ["line %d: %s" % (x.number, _short(x.text)) for x in code[:3]]
    for x in found:
        if x.kind == "dangerous-startup-code":
            evidence = [e.partition(": ")[2] for e in x.details.get("evidence") or ()]
            out.append("it %s: %s" % (", ".join(x.details.get("capabilities") or ()),
                                      "; ".join(_short(e, 60) for e in evidence[:4])))
            out.append("startup files are where supply-chain payloads run (ATT&CK T1546.018)")
        elif x.severity == "high":
            out.append(x.message)
    return out


def format_report(check, added, changed, removed, high_only=False, affected=None,
                  verb="install"):
    """The report's text: one block per startup file added or changed, or whose code this
    install changed (``affected``: :func:`.startup_watch.changes`'), that ``check``, the
    child's report, rates high (pip's error layout headed ``warning:``: the install
    succeeded), one line for each other one (not with ``high_only``)."""
    report = CheckReport.from_json(check) if check else None
    section = report.section("startup") if report else None
    startup = StartupSection.from_json(section) if section else None
    files = {f.path: f for f in startup.files} if startup else {}
    for f in list(files.values()):
        files.setdefault(f.kind, f)  # "sitecustomize", "usercustomize": the file a start runs
    findings = report.findings if report else []
    # the ids check gives them (sitewarden acknowledge and quarantine take them), in the
    # fixes that name them
    identify(findings, _contents(section))
    tell_unmatched(startup)
    blocks, lines = [], []
    for how, paths in (("added", added), ("changed", changed)):
        for path in paths:
            f = files.get(path)
            if f is None:  # not read by a start (a .start before 3.15): not startup code
                continue
            _describe(f, "%s by this %s" % (how, verb), how, findings, blocks, lines)
    for key, places in sorted((affected or {}).items()):
        f = files.get(key)
        places = sorted(places, key=lambda p: ("__pycache__" in p[0], p[0]))
        said = "; ".join("%s %s" % (place, how if how != "changed" or not os.path.isdir(
            place) else "changed (its listing)") for place, how in places[:4]) + (
            "; ..." if len(places) > 4 else "")
        if f is None:
            lines.append("  changed what %s runs: %s" % (key, said))
            continue
        _describe(f, "whose code this %s changed (%s)" % (verb, said), None,
                  findings, blocks, lines, said)
    lines.extend("  removed %s" % path for path in removed)
    out = ""
    if lines and not high_only:
        out += "sitewarden: this %s changed the code that runs at every start of %s:\n" % (
            verb, sys.executable or "python3") + "\n".join(lines) + "\n"
    if blocks:
        out += "\n".join(blocks) + "\n"
    return out


def _describe(f, why, how, findings, blocks, lines, said=None):
    """Add ``f``'s block (it is high) or line to the report; ``why``: what the install did
    to it, in the block's words; ``how`` and ``said``: in the line's.  The hint takes
    ``f`` out of every start with the modules it runs (``sitewarden quarantine``): what
    an install changed under it goes with it."""
    path = f.path
    found = [x for x in findings if path in (x.details.get("file"), x.details.get("path"))]
    high = [x for x in found if x.severity == "high"]
    code = f.executable()
    does = sorted({c for x in code for c in x.capabilities or ()} | set(f.capabilities or ()))
    ack = acknowledged(found)
    what = "%s (%s)" % (path, _owner(f.owner)) if said else "%s %s (%s)" % (
        how, path, _owner(f.owner))
    if said:
        what += ": what it runs changed (%s)" % said
    if ack:
        lines.append("  %s: acknowledged %s" % (what, ack))
    elif not high:
        lines.append("  %s%s%s" % (
            what, ": runs code at every start" if f.runs_code() else
            ": no code, path lines only" if not said else "",
            "; does: %s" % ", ".join(does) if does else ""))
        lines.extend("    %s: %s" % (x.severity, x.message) for x in found
                     if x.severity in ("medium", "low"))
    else:
        blocks.append("\n".join([
            "warning: %s" % high[0].kind, "",
            "\u00d7 %s, %s, %s, runs code at every start of %s" % (
                path, _owner(f.owner), why, sys.executable or "python3"),
            "\u2570\u2500> " + "\n    ".join(_detail(f, code, found)), "",
            "note: the install itself went through; this file now runs before every "
            "Python program of this interpreter, as whoever runs it.",
            # each command on a line of its own, as pip prints one: copied whole
            "hint: take it out of every start, without starting this interpreter:\n"
            "    %s\n    (sitewarden quarantine --restore %s puts it back)" % (
                _removal(high[0]), high[0].id[:SHOWN]),
            "hint: if you trust it as it is, acknowledge it (this pins its code in %s: any "
            "change to it brings this warning back):\n    sitewarden acknowledge %s "
            "--python %s" % (settings.SYSTEM_FILE, high[0].id, sys.executable or "python3"),
        ]))


def _short(text, n=100):
    return text if len(text) <= n else text[:n - 3] + "..."
