"""Target interpreters: resolve ``--python``, run probes in them, read their facts."""

from __future__ import annotations

import os
import select
import sys
import time

from ..probe import runner
from . import payload
from .jsontext import loads

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

    from .state import StartupState

PROBE_TIMEOUT = 120


class TargetError(Exception):
    """The target is not something sitewarden can work with (exit status 2)."""


class Target:
    """A CPython 3.8+ interpreter, described by the facts its probe printed."""

    def __init__(self, executable: str, facts: dict[str, Any]) -> None:
        self.executable = executable
        self.facts = facts

    def __repr__(self) -> str:
        return "Target(%r)" % (self.executable,)

    @property
    def version(self) -> tuple[int, int]:
        return tuple(self.facts["version"][:2])  # type: ignore[return-value]

    @property
    def label(self) -> str:
        return "%s (Python %s)" % (self.executable, self.facts["version_string"])

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["facts"][name]
        except KeyError:
            raise AttributeError(name) from None


def resolve_executable(python: str | None) -> str:
    """``--python`` as given (a path or a command name), or this interpreter."""
    if python is None:
        return sys.executable
    if os.sep not in python:
        import shutil  # a command name to look up on PATH, not a path

        found = shutil.which(python)
        if found is None:
            raise TargetError("%s: no such command on PATH" % python)
        return found
    path = os.path.abspath(python)
    if not os.path.exists(path):
        raise TargetError("%s: no such file" % python)
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise TargetError("%s: not an executable Python interpreter" % python)
    return path


class Spawned:
    """A process started by :func:`spawn_reporting`; :meth:`finish` reads its answer."""

    def __init__(self, pid: int, wait: Any, reads: list[int]) -> None:
        self.pid, self._wait, self.reads = pid, wait, reads
        self.deadline = time.monotonic() + PROBE_TIMEOUT

    def cancel(self) -> None:
        """Kill the process and reap it, its answer unread."""
        try:
            os.kill(self.pid, 9)
        except OSError:  # gone already
            pass
        for fd in self.reads:
            os.close(fd)
        self._wait()

    def finish(self) -> tuple[int, str, str, str]:
        """``(returncode, stdout, stderr, what came through the pipe)``; TimeoutError at
        the deadline (the process killed)."""
        reads = self.reads
        chunks: dict[int, list[bytes]] = {fd: [] for fd in reads}
        poller = select.poll()
        for fd in reads:
            poller.register(fd, select.POLLIN)
        open_fds = set(reads)
        try:
            while open_fds:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    os.kill(self.pid, 9)
                    raise TimeoutError()
                for fd, _event in poller.poll(left * 1000):
                    data = os.read(fd, 65536)
                    if data:
                        chunks[fd].append(data)
                    else:
                        poller.unregister(fd)
                        open_fds.discard(fd)
        finally:
            for fd in reads:
                os.close(fd)
            returncode = self._wait()
        out, err, report = [b"".join(chunks[fd]).decode("utf-8", "replace")
                            .replace("\r\n", "\n") for fd in reads]
        return returncode, out, err, report


def run_reporting(argv: list[str], env: dict[str, str] | None,
                  cwd: str | None = None) -> tuple[int, str, str, str]:
    """``(returncode, stdout, stderr, report)`` of ``argv`` (see :func:`spawn_reporting`)."""
    return spawn_reporting(argv, env, cwd).finish()


def spawn_reporting(argv: list[str], env: dict[str, str] | None,
                    cwd: str | None = None) -> Spawned:
    """``argv`` (an executable's path first) started, stdin from /dev/null, with a
    channel of its own for the answer: the write end of a pipe, passed to the
    process, its number appended to ``argv``.  Whatever the target's startup code
    prints on stdout or stderr stays out of the answer.  OSError if it cannot start.

    In this working directory with ``posix_spawn`` and ``poll`` instead of
    ``subprocess``, whose imports (threading, selectors, signal...) would cost every
    ``sitewarden check`` about a tenth of its time; in ``cwd`` with ``subprocess``
    (``posix_spawn`` cannot change directory: only the ``-E -S`` facts probe and the
    status asks)."""
    fds: list[int] = []
    try:
        for _ in range(3):
            fds.extend(os.pipe())
        out_w, err_w, rep_w = fds[1], fds[3], fds[5]
        argv = [*argv, str(rep_w)]
        env = os.environ if env is None else env
        if cwd is None:
            os.set_inheritable(rep_w, True)  # the child's only extra descriptor
            pid = os.posix_spawn(argv[0], argv, env, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)])

            def wait() -> int:
                status = os.waitpid(pid, 0)[1]
                return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        else:
            import subprocess  # posix_spawn cannot change directory (see above)

            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w,
                                    pass_fds=(rep_w,), env=env, cwd=cwd)
            pid, wait = proc.pid, proc.wait
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    for fd in fds[1::2]:  # the write ends: the child has its own
        os.close(fd)
    return Spawned(pid, wait, fds[0::2])


