"""The oracle's recorder: a PEP 578 audit hook planted as the first startup file of a
throwaway target, and the reading of what it logged.

:func:`recorder_files` gives the two files to plant in the target's first site directory:
``00oracle_recorder.pth`` (sorted before every ``oracle_*.pth``; on 3.15 its import line
runs before every other import line and every ``.start`` entry point) and the module it
imports, ``sitewarden_oracle_recorder.py``, which imports only ``os`` and ``sys`` (a case
may shadow any other name), opens the log before any payload runs and writes it with
``os.write`` (no audit event).  For each event it logs the Python stack, tagged:

* ``("S", function, startup file)``: a frame of ``site`` (the ``.pth`` or ``.start`` it
  is running, from the frame's locals: ``fullname`` in ``addpackage`` before 3.15 and in
  3.15's ``StartupState._exec_imports``, ``filename`` in its
  ``_execute_start_entrypoints``);
* ``("K", key, function)``: code that is not a file's (a ``.pth`` line, an ``exec``'d
  string), known by the ``exec``/``function.__new__`` event that ran it first (``key``:
  that event's number), with every code object nested in it;
* ``("P", file, function)``: code of a planted file (below the site directory's
  ``oracle_*`` names, or one of ``extra`` planted paths);
* ``("T", key)``: a thread started by the ``_thread.start_*`` event ``key``;
* ``("I", function)``: importlib's frozen bootstrap (a run of its frames: the first);
* ``("F", file, function)``: any other code (the standard library's...).

:func:`read_log` parses the log; :func:`attribute` finds the startup file each event
is the doing of (see there).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

#: The recorder's startup file: sorted before every ``oracle_*.pth`` and every name that
#: starts with a letter or ``_``.
RECORDER_PTH = "00oracle_recorder.pth"
RECORDER_MODULE = "sitewarden_oracle_recorder"

#: Events the recorder logs: ``open`` only with write flags (not importlib's bytecode
#: writes); of ``ctypes.*``, the library and symbol look-ups and calls (``ctypes.dlopen``,
#: ``ctypes.dlsym``, ``ctypes.dlsym/handle``, ``ctypes.call_function``), not the
#: buffer and data events every use of ``ctypes`` raises; ``marshal.loads`` and
#: ``code.__new__`` only outside importlib's loading of bytecode.
EVENTS = (
    "import", "exec", "compile", "open", "subprocess.Popen", "os.system", "os.exec",
    "os.posix_spawn", "os.fork", "os.forkpty", "os.spawn", "pty.spawn", "os.startfile",
    "socket.connect", "socket.sendto", "marshal.loads", "pickle.find_class",
    "code.__new__", "function.__new__", "_thread.start_new_thread",
    "_thread.start_joinable_thread", "cpython.run_command", "sys.addaudithook",
)

RECORDER_SOURCE = r'''"""sitewarden test oracle: records what this start does (PEP 578)."""
import os
import sys

LOG = %(log)r
PLANTED = %(planted)r
EXTRA = %(extra)r
EVENTS = frozenset(%(events)r)
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _install():
    fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    write, getframe, get_ident = os.write, sys._getframe, __import__("_thread").get_ident
    gc = __import__("gc")  # built in: no case can shadow it
    clock = __import__("time").monotonic  # built in too
    gc_enabled, gc_disable, gc_enable = gc.isenabled, gc.disable, gc.enable
    codes, threads, busy, keep = {}, {}, {}, []
    seq = [0]

    def register(code, key, depth=0):
        if id(code) in codes or depth > 50:
            return
        codes[id(code)] = key
        keep.append(code)
        for const in code.co_consts:
            if type(const) is type(code):
                register(const, key, depth + 1)

    def site_file(frame):
        try:
            local = frame.f_locals
        except Exception:
            return None
        for name in ("fullname", "filename"):  # addpackage; 3.15's StartupState
            value = local.get(name)
            if type(value) is str and value.startswith("/") and value.endswith(
                    (".pth", ".start")):
                return value
        return None

    def stack(frame):
        out = []
        while frame is not None:
            code = frame.f_code
            filename, name = code.co_filename, code.co_name
            key = codes.get(id(code))
            if key is not None:
                out.append(("K", key, name))
            elif filename.startswith(PLANTED) or filename in EXTRA:
                out.append(("P", filename, name))
            elif frame.f_globals.get("__name__") == "site":
                out.append(("S", name, site_file(frame)))
            elif filename.startswith("<frozen importlib"):
                if not out or out[-1][0] != "I":  # a run of importlib's frames: its first
                    out.append(("I", name))
            else:
                thread = None
                if name in ("_bootstrap_inner", "run", "_bootstrap") and threads:
                    try:
                        thread = threads.get(id(frame.f_locals.get("self")))
                    except Exception:
                        thread = None
                if thread is not None:
                    out.append(("T", thread))
                out.append(("F", filename, name))
            frame = frame.f_back
        return out

    def summary(event, args, caller):
        if event == "exec":
            code = args[0]
            origin = cached = None
            for _ in range(3):  # from exec's caller: importlib's exec_module?
                if caller is None:
                    break
                if caller.f_code.co_name == "exec_module" and \
                        caller.f_code.co_filename.startswith("<frozen importlib"):
                    spec = getattr(caller.f_locals.get("module"), "__spec__", None)
                    origin = getattr(spec, "origin", None)
                    cached = getattr(spec, "cached", None)
                    break
                caller = caller.f_back
            return (code.co_filename, code.co_name, origin if type(origin) is str else None,
                    cached if type(cached) is str else None)
        if event == "function.__new__":
            code = args[0]
            return (code.co_filename, code.co_name)
        if event == "compile":
            source, filename = args[0], args[1]
            if isinstance(source, (bytes, bytearray, str)):
                source = source[:20000]  # whole, to tell a literal of the code from data
            else:
                source = type(source).__name__
            return (source, filename)
        if event == "import":
            return (args[0],)
        if event == "code.__new__":
            return (args[1], args[2])
        if event == "marshal.loads":
            return (len(args[0]),)
        if event in ("_thread.start_new_thread", "_thread.start_joinable_thread"):
            return (repr(args[0])[:200],)
        out = []
        for arg in args:
            if isinstance(arg, (str, bytes, int, float, type(None))):
                out.append(arg if not isinstance(arg, (str, bytes)) else arg[:300])
            elif isinstance(arg, (list, tuple)):
                out.append(tuple(a if isinstance(a, (str, bytes, int, type(None))) else
                                 repr(a)[:100] for a in arg[:20]))
            else:
                out.append(repr(arg)[:200])
        return tuple(out)

    def hook(event, args):
        if event not in EVENTS and not event.startswith("ctypes."):
            return
        if event.startswith("ctypes.") and event not in (
                "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function"):
            return
        tid = get_ident()
        if busy.get(tid):
            return
        busy[tid] = True
        collecting = gc_enabled()
        if collecting:  # no collection (a payload's __del__) inside the hook
            gc_disable()
        try:
            if event == "open":
                caller = getframe(0).f_back
                if caller is not None and caller.f_code.co_filename.startswith(
                        "<frozen importlib"):
                    return  # importlib writing bytecode
                flags = args[2] if len(args) > 2 else 0
                mode = args[1] if len(args) > 1 else None
                if not ((type(flags) is int and flags & WRITE) or
                        (type(mode) is str and any(c in mode for c in "wax+"))):
                    return
                if args[0] == LOG:
                    return
            frame = getframe(0).f_back
            if event in ("marshal.loads", "code.__new__") and frame is not None and \
                    frame.f_code.co_filename.startswith("<frozen importlib"):
                return  # bytecode loaded by importlib (3.8 makes each code object so)
            seq[0] += 1
            key = seq[0]
            if event in ("exec", "function.__new__"):
                code = args[0]
                if not code.co_filename.startswith(("/", "<frozen ")):
                    register(code, key)
            elif event in ("_thread.start_new_thread", "_thread.start_joinable_thread"):
                target = getattr(args[0], "__self__", None)
                if target is not None:
                    threads[id(target)] = key
                    keep.append(target)
            record = (key, event, summary(event, args, frame), tid, stack(frame), clock())
            write(fd, (repr(record) + "\n").encode("utf-8", "backslashreplace"))
        except BaseException as exc:
            try:
                write(fd, (repr((0, "recorder-error", (repr(exc),), tid, [])) + "\n").encode())
            except BaseException:
                pass
        finally:
            busy[tid] = False
            if collecting:
                gc_enable()

    def modules():
        found = []
        for name, module in list(sys.modules.items()):
            spec = getattr(module, "__spec__", None)
            origin = getattr(spec, "origin", None)
            cached = getattr(spec, "cached", None)
            if type(origin) is str or type(cached) is str:
                found.append((name, origin if type(origin) is str else None,
                              cached if type(cached) is str else None,
                              type(getattr(spec, "loader", None)).__name__))
        write(fd, (repr((-1, "modules", tuple(found), get_ident(), [])) + "\n").encode(
            "utf-8", "backslashreplace"))

    __import__("atexit").register(modules)
    sys.addaudithook(hook)


_install()
'''


def recorder_files(log: str, planted_prefix: str, extra: Iterable[str] = ()) -> Dict[str, bytes]:
    """The recorder's ``.pth`` and module (names relative to the first site directory),
    logging to ``log``; code of files whose path starts with ``planted_prefix`` (the site
    directory's ``oracle_`` names) or is in ``extra`` is tagged as planted."""
    source = RECORDER_SOURCE % {"log": log, "planted": planted_prefix,
                                "extra": frozenset(extra), "events": EVENTS}
    return {RECORDER_PTH: ("import %s\n" % RECORDER_MODULE).encode(),
            RECORDER_MODULE + ".py": source.encode()}


Frame = Tuple[Any, ...]


@dataclass
class Event:
    """One logged event: ``seq`` (its number, the key of code it registered), ``name``,
    ``args`` (a summary; an ``exec``'s: the code's file and name, and when importlib runs a
    module, its spec's ``origin`` and ``cached``), the thread, the tagged stack (innermost
    first)."""

    seq: int
    name: str
    args: Tuple[Any, ...]
    thread: int
    stack: List[Frame]
    #: After :func:`attribute`: the startup file whose doing it is, and how that was found.
    owner: Optional[str] = None
    how: str = ""
    after_start: bool = False
    #: An ``exec`` of a string (or a function made of compiled code): the ``compile``
    #: event before it.
    paired: Optional[Event] = None
    time: float = 0.0  # time.monotonic() when it happened

    def describe(self) -> str:
        """One line: the event and its arguments."""
        return "%s%r" % (self.name, tuple(self.args))


@dataclass
class Log:
    """A parsed log: the events in order and the modules loaded at exit (``name ->
    (origin, cached, loader class)``)."""

    events: List[Event] = field(default_factory=list)
    modules: Dict[str, Tuple[Optional[str], Optional[str], str]] = field(default_factory=dict)
    errors: List[str] = field(default_factory=list)


def read_log(text: str) -> Log:
    """The log's records (a line that does not parse, e.g. cut by a killed process, is
    kept as an error)."""
    log = Log()
    for line in text.splitlines():
        try:
            seq, name, args, thread, stack, *when = ast.literal_eval(line)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            log.errors.append("unreadable log line: %s" % line[:200])
            continue
        if name == "modules":
            for mod, origin, cached, loader in args:
                log.modules[mod] = (origin, cached, loader)
        elif name == "recorder-error":
            log.errors.append("recorder: %s" % (args,))
        else:
            log.events.append(Event(seq, name, tuple(args), thread, list(stack),
                                    time=when[0] if when else 0.0))
    return log


def attribute(log: Log, startup_of_file: Dict[str, str]) -> None:
    """Set each event's ``owner``: the startup file whose code did it.

    Walking the stack from the innermost frame, the first frame that says: code a key
    names (the owner of the event that registered it), a planted file's code (the owner
    of the event that ran that file: a module's is its importer's; a planted startup file
    such as ``sitecustomize.py`` owns itself, ``startup_of_file``), a thread (its
    starter's owner) or a ``site`` frame reading a startup file (that file).  An ``exec``
    of a string found on no such frame is its ``compile``'s (the event before it in its
    thread, same stack, same file name), which may carry the case's token.  Events before
    ``cpython.run_command`` are marked as the start's (``after_start`` False)."""
    keys: Dict[int, Optional[str]] = {}
    files: Dict[str, Optional[str]] = dict(startup_of_file)
    started = False
    compiled: Dict[int, Event] = {}  # per thread: its last compile
    for event in log.events:
        if event.name == "cpython.run_command":
            started = True
        event.after_start = started
        owner, how = None, ""
        for frame in event.stack:
            tag = frame[0]
            if tag == "K" and keys.get(frame[1]):
                owner, how = keys[frame[1]], "code of event %d" % frame[1]
            elif tag == "P" and files.get(frame[1]):
                owner, how = files[frame[1]], "code of %s" % frame[1]
            elif tag == "T" and keys.get(frame[1]):
                owner, how = keys[frame[1]], "thread of event %d" % frame[1]
            elif tag == "S" and frame[2]:
                owner, how = frame[2], "site reading it"
            if owner:
                break
        last = compiled.get(event.thread)
        if event.name in ("exec", "function.__new__") and last is not None and \
                last.stack == event.stack and last.args[1:2] == event.args[:1]:
            event.paired = last
            if owner is None and last.owner:
                owner, how = last.owner, "%s (as its compile, event %d)" % (last.how, last.seq)
        if event.name == "compile":
            compiled[event.thread] = event
        event.owner, event.how = owner, how
        if event.name in ("exec", "function.__new__", "_thread.start_new_thread",
                          "_thread.start_joinable_thread"):
            keys[event.seq] = owner
        if event.name == "exec" and event.args and str(event.args[0]).startswith("/"):
            files.setdefault(event.args[0], owner)


def innermost(event: Event, skip_importlib: bool = False) -> Optional[Frame]:
    """The event's innermost frame (past importlib's when ``skip_importlib``)."""
    for frame in event.stack:
        if skip_importlib and frame[0] == "I":
            continue
        return frame
    return None


def frames_text(stack: Sequence[Frame], limit: int = 8) -> str:
    """A stack, innermost first, as short text."""
    parts = []
    for frame in stack[:limit]:
        if frame[0] in ("P", "F"):
            parts.append("%s:%s" % (frame[1].rsplit("/", 1)[-1], frame[2]))
        elif frame[0] == "S":
            parts.append("site.%s(%s)" % (frame[1], (frame[2] or "?").rsplit("/", 1)[-1]))
        elif frame[0] == "K":
            parts.append("<code %d>:%s" % (frame[1], frame[2]))
        elif frame[0] == "T":
            parts.append("<thread %d>" % frame[1])
        else:
            parts.append("importlib.%s" % frame[1])
    return " < ".join(parts) + (" < ..." if len(stack) > limit else "")
