"""The differential oracle: plant generated startup payloads, audit them with ``check
--json``, start the target once under the recorder, and list every disagreement.

:func:`run_oracle` does it for one target (a ``GuardedPython`` without the guard): it
splits the cases (``harness.payloads``) into batches (one ``sitecustomize``, one
``usercustomize`` and one copy of each shadowed standard library name per batch; one
``PYTHONOPTIMIZE`` per batch), and for each batch plants the cases with the recorder
(``harness.recorder``) first, builds their bytecode with the target, runs the CLI's
``check --python T --json`` (which never starts the target normally), then starts the
target once: ``python -c pass``, stdin closed, with a timeout.  It then compares.

A **disagreement** (:class:`Disagreement`), per class:

* ``process``, ``exec-data``, ``socket``, ``ctypes``: an event of that kind (a process
  started; a ``compile``/``exec``/``function.__new__``/``code.__new__`` of code that is no
  file's, outside importlib, ``site`` and a standard library module's own import; a
  ``socket.connect``; a ``ctypes`` symbol looked up or called) whose startup file's
  verdict (its findings' highest severity) is below ``high``;
* ``file-write``: a file opened for writing (outside importlib's bytecode cache) under a
  verdict below ``medium`` (code that writes files is not proved harmless);
* ``unlisted-file``: code ran from a file (an ``exec`` of a file's code object, a module
  imported from it, bytecode run instead of its source) that is neither the standard
  library's nor in that startup file's ``module_files`` (its lines' and its own, in the
  JSON), unless the verdict is ``high`` and the audit said it did not read, or could not
  prove, everything (``unread`` on the file or its lines, ``unproven`` on a high finding):
  then the audit made no claim it broke;
* ``unlisted-startup-file``: a planted ``.pth``/``.start``/``sitecustomize``/
  ``usercustomize`` that ran code and is not in ``startup.files``, unless a startup file
  that started it is ``high`` with ``unread`` or ``unproven`` (as above);
* ``control-too-severe``: a benign control above the severity it may have.

An event is the doing of the startup file :func:`harness.recorder.attribute` finds on its
stack; one found on no planted frame is attributed by the case's token in its arguments
(``true oracle_c012``), else by re-running the batch's cases in halves (a bisection,
each case alone at the end) and seeing which one makes it.  The oracle's own problems
are listed apart (``inert``: a payload case that did nothing; ``control-acted``: a
control that did; events that could not be attributed; recorder errors): they fail the
run too, since an oracle that does not see its payloads run proves nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .bytecode import build_pycs
from .dists import make_dist
from .payloads import SEVERITIES, Case, Where, generate
from .recorder import (
    RECORDER_MODULE,
    RECORDER_PTH,
    Event,
    Log,
    attribute,
    frames_text,
    read_log,
    recorder_files,
)

#: Most cases planted at once.
BATCH = 130

#: What each event class needs of the verdict at least.
NEEDS = {"process": "high", "exec-data": "high", "socket": "high", "ctypes": "high",
         "file-write": "medium"}
CLASSES = ("process", "exec-data", "socket", "ctypes", "file-write", "unlisted-file",
           "unlisted-startup-file", "control-too-severe")
PROCESS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork",
           "os.forkpty", "os.spawn", "pty.spawn", "os.startfile")
CTYPES = ("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function")
TOKEN = re.compile(r"oracle_(c\d{3})")
OFF = ".oracle-off"


def rank(severity: Optional[str]) -> int:
    """A severity's order (``None``, no finding or no such file: -1)."""
    return SEVERITIES.index(severity) if severity in SEVERITIES else -1


@dataclass
class Disagreement:
    """Where the code did more than the verdict says."""

    kind: str
    case: Case
    startup_file: str
    verdict: Optional[str]
    what: str  # the event, the file, or the expected severity
    how: str = ""  # how the event was attributed, its stack

    def line(self) -> str:
        return "[%s] %s: %s; verdict %s for %s%s" % (
            self.kind, self.case.id, self.what, self.verdict or "none (not listed)",
            self.startup_file, (" (%s)" % self.how) if self.how else "")


@dataclass
class Batch:
    """Cases started together, and what came of it."""

    name: str
    cases: List[Case]
    env: Dict[str, str]
    report: Dict[str, Any] = field(default_factory=dict)
    log: Log = field(default_factory=Log)
    planted: Any = None  # the Planted files
    makers: Dict[Tuple[str, str], str] = field(default_factory=dict)  # bisection's finds
    seconds: Dict[str, float] = field(default_factory=dict)
    start_status: Optional[int] = None
    start_stderr: str = ""