def last_line(text: str) -> str:
    """The last non-empty line of ``text``, stripped and cut to 200 characters; ''."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _how_it_ended(returncode: int) -> str:
    """``exit status 3``, ``signal 9 (SIGKILL)``."""
    if returncode >= 0:
        return "exit status %d" % returncode
    import signal  # only to name the signal that killed a target

    try:
        return "signal %d (%s)" % (-returncode, signal.Signals(-returncode).name)
    except ValueError:
        return "signal %d" % -returncode


def probe_failure(executable: str, returncode: int, stdout: str, stderr: str,
                  began: bool) -> str:
    """What happened to a probe that gave no report: ``began`` (its header came
    through), it failed inside; else the target ended before running it: its startup
    code (a ``.pth``, ``sitecustomize``) ended it, or it is not a CPython at all.  A
    CPython given ``-c`` runs it or fails with an error status (even a ``sys.exit(0)``
    at startup is a fatal error there): status 0 without the probe is another program."""
    err = last_line(stderr)
    how = "%s; %s" % (_how_it_ended(returncode),
                      "last line on stderr: " + err if err else "nothing on stderr")
    if began:
        return "%s: sitewarden's probe failed in it (%s)" % (executable, how)
    if returncode == 0:
        said = err or last_line(stdout)
        return "%s: not a CPython 3.8+ interpreter: it exited with status 0 without " \
            "running sitewarden's probe (%s)" % (executable, ("it printed: " + said) if said
                                                 else "no output")
    return "%s: exited before sitewarden's probe could run (%s); `%s -c pass` shows how " \
        "its startup fails" % (executable, how, executable)


def _run_payload(executable: str, kind: str, flags: list[str], env: dict[str, str] | None,
                 cwd: str | None = None) -> tuple[Any, str]:
    """``(report, the target's stderr)`` of the probe ``kind`` (see ``probe.main``),
    read from its own pipe (``probe.BOOTSTRAP``)."""
    return _payload_answer(executable, _start_payload(executable, kind, flags, env, cwd))


def _start_payload(executable: str, kind: str, flags: list[str], env: dict[str, str] | None,
                   cwd: str | None = None) -> Spawned:
    """The probe ``kind`` started in ``executable``: :func:`_payload_answer` reads it.
    ``static`` and ``status`` run ``probe.STATIC_BOOTSTRAP`` (give ``-I -S``), the others
    ``BOOTSTRAP``."""
    root = payload.payload_dir()
    bootstrap = runner.STATIC_BOOTSTRAP if kind in runner.STATIC_KINDS else runner.BOOTSTRAP
    argv = [executable, *flags, "-c", bootstrap, root, kind]
    try:
        return spawn_reporting(argv, env, cwd)
    except OSError as exc:
        raise TargetError("%s: cannot run it: %s" % (executable, exc.strerror or exc)) from None


def _payload_answer(executable: str, spawned: Spawned) -> tuple[Any, str]:
    """``(report, the target's stderr)`` of a probe :func:`_start_payload` started."""
    try:
        returncode, stdout, stderr, report = spawned.finish()
    except TimeoutError:
        raise TargetError("%s: no answer within %d s" % (executable, PROBE_TIMEOUT)) from None
    began = report.startswith(runner.REPORT_HEADER)
    try:
        data = loads(report[len(runner.REPORT_HEADER):]) if began else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise TargetError(probe_failure(executable, returncode, stdout, stderr, began))
    if data.get("unsupported"):
        raise TargetError(
            "%s is %s %s; sitewarden supports CPython 3.8 and newer"
            % (executable, data.get("implementation"), data.get("version"))
        )
    # A complete report stands, whatever the exit status (an atexit handler of the
    # target's own startup code may fail after the probe answered).
    return data, stderr


def probe_target(python: str | None = None) -> Target:
    """Run the facts probe (``-E -S``: no site, no environment) in the target."""
    executable = resolve_executable(python)
    # In "/": `-c` puts the working directory first on sys.path, and a sysconfig.py there
    # must not run in the target (as root under sudo).
    facts = _run_payload(executable, "facts", ["-E", "-S"], None, cwd=os.path.sep)[0]
    return Target(executable, facts)


class PendingCheck:
    """``check``'s probe of one target (``static``; ``status``: its startup section
    alone, for ``status``), started when made (the CLI goes on loading its own modules
    meanwhile); :meth:`result` waits for it.  The target starts isolated and without
    ``site`` (``-I -S``), in this working directory, this environment given as data
    (``probe.STATIC_BOOTSTRAP``): none of its startup code runs, nothing of
    ``PYTHONPATH``, the user site or the working directory is imported, and the probe
    reports what a normal start in this environment would do."""

    def __init__(self, python: str | None, kind: str = "static") -> None:
        self.executable = resolve_executable(python)
        self._spawned = _start_payload(self.executable, kind, ["-I", "-S"], dict(os.environ))

    def cancel(self) -> None:
        """Stop the probe (the command ends before reading it)."""
        self._spawned.cancel()

    def result(self) -> tuple[Target, dict[str, Any], StartupState]:
        """``(target, check report, startup status)``, the status as a normal start would
        load the guard (read from its startup files, never run: no ``stderr``)."""
        from .state import StartupState  # the records load while the probe runs

        executable = self.executable
        data, _stderr = _payload_answer(executable, self._spawned)
        try:
            startup = StartupState.from_json(data["startup"])
            startup.stderr = ""
            return Target(executable, data["facts"]), data["check"], startup
        except (KeyError, TypeError, AttributeError, ValueError):
            raise TargetError("%s: sitewarden's probe gave an incomplete report" % (
                executable,)) from None


def startup_status(target: Target, env: dict[str, str] | None = None) -> StartupState:
    """Start the target normally and report whether the guard got loaded (``stderr``:
    what that start wrote there; ``error``: why there is no answer).  That start runs
    every startup file of the target: ``status --live`` only."""
    from .state import StartupState  # not before a check's probe is started (PendingCheck)

    env = dict(os.environ if env is None else env)
    env.pop("SITEWARDEN_DISABLE", None)
    try:
        code, _stdout, stderr, report = run_reporting(
            [target.executable, "-c", runner.STATUS_SCRIPT], env, cwd=os.path.sep)
    except OSError as exc:  # TimeoutError is an OSError
        return StartupState.make(active=False, error=str(exc), stderr="")
    try:
        data = loads(report)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return StartupState.make(active=False, stderr=stderr, error="a plain start gave no "
                                 "answer (%s): %s" % (_how_it_ended(code),
                                                      last_line(stderr) or "nothing on stderr"))
    startup = StartupState.from_json(data)
    startup.stderr = stderr
    return startup


def base_interpreter_hint() -> str | None:
    """The base interpreter of the virtual environment this CLI runs in."""
    candidate = getattr(sys, "_base_executable", None)
    if (
        candidate
        and os.path.realpath(candidate) != os.path.realpath(sys.executable)
        and os.path.exists(candidate)
    ):
        return candidate
    try:
        with open(os.path.join(sys.prefix, "pyvenv.cfg")) as f:
            lines = f.read().splitlines()
        for line in lines:
            key, _, value = line.partition("=")
            if key.strip() == "home":
                exe = os.path.join(value.strip(), "python%d.%d" % sys.version_info[:2])
                if os.path.exists(exe):
                    return exe
    except OSError:
        pass
    return None


#: Where ``--all`` looks for interpreters.
INTERPRETER_DIRS = ("/usr/bin", "/usr/local/bin")


def _interpreter_name(name: str) -> tuple[int, ...] | None:
    """``python3`` -> (3,), ``python3.11`` -> (3, 11); None for anything else
    (``python3.11-config``, ``python3-dbg``, ``python3.11d``)."""
    if not name.startswith("python3"):
        return None
    rest = name[len("python3"):]
    if rest == "":
        return (3,)
    if rest[:1] == "." and rest[1:].isdigit() and rest[1:].isascii():
        return (3, int(rest[1:]))
    return None


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _hops(path: str) -> list[str]:
    """``path`` and every path its symbolic links lead to, the last one not a link (at
    most 40 links, as the kernel follows)."""
    out = [os.path.abspath(path)]
    for _ in range(40):
        try:
            link = os.readlink(out[-1])
        except OSError:  # not a link (or gone): the end of the chain
            break
        out.append(os.path.normpath(os.path.join(os.path.dirname(out[-1]), link)))
    return out


def _directories(paths: list[str]) -> list[str]:
    """Every directory above each of ``paths``, as written and resolved, once."""
    out: list[str] = []
    for path in paths:
        for start in (os.path.dirname(path), os.path.realpath(os.path.dirname(path))):
            d = start
            while d not in out:
                out.append(d)
                parent = os.path.dirname(d)
                if parent == d:
                    break
                d = parent
    return out


def untrusted(path: str) -> str | None:
    """Why a user other than root may change what running ``path`` runs, or None: the
    file it leads to (its links followed) not owned by root or writable by group or
    others, or a directory on the way (above the path, each link, the file; as written
    and resolved) owned by another user or writable by group or others.  Such a
    binary is never run by ``--all``: any root program that runs it is that user's."""
    hops = _hops(path)
    real = os.path.realpath(path)
    for d in [real] + _directories(hops + [real]):
        why = _not_roots(d, "%s" if d == real else "the directory %s")
        if why:
            return why
    return None


def _not_roots(path, what):
    """Why ``path`` (``what``: how to name it) is not root's alone, or None."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return "%s cannot be examined (%s)" % (path, exc.strerror or exc)
    if st.st_uid != 0:
        return "%s is owned by uid %d, not root" % (what % path, st.st_uid)
    if st.st_mode & 0o022:
        return "%s is writable by %s" % (what % path, _who(st.st_mode))
    return None


def _who(mode: int) -> str:
    return "others" if mode & 0o002 else "its group"


def machine_interpreters(dirs: tuple[str, ...] = INTERPRETER_DIRS) -> list[tuple[str, list[str]]]:
    """Every real python3 interpreter in ``dirs`` (an executable ELF file, not a script
    or a ``-config`` helper), once per real path: ``[(path, [other names])]``, the
    versioned name first (``/usr/bin/python3.11``, aliases ``["/usr/bin/python3"]``).
    Nothing is run: :func:`untrusted` says which of them ``--all`` must not run."""
    found: dict[str, tuple[str, list[str]]] = {}
    order: list[str] = []
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        ranked = sorted((v, n) for n in names for v in [_interpreter_name(n)] if v)
        for _version, name in sorted(ranked, key=lambda vn: (-len(vn[0]), vn[0])):
            path = os.path.join(d, name)
            real = os.path.realpath(path)
            if real in found:
                found[real][1].append(path)
                continue
            if not os.path.isfile(real) or not os.access(real, os.X_OK) or not _is_elf(real):
                continue
            found[real] = (path, [])
            order.append(real)
    return [found[r] for r in order]

def venv_of(target: Target) -> str | None:
    """The virtual environment ``target`` belongs to, or None.

    The facts probe runs with ``-S``, and ``site`` is what sets ``sys.prefix`` from
    ``pyvenv.cfg``: so the executable's own location decides (PEP 405: a
    ``pyvenv.cfg`` beside it or one directory up), as it is given, not resolved
    (a venv's python is a link to its base)."""
    bindir = os.path.dirname(os.path.abspath(target.executable))
    for d in (bindir, os.path.dirname(bindir)):
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
            return d
    if target.facts.get("virtualenv"):  # an old virtualenv's (real_prefix): no pyvenv.cfg
        return str(target.facts.get("prefix"))
    return None


def venv_base(venv: str) -> str | None:
    """The base interpreter a venv was made from, from its ``pyvenv.cfg``: the
    command that created it (3.11+), else ``executable``, else ``home``'s python."""
    values = {}
    for d in (venv, os.path.dirname(venv)):
        try:
            with open(os.path.join(d, "pyvenv.cfg"), encoding="utf-8") as f:
                for line in f:
                    key, sep, value = line.partition("=")
                    if sep:
                        values[key.strip().lower()] = value.strip()
            break
        except OSError:
            continue
    command = values.get("command", "").split()
    candidates = [command[0] if command else None, values.get("executable")]
    home, version = values.get("home"), values.get("version", values.get("version_info", ""))
    if home:
        short = ".".join(version.split(".")[:2])
        candidates += [os.path.join(home, "python" + short) if short else None,
                       os.path.join(home, "python3")]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
