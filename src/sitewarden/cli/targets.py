"""Target interpreters: resolve ``--python``, run probes in them, read their facts."""

from __future__ import annotations

import os
import select
import sys
import time

from ..detect import probe
from . import payload
from .jsontext import loads

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

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


def run_captured(argv: list[str], env: dict[str, str] | None,
                 cwd: str | None = None) -> tuple[int, str, str]:
    """``(returncode, stdout, stderr)`` of ``argv`` (an executable's path first), stdin
    from /dev/null; TimeoutError after PROBE_TIMEOUT seconds (the process killed),
    another OSError if it cannot be started."""
    if cwd is None:
        return _spawn_captured(argv, env)
    import subprocess  # posix_spawn cannot change directory; `check` never asks to

    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                              env=env, stdin=subprocess.DEVNULL, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise TimeoutError() from None
    return proc.returncode, proc.stdout, proc.stderr


def _spawn_captured(argv: list[str], env: dict[str, str] | None) -> tuple[int, str, str]:
    """:func:`run_captured` in this working directory, with ``posix_spawn`` and ``poll``
    instead of ``subprocess``, whose imports (threading, selectors, signal...) would
    cost every ``sitewarden check`` about a tenth of its time."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawn(argv[0], argv, os.environ if env is None else env, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)])
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    deadline, open_fds = time.monotonic() + PROBE_TIMEOUT, set(chunks)
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, 9)
                raise TimeoutError()
            for fd, _event in poller.poll(left * 1000):
                data = os.read(fd, 65536)
                if data:
                    chunks[fd].append(data)
                else:
                    poller.unregister(fd)
                    open_fds.discard(fd)
    finally:
        os.close(out_r)
        os.close(err_r)
        status = os.waitpid(pid, 0)[1]
    out, err = (b"".join(chunks[fd]).decode("utf-8", "replace").replace("\r\n", "\n")
                for fd in (out_r, err_r))
    return (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)), out, err


def _run_payload(executable: str, kind: str, flags: list[str], env: dict[str, str] | None,
                 cwd: str | None = None) -> Any:
    root = payload.payload_dir()
    argv = [executable, *flags, "-c", probe.BOOTSTRAP, root, kind]
    try:
        returncode, stdout, stderr = run_captured(argv, env, cwd)
    except TimeoutError:
        raise TargetError("%s: no answer within %d s" % (executable, PROBE_TIMEOUT)) from None
    except OSError as exc:
        raise TargetError("%s: cannot run it: %s" % (executable, exc.strerror or exc)) from None
    try:
        data = loads(stdout)
    except ValueError:
        detail = (stderr.strip().splitlines() or ["no output"])[-1]
        raise TargetError(
            "%s: not a CPython 3.8+ interpreter (%s)" % (executable, detail[:200])
        ) from None
    if isinstance(data, dict) and data.get("unsupported"):
        raise TargetError(
            "%s is %s %s; sitewarden supports CPython 3.8 and newer"
            % (executable, data.get("implementation"), data.get("version"))
        )
    if returncode != 0:
        raise TargetError("%s: probe failed: %s" % (executable, stderr.strip()[-300:]))
    return data


def probe_target(python: str | None = None) -> Target:
    """Run the facts probe (``-E -S``: no site, no environment) in the target."""
    executable = resolve_executable(python)
    # In "/": `-c` puts the working directory first on sys.path, and a sysconfig.py there
    # must not run in the target (as root under sudo).
    facts = _run_payload(executable, "facts", ["-E", "-S"], None, cwd=os.path.sep)
    return Target(executable, facts)


def run_check(target: Target) -> dict[str, Any]:
    """Run the full check inside the target as a normal process would start,
    in this environment and working directory, with the guard itself disabled."""
    env = dict(os.environ)
    env["SITEWARDEN_DISABLE"] = "1"
    return _run_payload(target.executable, "check", [], env)


def check_target(python: str | None) -> tuple[Target, dict[str, Any], dict[str, Any]]:
    """``(target, check report, startup status)`` from one normal start of the target
    (probe ``full``).  When that start fails (a broken guard, a broken ``.pth``), the
    three separate probes take over: facts with ``-E -S``, the check with the guard
    disabled, and a plain start for the status (which then carries its stderr)."""
    executable = resolve_executable(python)
    env = dict(os.environ)
    env.pop("SITEWARDEN_DISABLE", None)  # the status is whether a start loads the guard
    try:
        data = _run_payload(executable, "full", [], env)
        return Target(executable, data["facts"]), data["check"], data["startup"]
    except (TargetError, KeyError, TypeError):
        target = probe_target(executable)
        return target, run_check(target), startup_status(target)


def startup_status(target: Target, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start the target normally and report whether the guard got loaded."""
    env = dict(os.environ if env is None else env)
    env.pop("SITEWARDEN_DISABLE", None)
    try:
        _code, stdout, stderr = run_captured([target.executable, "-c", probe.STATUS_SCRIPT],
                                             env, cwd=os.path.sep)
        data = loads(stdout)
    except (OSError, ValueError) as exc:  # TimeoutError is an OSError
        return {"active": False, "error": str(exc), "stderr": ""}
    data["stderr"] = stderr
    return data


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


def machine_interpreters(dirs: tuple[str, ...] = INTERPRETER_DIRS) -> list[tuple[str, list[str]]]:
    """Every real python3 interpreter in ``dirs`` (an executable ELF file, not a script
    or a ``-config`` helper), once per real path: ``[(path, [other names])]``, the
    versioned name first (``/usr/bin/python3.11``, aliases ``["/usr/bin/python3"]``)."""
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

    The probe runs with ``-S``, and before 3.11 ``site`` is what reads
    ``pyvenv.cfg``: so the executable's own location decides (PEP 405: a
    ``pyvenv.cfg`` beside it or one directory up), as it is given, not resolved
    (a venv's python is a link to its base)."""
    if target.facts.get("virtualenv"):
        return str(target.facts.get("prefix"))
    bindir = os.path.dirname(os.path.abspath(target.executable))
    for d in (bindir, os.path.dirname(bindir)):
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
            return d
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