@dataclass
class Outcome:
    """The oracle's result for one target."""

    target: str
    seed: int
    cases: List[Case]
    batches: List[Batch] = field(default_factory=list)
    disagreements: List[Disagreement] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    inert: List[Case] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> Dict[str, int]:
        """Disagreeing cases per class."""
        out: Dict[str, int] = {}
        for kind in CLASSES:
            cases = {d.case.id for d in self.disagreements if d.kind == kind}
            if cases:
                out[kind] = len(cases)
        return out

    def summary(self) -> str:
        payloads = [c for c in self.cases if c.kind == "payload"]
        disagreeing = {d.case.id for d in self.disagreements}
        reports = [b.report for b in self.batches if b.report]
        if reports and not any(_has_module_files(r) for r in reports):
            note = ("\n  (check's JSON has no module_files: every file a startup file runs "
                    "counts as unlisted)")
        else:
            note = ""
        lines = ["oracle on %s (seed %d; %d cases: %d payloads, %d controls; %d batches; "
                 "%.1f s): %d disagreements in %d cases, %d oracle problems"
                 % (self.target, self.seed, len(self.cases), len(payloads),
                    len(self.cases) - len(payloads), len(self.batches), self.seconds,
                    len(self.disagreements), len(disagreeing),
                    len(self.problems) + len(self.inert))]
        for kind, n in self.counts().items():
            lines.append("  %-22s %d cases" % (kind, n))
        return "\n".join(lines) + note

    def message(self, limit: int = 1200) -> str:
        """Every disagreement, grouped by case (its operators and payload once), then the
        oracle's own problems."""
        out = [self.summary()]
        by_case: Dict[str, List[Disagreement]] = {}
        for d in self.disagreements:
            by_case.setdefault(d.case.id, []).append(d)
        for cid in sorted(by_case):
            case = by_case[cid][0].case
            out.append("\n== %s (%s) operators: %s" % (cid, case.kind, ", ".join(case.operators)))
            seen, per_kind = set(), {}  # type: Set[str], Dict[str, int]
            for d in by_case[cid]:
                if d.line() in seen:
                    continue
                seen.add(d.line())
                per_kind[d.kind] = per_kind.get(d.kind, 0) + 1
                if per_kind[d.kind] <= 4:
                    out.append("  " + d.line())
            for kind, n in per_kind.items():
                if n > 4:
                    out.append("  [%s] ... and %d more" % (kind, n - 4))
            out.append("  payload:\n" + _indent(case.payload_text(limit), 4))
        if self.inert:
            out.append("\n== oracle: payload cases that did nothing (%d)" % len(self.inert))
            for case in self.inert:
                out.append("  %s operators: %s\n%s" % (case.id, ", ".join(case.operators),
                                                       _indent(case.payload_text(400), 4)))
        if self.problems:
            out.append("\n== oracle problems (%d)" % len(self.problems))
            out += ["  " + p for p in self.problems]
        return "\n".join(out)

    def as_json(self) -> Dict[str, Any]:
        return {
            "target": self.target, "seed": self.seed, "seconds": self.seconds,
            "counts": self.counts(),
            "batches": [{"name": b.name, "cases": [c.id for c in b.cases], "env": b.env,
                         "seconds": b.seconds, "start_status": b.start_status}
                        for b in self.batches],
            "disagreements": [{"kind": d.kind, "case": d.case.id, "operators": d.case.operators,
                               "startup_file": d.startup_file, "verdict": d.verdict,
                               "what": d.what, "how": d.how} for d in self.disagreements],
            "cases": {c.id: {"kind": c.kind, "operators": c.operators, "sink": c.sink,
                             "expected": c.expected, "payload": c.payload_text(4000)}
                      for c in self.cases},
            "inert": [c.id for c in self.inert], "problems": self.problems,
        }


def _has_module_files(report: Dict[str, Any]) -> bool:
    files = report.get("startup", {}).get("files", [])
    return any("module_files" in f or any("module_files" in x for x in f.get("lines") or [])
               for f in files)


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line for line in text.splitlines())


# ---------------------------------------------------------------------------- batches


def _fits(case: Case, env: Dict[str, str]) -> bool:
    """Whether ``case`` runs in a start with ``env`` (a value ``""``: the variable unset)."""
    return all(env.get(key, "") == value for key, value in case.env.items())


