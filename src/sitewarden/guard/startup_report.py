"""What an install changed of the code every start runs: said while it can be undone.

A ``.pth``, ``.start``, ``sitecustomize`` or ``usercustomize`` that an install adds or
changes runs at every start of the interpreter afterwards (LiteLLM 1.82.8's
``litellm_init.pth``).  :func:`snapshot` lists the startup files of the interpreter's
site directories before an install the guard lets through (one listing of each, a
``stat`` of each startup file, no hashing); :func:`report` lists them again after it and,
only when one was added, changed or removed, asks ``check``'s own probe, run in a child of
the same interpreter without ``site`` (``-S``: nothing it reports runs), what each is,
who installed it and what it does, and prints it; a high one in pip's error layout headed
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
from ..audit.records import StartupSection
from ..detect.records import CheckReport
from ..probe.runner import STATIC_BOOTSTRAP  # with this module: pip 26.3 forbids imports later

#: The names a start reads in a site directory (``.pth``, ``.start``) or imports from one.
SUFFIXES = (".pth", ".start")
CUSTOMIZE = ("sitecustomize.py", "usercustomize.py")


def startup_dirs():
    """The directories a start of this interpreter reads startup files from: its site
    directories and, when enabled, the user site (``site``'s answers)."""
    site = sys.modules.get("site")
    dirs = []
    try:
        dirs.extend(site.getsitepackages())
    except Exception:  # an old virtualenv's site.py, or none
        _swallowed("listing the site directories for the startup report")
    try:
        if getattr(site, "ENABLE_USER_SITE", False):
            dirs.append(site.getusersitepackages())
    except Exception:
        _swallowed("finding the user site for the startup report")
    out = []
    for d in dirs:
        if isinstance(d, str) and d not in out:
            out.append(d)
    return out


def snapshot():
    """``{path: (size, mtime_ns, inode)}`` of every startup file a start would read."""
    out = {}
    for d in startup_dirs():
        try:
            entries = os.scandir(d)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name.endswith(SUFFIXES) or name in CUSTOMIZE:
                    try:
                        st = entry.stat()
                    except OSError:
                        continue
                    out[entry.path] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def changes(before, after):
    """``(added, changed, removed)``: sorted paths."""
    return (sorted(set(after) - set(before)),
            sorted(p for p in after if p in before and after[p] != before[p]),
            sorted(set(before) - set(after)))


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


def acknowledged(f):
    """The ``startup:NAME`` acknowledgement (``SITEWARDEN_SILENCE``, a silence file) that
    covers the startup file ``f`` (its distribution's name or its file's), or None."""
    keys = {os.path.basename(f.path).lower()}
    if f.owner.distribution:
        keys.add(settings.canonical(f.owner.distribution))
    for name, source in settings.startup_acknowledgements():
        if name.lower() in keys or settings.canonical(name) in keys:
            return "startup:%s (%s)" % (name, source)
    return None


def report(before, stream=None, check=None, high_only=False):
    """Print what this install added, changed or removed of the startup files (``before``:
    :func:`snapshot`'s, taken before it); nothing when it changed none.  ``check``: a
    callable giving the child's report (shared with the shadow report).  ``high_only``:
    the high blocks alone (pip's ``-qq``: its errors only).  A failure propagates: the
    caller (``policy.Decision.report``) says it in one line."""
    stream = sys.stderr if stream is None else stream
    if before is None:
        return
    added, changed, removed = changes(before, snapshot())
    if not (added or changed or removed):
        return
    check = static_report if check is None else check
    text = format_report(check() if added or changed else None, added, changed, removed,
                         high_only)
    if text:
        stream.write(text)
        stream.flush()


def _owner(o):
    if o.kind is None:
        return "no package's record lists it"
    return "installed by %s%s" % (o.text(), ", verified" if o.verified else
                                  ", NOT verified" if o.verified is False else "")


def _remove(f):
    python = sys.executable or "python3"
    if f.owner.kind == "distribution":
        marker = os.path.join(os.path.dirname(os.__file__), "EXTERNALLY-MANAGED")
        flag = " --break-system-packages" if os.path.isfile(marker) else ""
        return "%s -m pip uninstall%s %s (and, if it stays behind, rm %s)" % (
            python, flag, f.owner.distribution, f.path)
    return "rm %s" % f.path


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


def format_report(check, added, changed, removed, high_only=False):
    """The report's text: one block per added or changed file that ``check``, the child's
    report, rates high (pip's error layout headed ``warning:``: the install succeeded), one
    line for each other one (not with ``high_only``)."""
    report = CheckReport.from_json(check) if check else None
    section = report.section("startup") if report else None
    files = {f.path: f for f in StartupSection.from_json(section).files} if section else {}
    findings = report.findings if report else []
    blocks, lines = [], []
    python = sys.executable or "python3"
    for how, paths in (("added", added), ("changed", changed)):
        for path in paths:
            f = files.get(path)
            if f is None:  # not read by a start (a .start before 3.15): not startup code
                continue
            found = [x for x in findings if path in (x.details.get("file"),
                                                     x.details.get("path"))]
            high = any(x.severity == "high" for x in found)
            code = f.executable()
            does = sorted({c for x in code for c in x.capabilities or ()} |
                          set(f.capabilities or ()))
            ack = acknowledged(f)
            if ack:
                lines.append("  %s %s (%s): acknowledged by %s" % (how, path, _owner(f.owner),
                                                                   ack))
            elif not high:
                lines.append("  %s %s (%s)%s%s" % (
                    how, path, _owner(f.owner), ": runs code at every start"
                    if f.runs_code() else ": no code, path lines only",
                    "; does: %s" % ", ".join(does) if does else ""))
                lines.extend("    %s: %s" % (x.severity, x.message) for x in found
                             if x.severity in ("medium", "low"))
            else:
                name = f.owner.distribution or os.path.basename(path)
                blocks.append("\n".join([
                    "warning: dangerous-startup-code", "",
                    "\u00d7 %s, %s, %s by this install, runs code at every start of %s" % (
                        path, _owner(f.owner), how, python),
                    "\u2570\u2500> " + "\n    ".join(_detail(f, code, found)), "",
                    "note: the install itself went through; this file now runs before every "
                    "Python program of this interpreter, as whoever runs it.",
                    "hint: remove it: %s" % _remove(f),
                    "hint: if you trust it, acknowledge it: SITEWARDEN_SILENCE=startup:%s" % name,
                ]))
    lines.extend("  removed %s" % path for path in removed)
    out = ""
    if lines and not high_only:
        out += "sitewarden: this install changed the code that runs at every start of %s:\n" \
            % python + "\n".join(lines) + "\n"
    if blocks:
        out += "\n".join(blocks) + "\n"
    return out


def _short(text, n=100):
    return text if len(text) <= n else text[:n - 3] + "..."
