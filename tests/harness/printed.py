"""A printed command run exactly as printed: as an administrator's script runs it.

Every fix sitewarden prints (``check``'s text and JSON, the install report, the runtime
warning, the apt hook) is taken as the text it is and run with ``sh -c``, where the
target's files are, with no terminal (a new session: no controlling tty) and stdin
closed (``/dev/null``), as Ansible or ssh without a terminal run it: a command that would
ask fails there instead of waiting.  ``pip``'s own ``PIP_NO_INPUT`` (the harness sets it
for every run) is removed, so a prompt is not answered for it either.

``sitewarden`` on ``PATH`` is this checkout's CLI where the target is (a two-line shell
script in the target's staging directory, :func:`shim_dir`), unless the target has its
own (the Debian package's ``/usr/bin/sitewarden``: ``shim=False``).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Mapping, Optional, Union

from .debian_ns import MountNamespace
from .guarded import GuardedPython, NamespaceGuarded

#: Variables of the harness's clean environment that would answer for a prompt.
ANSWERING = ("PIP_NO_INPUT",)


#: Writes ``sitewarden`` (stdin) where the target's files are, as root.
_SHIM = ("import os, sys; d = os.path.dirname(sys.argv[1]); os.makedirs(d, exist_ok=True); "
         "open(sys.argv[1], 'w').write(sys.stdin.read()); os.chmod(sys.argv[1], 0o755); "
         "os.chmod(d, 0o755)")


def shim_dir(target: Union[GuardedPython, MountNamespace]) -> Path:
    """A directory holding ``sitewarden``: this checkout's CLI, as the target runs it,
    written where the target's files are (a namespace's own temporary directory is a
    tmpfs only the namespace sees)."""
    directory = target.tmp / "printed-bin"
    if getattr(target, "_printed_shim", None) != directory:
        argv = target.cli if isinstance(target, MountNamespace) else target.cli_argv
        script = ("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(
            shlex.quote(str(a)) for a in argv)).encode()
        path = str(directory / "sitewarden")
        proc = (target.run_helper(_SHIM, path, data=script)
                if isinstance(target, MountNamespace) else target.root(_SHIM, path, data=script))
        assert proc.returncode == 0, proc.stderr
        target._printed_shim = directory  # type: ignore[union-attr]
    return directory


def runs_as_printed(target: Union[GuardedPython, MountNamespace], command: str,
                    env: Optional[Mapping[str, str]] = None, shim: bool = True,
                    timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``command`` (one line of text, as printed) with ``sh -c`` where ``target``'s
    files are (an interpreter under test, or a namespace over a root): stdin closed, no
    terminal, text output captured; ``env`` added to the target's clean environment
    (less :data:`ANSWERING`)."""
    full = target.env(env)
    for name in ANSWERING:
        full.pop(name, None)
    if shim:
        full["PATH"] = "%s:%s" % (shim_dir(target), full.get("PATH", "/usr/bin:/bin"))
    argv = ["sh", "-c", command]
    if isinstance(target, NamespaceGuarded):
        argv = target.ns._enter(argv, "/")
    elif isinstance(target, MountNamespace):
        argv = target._enter(argv, "/")
    return subprocess.run(argv, env=full, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout, start_new_session=True, cwd="/")