def batches(cases: Sequence[Case], size: int = BATCH) -> List[Tuple[Dict[str, str], List[Case]]]:
    """The cases in batches: each slot once per batch, each case in a start whose
    environment it fits (one per ``PYTHONOPTIMIZE`` a case needs; the others unset), at
    most about ``size`` cases, the cases filling the emptiest batch that fits."""
    envs = sorted({tuple(sorted((k, v) for k, v in c.env.items() if v)) for c in cases})
    slot_counts: Dict[str, int] = {}
    for case in cases:
        for slot in case.slots:
            slot_counts[slot] = slot_counts.get(slot, 0) + 1
    n = max([-(-len(cases) // size), len(envs), *slot_counts.values()])
    plain = [env for env in envs if not env]
    chosen = [dict(env) for env in envs if env] + [{} for _ in range(n - len(envs) + len(plain))]
    bins: List[List[Case]] = [[] for _ in chosen]
    used: List[Set[str]] = [set() for _ in chosen]
    order = sorted(cases, key=lambda c: (-len(c.slots) - len(c.env), c.id))
    for case in order:
        fits = [i for i in range(len(bins)) if _fits(case, chosen[i])
                and not used[i] & set(case.slots)]
        if not fits:
            env = {k: v for k, v in case.env.items() if v}
            chosen.append(env)
            bins.append([])
            used.append(set())
            fits = [len(bins) - 1]
        i = min(fits, key=lambda k: len(bins[k]))
        bins[i].append(case)
        used[i] |= set(case.slots)
    return [(env, sorted(b, key=lambda c: c.id)) for env, b in zip(chosen, bins) if b]


# ---------------------------------------------------------------------------- planting


class Planted:
    """Where a batch's files went on one target."""

    def __init__(self, target: Any, cases: Sequence[Case], sitecustomize: str) -> None:
        self.target = target
        self.site = str(target.local_dir)
        self.sitecustomize = sitecustomize
        self.usercustomize = self.site + "/usercustomize.py"
        self.cases = {c.id: c for c in cases}
        self.files: Dict[str, str] = {}  # absolute path -> case id
        self.startup: Dict[str, str] = {}  # absolute startup file -> case id
        self.top: Dict[str, List[str]] = {}  # case id -> its top startup files (absolute)
        self.texts: Dict[str, bytes] = {}  # absolute path -> the planted source
        for case in cases:
            for rel, data in case.files.items():
                self.files[self.abs(rel)] = case.id
                self.texts[self.abs(rel)] = data
            for pyc in case.pycs:  # bytecode: code no reader sees as text
                self.files[self.abs(pyc.path)] = case.id
            self.top[case.id] = [self.abs(rel) for rel in case.startup]
            for path in self.top[case.id] + [self.abs(rel) for rel in case.nested]:
                self.startup[path] = case.id

    def abs(self, rel: str) -> str:
        if rel == "<sitecustomize>":
            return self.sitecustomize
        if rel == "<usercustomize>":
            return self.usercustomize
        return self.site + "/" + rel

    def case_of(self, path: Optional[str]) -> Optional[Case]:
        if not path:
            return None
        cid = self.files.get(path) or self.startup.get(path)
        if cid is None:
            m = TOKEN.search(path)
            cid = m.group(1) if m else None
        return self.cases.get(cid) if cid else None

    def entry(self, case: Case) -> str:
        return self.abs(case.entry)


def sitecustomize_path(target: Any) -> str:
    """Where ``import sitecustomize`` finds a planted one: the standard library's own
    (Debian's, a link to ``/etc``), replaced, when there is one; else the site
    directory."""
    stdlib = str(target.stdlib) + "/sitecustomize.py"
    return stdlib if target.exists(Path(stdlib)) else str(target.local_dir) + "/sitecustomize.py"


def plant(target: Any, cases: Sequence[Case], log: str, sitecustomize: str) -> Planted:
    """Write the cases' files and the recorder into ``target`` and build their bytecode."""
    planted = Planted(target, cases, sitecustomize)
    special: Dict[str, bytes] = {}

    def build(stage: Path) -> None:
        for name, data in recorder_files(
                log, planted.site + "/oracle_", [sitecustomize, planted.usercustomize]).items():
            (stage / name).write_bytes(data)
        for case in cases:
            mine = {rel: data for rel, data in case.files.items() if not rel.startswith("<")}
            special.update({planted.abs(rel): data for rel, data in case.files.items()
                            if rel.startswith("<")})
            if case.owned:
                make_dist(stage, "oracle-%s" % case.id, "1.0", mine, installer="pip")
                continue
            for rel, data in mine.items():
                path = stage / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)

    if hasattr(target, "hp"):  # a hermetic python: its files are the host's
        build(Path(target.local_dir))
    else:
        target.copy_in(build, target.local_dir)
    for path, data in special.items():
        target.put(Path(path), data=data)
    requests = []
    for case in cases:
        for pyc in case.pycs:
            requests.append({"kind": pyc.kind, "path": planted.abs(pyc.path), "code": pyc.code,
                             "filename": pyc.filename, "optimize": pyc.optimize,
                             "source": planted.abs(pyc.source) if pyc.source else None})
    build_pycs(target, requests, target.tmp)
    return planted


_TOGGLE = r"""
import json, os, sys
off, on = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for path in on:
    if os.path.lexists(path + %(off)r):
        os.replace(path + %(off)r, path)
for path in off:
    if os.path.lexists(path):
        os.replace(path, path + %(off)r)
""" % {"off": OFF}


def enable_only(planted: Planted, keep: Iterable[str]) -> None:
    """Turn off the top startup files of every case but ``keep`` (renamed aside)."""
    keep = set(keep)
    off = [p for cid, paths in planted.top.items() if cid not in keep for p in paths]
    on = [p for cid, paths in planted.top.items() if cid in keep for p in paths]
    planted.target.root(_TOGGLE, json.dumps(off), json.dumps(on))


def clean(target: Any, planted: Planted) -> None:
    """Remove what a batch planted (the next batch starts from a clean site directory)."""
    paths = sorted(set(planted.files) | set(planted.startup) |
                   {planted.site + "/" + RECORDER_PTH, planted.site + "/" + RECORDER_MODULE +
                    ".py"})
    target.root(_CLEAN, json.dumps(paths), planted.site)


_CLEAN = r"""
import json, os, shutil, sys
site = sys.argv[2]
for path in json.loads(sys.argv[1]):
    for p in (path, path + %(off)r):
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        elif os.path.lexists(p):
            os.unlink(p)
for name in os.listdir(site):
    p = os.path.join(site, name)
    if name.startswith(("oracle_", "oracle-")) or name in ("usercustomize.py",):
        shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
cache = os.path.join(site, "__pycache__")
if os.path.isdir(cache):
    for name in os.listdir(cache):
        if name.startswith(("oracle_", "usercustomize.", "sitecustomize.", "sitewarden_oracle")):
            os.unlink(os.path.join(cache, name))
""" % {"off": OFF}


# ---------------------------------------------------------------------------- the report


class Verdicts:
    """What ``check --json`` said of each startup file."""

    def __init__(self, report: Dict[str, Any]) -> None:
        self.files: Dict[str, Dict[str, Any]] = {}
        for f in report.get("startup", {}).get("files", []):
            for key in ("path", "realpath"):
                if f.get(key):
                    self.files[os.path.normpath(f[key])] = f
        self.findings: Dict[str, List[Dict[str, Any]]] = {}
        for finding in report.get("findings", []):
            if finding.get("file"):
                self.findings.setdefault(os.path.normpath(finding["file"]), []).append(finding)

    def listed(self, path: str) -> bool:
        return os.path.normpath(path) in self.files

    def severity(self, path: str) -> Optional[str]:
        """The highest severity of the findings about ``path`` (None: none, or not listed)."""
        found = self.findings.get(os.path.normpath(path), [])
        if not found:
            return "info" if self.listed(path) else None
        return max((f["severity"] for f in found), key=rank)

    def kinds(self, path: str) -> str:
        found = self.findings.get(os.path.normpath(path), [])
        return ", ".join(sorted({"%s %s" % (f["kind"], f["severity"]) for f in found}))

    def module_files(self, path: str) -> Set[str]:
        f = self.files.get(os.path.normpath(path))
        if f is None:
            return set()
        out = set(f.get("module_files") or [])
        for line in f.get("lines") or []:
            out |= set(line.get("module_files") or [])
        return {os.path.normpath(p) for p in out}

    def said_unread(self, path: str) -> bool:
        f = self.files.get(os.path.normpath(path))
        if f is None:
            return False
        return bool(f.get("unread")) or any(line.get("unread") for line in f.get("lines") or [])

    def said_unproven(self, path: str) -> bool:
        """A high finding about ``path`` with the prover's reasons, or code that runs data:
        what it could not prove (a computed path change, a callee it cannot resolve, data
        run as code) may run anything, anywhere."""
        return any(f["severity"] == "high" and (f.get("unproven") or set(
            f.get("capabilities") or ()) & {"runs-hidden-code", "decodes-and-executes"})
                   for f in self.findings.get(os.path.normpath(path), []))

    def excused(self, path: str) -> bool:
        """``high`` and said it did not read, or could not prove, everything: no
        completeness claim."""
        return self.severity(path) == "high" and (
            self.said_unread(path) or self.said_unproven(path))


# ---------------------------------------------------------------------------- comparing


def string_constants(data: bytes, depth: int = 0) -> Set[str]:
    """The string constants of Python source ``data`` (a module, or a ``.pth`` file's
    import lines), and of the code those constants hold, four levels down."""
    import ast  # why: the host reads the planted code's literals (tests only)

    texts = [data]
    if data.lstrip()[:7] in (b"import ", b"import\t") or b"\nimport" in data:
        texts += [line for line in data.splitlines() if line.startswith((b"import ",
                                                                         b"import\t"))]
    found: Set[str] = set()
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    if depth < 4:
        for value in list(found):
            if "\n" in value or "(" in value:
                found |= string_constants(value.encode("utf-8", "replace"), depth + 1)
    return found


class Judge:
    """Compares one batch's log with its report."""

    def __init__(self, target: Any, planted: Planted, verdicts: Verdicts) -> None:
        self.target, self.planted, self.verdicts = target, planted, verdicts
        stdlib = {str(target.stdlib), os.path.realpath(str(target.stdlib)),
                  str(target.interp.stdlib), os.path.realpath(str(target.interp.stdlib))}
        self.stdlib = tuple(sorted(p.rstrip("/") + "/" for p in stdlib))
        self.recorder = {planted.site + "/" + RECORDER_MODULE + ".py",
                         planted.site + "/" + RECORDER_PTH}
        self._literals: Optional[Set[str]] = None

    def is_stdlib(self, path: str) -> bool:
        if path in self.planted.files or path in self.planted.startup:
            return False
        if path.startswith("<frozen"):
            return True
        return path.startswith(self.stdlib) and "-packages/" not in path

    def import_time_of_stdlib(self, event: Event) -> bool:
        """The event happens while a standard library module is being imported, before
        any planted or other code: the standard library's own doing."""
        for frame in event.stack:
            if frame[0] == "I":
                return True
            if frame[0] == "F" and self.is_stdlib(frame[1]):
                continue
            return False
        return False

    def classify(self, event: Event) -> Optional[str]:
        """The event's class (``NEEDS``), or None when it is not suspicious."""
        name = event.name
        first = event.stack[0] if event.stack else None
        machinery = first is not None and first[0] in ("I", "S")
        if name in PROCESS or name.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
            return "process"
        if name == "socket.connect":
            return "socket"
        if name in CTYPES:
            return None if self.import_time_of_stdlib(event) else "ctypes"
        if name in ("compile", "exec", "function.__new__", "code.__new__"):
            if machinery or self.import_time_of_stdlib(event):
                return None
            if name == "code.__new__" and first is not None and first[0] == "F" and \
                    self.is_stdlib(first[1]):
                return None  # e.g. code.replace() inside the standard library
            filename = str(event.args[0] if name in ("exec", "function.__new__")
                           else event.args[1] if name == "compile" else event.args[0])
            if filename.startswith("/") and name in ("exec", "compile"):
                return None  # a file's code: judged as a file that ran (unlisted-file)
            if filename == "<fstring>" and name == "compile":
                return None  # 3.8-3.11 compile an f-string's expressions with their code
            source = event.args[0] if name == "compile" else \
                event.paired.args[0] if event.paired is not None else None
            if self.literal(source):
                return None  # a literal of the code, which the audit reads as code
            return "exec-data"
        if name == "open":
            if machinery or self.import_time_of_stdlib(event):
                return None
            return "file-write"
        return None

    def literal(self, source: Any) -> bool:
        """Whether ``source`` (a compile's) is a string literal of a planted file's code,
        or of the code such a literal holds: code the audit reads where it stands (an
        ``exec`` of a literal is read as code, docs/startup-code.md), not data.  A
        string that is only spelled from literals (joined, decoded...) is data here."""
        if isinstance(source, bytes):
            source = source.decode("utf-8", "replace")
        if not isinstance(source, str):
            return False
        return source in self.literals or source.rstrip("\n") in self.literals

    @property
    def literals(self) -> Set[str]:
        if self._literals is None:
            self._literals = set()
            for data in self.planted.texts.values():
                self._literals |= string_constants(data)
        return self._literals

    def owner_of(self, event: Event) -> Tuple[Optional[str], str]:
        """The planted startup file whose doing the event is, and how that was found."""
        if event.owner and event.owner in self.planted.startup:
            return event.owner, event.how
        if event.owner:
            return None, "not planted: %s" % event.owner
        paired = getattr(event, "paired", None)
        m = TOKEN.search(repr(event.args) + (repr(paired.args) if paired else ""))
        if m and m.group(1) in self.planted.cases:
            # the token names the case, not which of its startup files ran the code: the
            # case's most severe verdict is the one that covers it
            case = self.planted.cases[m.group(1)]
            files = [p for p in self.planted.startup if self.planted.case_of(p) is case]
            listed = [p for p in files if self.verdicts.severity(p) is not None]
            best = max(listed, key=lambda p: rank(self.verdicts.severity(p)), default=None)
            return best or self.planted.entry(case), "the case's token"
        return None, ""

    def ran_files(self, log: Log) -> List[Tuple[str, str, Event]]:
        """(owner, file, event) for code that ran from a file: file code ``exec``'d,
        modules imported (their spec's origin; their bytecode when no source was
        compiled)."""
        compiled = {e.args[1] for e in log.events if e.name == "compile" and e.args and
                    e.stack and e.stack[0][0] == "I"}
        out = []
        for event in log.events:
            owner, _how = self.owner_of(event)
            if owner is None:
                continue
            if event.name == "exec":
                claimed = str(event.args[0])
                origin = event.args[2] if len(event.args) > 2 else None
                cached = event.args[3] if len(event.args) > 3 else None
                if origin and origin.startswith("/"):
                    out.append((owner, origin, event))  # what ran, whatever the code claims
                    if origin.endswith(".py") and cached and origin not in compiled:
                        out.append((owner, cached, event))  # its bytecode ran, not it
                elif claimed.startswith("/"):
                    out.append((owner, claimed, event))
            elif event.name == "import":
                origin, cached, _loader = log.modules.get(event.args[0], (None, None, ""))
                if origin and origin.startswith("/"):
                    out.append((owner, origin, event))
                    if origin.endswith(".py") and cached and origin not in compiled:
                        out.append((owner, cached, event))  # its bytecode ran, not it
                elif cached and cached.startswith("/"):
                    out.append((owner, cached, event))
        return out

    def judge(self, log: Log, unattributed: List[Event]) -> Tuple[List[Disagreement],
                                                                  Dict[str, Set[str]]]:
        """The disagreements of one batch, and which classes each case's events had."""
        out: List[Disagreement] = []
        acted: Dict[str, Set[str]] = {}
        v = self.verdicts
        command = own_command(log)
        # Planted startup files that ran code, and the startup files that started them.
        ran: Dict[str, Set[str]] = {}
        for event in log.events:
            if event.name != "exec":
                continue
            path = str(event.args[0])
            if path in self.planted.startup:  # sitecustomize, usercustomize
                ran.setdefault(path, set())
                continue
            first = next((f for f in event.stack if f[0] != "I" and not (
                f[0] == "F" and self.is_stdlib(f[1]))), None)
            if first is None or first[0] != "S" or first[2] not in self.planted.startup:
                continue  # not a line, nor an entry point's module (pkgutil imports it)
            outer = [f[2] for f in event.stack if f[0] == "S" and f[2] and f[2] != first[2]]
            ran.setdefault(first[2], set()).update(outer)
        covered = {path for path, starters in ran.items()
                   if not v.listed(path) and any(v.excused(x) for x in starters)}
        for event in log.events:
            kind = self.classify(event)
            if kind is None or event.seq in command:
                continue
            owner, how = self.owner_of(event)
            if owner is None:
                if not how.startswith("not planted"):
                    unattributed.append(event)
                continue
            case = self.planted.case_of(owner)
            if case is None:
                continue
            acted.setdefault(case.id, set()).add(kind)
            if owner in covered:
                continue  # started by a file whose high verdict makes no completeness claim
            verdict = v.severity(owner)
            if rank(verdict) < rank(NEEDS[kind]):
                out.append(Disagreement(kind, case, owner, verdict, event.describe(),
                                        "%s; %s; %s" % (how, v.kinds(owner) or "no finding",
                                                        frames_text(event.stack))))
        reported: Set[Tuple[str, str]] = set()
        for owner, path, event in self.ran_files(log):
            if self.is_stdlib(path) or path in self.recorder or path == owner or \
                    (owner, path) in reported:
                continue
            reported.add((owner, path))
            case = self.planted.case_of(owner)
            if case is None:
                continue
            acted.setdefault(case.id, set()).add("ran-file")
            if os.path.normpath(path) in v.module_files(owner) or v.excused(owner) or \
                    owner in covered:
                continue
            out.append(Disagreement("unlisted-file", case, owner, v.severity(owner),
                                    "code ran from %s" % path,
                                    "%s; listed: %s" % (event.describe(), sorted(
                                        v.module_files(owner)) or "nothing")))
        for path, starters in sorted(ran.items()):
            case = self.planted.case_of(path)
            if case is None or v.listed(path):
                continue
            if any(v.excused(s) for s in starters):
                continue
            out.append(Disagreement("unlisted-startup-file", case, path, None,
                                    "%s ran code" % path,
                                    "started by %s" % (sorted(starters) or "site")))
        return out, acted


def own_command(log: Log) -> Set[int]:
    """The events of the start's own ``-c pass`` (its ``compile`` and ``exec``, with no
    Python frame, in the thread that announced it): not a case's."""
    out: Set[int] = set()
    run = next((e for e in log.events if e.name == "cpython.run_command"), None)
    if run is None:
        return out
    source = str(run.args[0]) if run.args else ""
    for event in log.events:
        if event.seq <= run.seq or event.thread != run.thread or event.stack:
            continue
        if event.name == "compile" and not out and event.args and (
                event.args[0] in (source, source.encode())):
            out.add(event.seq)
        elif event.name == "exec" and len(out) == 1 and event.args[0] == "<string>":
            out.add(event.seq)
            break
    return out


# ---------------------------------------------------------------------------- running


#: Seconds a start may take (a case that hangs is an oracle problem, reported).
START_TIMEOUT = 60


def _start(target: Any, env: Dict[str, str], log_path: str) -> Tuple[Log, int, str]:
    """Start the target once (``-c pass``, stdin closed) and read the recorder's log."""
    if os.path.exists(log_path):
        os.unlink(log_path)
    try:
        proc = target.python("-c", "pass", env=env, timeout=START_TIMEOUT)
        status, stderr = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        status = -1
        stderr = "timed out after %d s: %s" % (START_TIMEOUT, _text(exc.stderr)[-2000:])
    text = Path(log_path).read_text(encoding="utf-8", errors="replace") \
        if os.path.exists(log_path) else ""
    log = read_log(text)
    if not text:
        log.errors.append("no log at %s (the recorder did not run?); stderr: %s"
                          % (log_path, stderr[-2000:]))
    if status == -1:
        last = log.events[-1] if log.events else None
        log.errors.append("the start %s; last event: %s" % (
            stderr, (last.describe() + " " + frames_text(last.stack)) if last else "none"))
    return log, status, stderr


def _text(data: Any) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def _signature(event: Event) -> Tuple[str, str]:
    return (event.name, repr(event.args))


def bisect(target: Any, planted: Planted, env: Dict[str, str], events: List[Event],
           log_path: str) -> Dict[Tuple[str, str], str]:
    """Which case makes each event: the batch's cases started in halves, each case
    alone at the end (``signature -> case id``; an event no single case makes is left
    out)."""
    wanted = {_signature(e) for e in events}
    found: Dict[Tuple[str, str], str] = {}
    hangs: List[List[str]] = []

    def seen(cids: Sequence[str]) -> Set[Tuple[str, str]]:
        enable_only(planted, cids)
        log, status, _stderr = _start(target, env, log_path)
        if status == -1:
            hangs.append(sorted(cids))
        return {_signature(e) for e in log.events} & wanted

    def search(cids: List[str], sigs: Set[Tuple[str, str]]) -> None:
        if len(cids) == 1:
            for sig in seen(cids) & sigs:
                found.setdefault(sig, cids[0])
            return
        half = len(cids) // 2
        for part in (cids[:half], cids[half:]):
            present = seen(part) & sigs
            if present:
                search(part, present)

    try:
        wanted -= seen([])  # what the start does without any case
        if wanted:
            search(sorted(planted.cases), wanted)
    finally:
        enable_only(planted, planted.cases)
    if hangs:
        found[("hang", "")] = "; ".join(",".join(h) for h in hangs[:3])
    return found


def _check(target: Any, env: Dict[str, str]) -> Any:
    """``sitewarden check --python T --json``, where the target's files are."""
    return target.cli("check", "--python", target.executable, "--json", env=env)


def check_failures(target: Any, planted: Planted, env: Dict[str, str]) -> Dict[str, str]:
    """The cases on which ``check`` fails (exit 2), each with its error: the batch's
    cases checked in halves, each alone at the end."""
    found: Dict[str, str] = {}

    def fails(cids: Sequence[str]) -> Optional[str]:
        enable_only(planted, cids)
        proc = _check(target, env)
        if proc.returncode in (0, 1):
            return None
        return (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1][-600:]

    def search(cids: List[str]) -> None:
        if len(cids) == 1:
            error = fails(cids)
            if error is not None:
                found[cids[0]] = error
            return
        half = len(cids) // 2
        for part in (cids[:half], cids[half:]):
            if fails(part) is not None:
                search(part)

    try:
        search(sorted(planted.cases))
    finally:
        enable_only(planted, planted.cases)
    return found


def judge_batch(target: Any, batch: Batch, report: Dict[str, Any]
                ) -> Tuple[List[Disagreement], Dict[str, Set[str]], List[str], List[Case]]:
    """The batch's log against ``report`` (check's, or a made-up one): the disagreements,
    the event classes of each case, the oracle's problems (a control that acted, an
    event no case is found to make), the payload cases that did nothing.  Runs nothing:
    unattributed events are looked up in ``batch.makers`` (the bisection's)."""
    planted = batch.planted
    verdicts = Verdicts(report)
    judge = Judge(target, planted, verdicts)
    unattributed: List[Event] = []
    found, acted = judge.judge(batch.log, unattributed)
    problems: List[str] = []
    for event in unattributed:
        cid = batch.makers.get(_signature(event))
        if cid is None or cid not in planted.cases:
            problems.append("%s: an event no single case makes: %s (%s)" % (
                batch.name, event.describe(), frames_text(event.stack)))
            continue
        case = planted.cases[cid]
        owner = planted.entry(case)
        kind = judge.classify(event) or "?"
        acted.setdefault(cid, set()).add(kind)
        verdict = verdicts.severity(owner)
        if kind in NEEDS and rank(verdict) < rank(NEEDS[kind]):
            found.append(Disagreement(kind, case, owner, verdict, event.describe(),
                                      "bisection; %s" % (verdicts.kinds(owner) or "no finding")))
    inert = []
    for case in batch.cases:
        events = acted.get(case.id, set())
        if case.kind == "control":
            if events - {"ran-file"}:
                problems.append("%s: control %s acted: %s" % (batch.name, case.id,
                                                             sorted(events)))
            entry = planted.entry(case)
            verdict = verdicts.severity(entry)
            if rank(verdict) > rank(case.expected):
                found.append(Disagreement("control-too-severe", case, entry, verdict,
                                          "expected at most %s" % case.expected,
                                          verdicts.kinds(entry)))
        elif not events - {"ran-file"}:
            inert.append(case)
    return found, acted, problems, inert


def perfect_report(batch: Batch) -> Dict[str, Any]:
    """What an audit that is never wrong could say of the batch: every planted startup
    file listed, each with every file of its case among its ``module_files``, a
    payload's ``high`` and a control's its expected severity."""
    planted = batch.planted
    files, findings = [], []
    for path, cid in sorted(planted.startup.items()):
        case = planted.cases.get(cid)
        if case is None:
            continue
        mine = sorted(p for p, c in planted.files.items() if c == cid)
        files.append({"path": path, "realpath": path, "lines": [], "module_files": mine})
        findings.append({"kind": "oracle-perfect", "file": path, "message": "",
                         "severity": "high" if case.kind == "payload" else case.expected})
    return {"startup": {"files": files}, "findings": findings}


def run_batch(target: Any, batch: Batch, outcome: Outcome, sitecustomize: str,
              self_check: bool = True) -> None:
    """Plant, check, start, judge one batch (the planted files are removed after); with
    ``self_check``, also judge :func:`perfect_report`, which must agree with the start:
    what it does not is the oracle's own problem (an event put on the wrong case)."""
    times = batch.seconds
    log_path = str(target.tmp) + "/oracle-%s.log" % batch.name
    t0 = time.monotonic()
    planted = batch.planted = plant(target, batch.cases, log_path, sitecustomize)
    times["plant"] = time.monotonic() - t0
    try:
        t0 = time.monotonic()
        proc = _check(target, batch.env)
        times["check"] = time.monotonic() - t0
        if proc.returncode not in (0, 1):
            t0 = time.monotonic()
            culprits = check_failures(target, planted, batch.env)
            times["check-bisect"] = time.monotonic() - t0
            for cid, error in sorted(culprits.items()):
                outcome.problems.append("%s: check fails (exit %d) on case %s (%s): %s" % (
                    batch.name, proc.returncode, cid, ", ".join(planted.cases[cid].operators),
                    error))
            if not culprits:
                outcome.problems.append("%s: check failed (%d): %s" % (
                    batch.name, proc.returncode, proc.stderr[-2000:]))
                return
            keep = [cid for cid in planted.cases if cid not in culprits]
            enable_only(planted, keep)
            batch.cases = [c for c in batch.cases if c.id not in culprits]
            planted.top = {cid: planted.top[cid] for cid in keep}  # the culprits stay off
            planted.cases = {cid: planted.cases[cid] for cid in keep}
            proc = _check(target, batch.env)
            if proc.returncode not in (0, 1):
                outcome.problems.append("%s: check still fails without %s: %s" % (
                    batch.name, sorted(culprits), proc.stderr[-2000:]))
                return
        batch.report = json.loads(proc.stdout)
        t0 = time.monotonic()
        batch.log, batch.start_status, batch.start_stderr = _start(target, batch.env, log_path)
        times["start"] = time.monotonic() - t0
        outcome.problems += ["%s: %s" % (batch.name, e) for e in batch.log.errors]
        attribute(batch.log, {p: p for p in planted.startup if p.endswith(".py")})
        unattributed: List[Event] = []
        Judge(target, planted, Verdicts(batch.report)).judge(batch.log, unattributed)
        if unattributed:
            t0 = time.monotonic()
            batch.makers = bisect(target, planted, batch.env, unattributed, log_path)
            times["bisect"] = time.monotonic() - t0
            if ("hang", "") in batch.makers:
                outcome.problems.append("%s: starts with these cases hung: %s" % (
                    batch.name, batch.makers.pop(("hang", ""))))
        found, _acted, problems, inert = judge_batch(target, batch, batch.report)
        outcome.disagreements += found
        outcome.problems += problems
        outcome.inert += inert
        if self_check:
            wrong, _acted, _problems, _inert = judge_batch(target, batch, perfect_report(batch))
            outcome.problems += ["%s: the oracle disagrees with a perfect audit: %s" % (
                batch.name, d.line()) for d in wrong]
    finally:
        t0 = time.monotonic()
        clean(target, planted)
        times["clean"] = time.monotonic() - t0


def run_oracle(target: Any, cases: Optional[List[Case]] = None, *, run_seed: Optional[int] = None,
               label: Optional[str] = None, size: int = BATCH) -> Outcome:
    """The oracle on ``target`` (a ``GuardedPython``, guard not deployed): its cases
    (default: :func:`harness.payloads.generate` for it), batched, planted, checked,
    started and compared."""
    from .payloads import seed as default_seed

    t0 = time.monotonic()
    canary = str(target.tmp) + "/oracle-canary"
    os.makedirs(canary, exist_ok=True)
    os.chmod(canary, 0o777)
    where = Where(str(target.local_dir), canary, tuple(target.version[:2]))
    run_seed = default_seed() if run_seed is None else run_seed
    if cases is None:
        cases = generate(where, run_seed)
    outcome = Outcome(label or target.id, run_seed, list(cases))
    sitecustomize = sitecustomize_path(target)
    for i, (env, members) in enumerate(batches(cases, size)):
        batch = Batch("b%d" % i, members, env)
        outcome.batches.append(batch)
        run_batch(target, batch, outcome, sitecustomize)
    outcome.seconds = time.monotonic() - t0
    shutil.rmtree(canary, ignore_errors=True)
    return outcome


__all__ = ["BATCH", "CLASSES", "Disagreement", "Outcome", "Verdicts", "batches", "run_oracle"]
