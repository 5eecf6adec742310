"""The CLI of this checkout, run as a real subprocess: one argv, one runner.

Every test that runs the CLI on the host goes through :func:`run_cli` (the
``cli`` fixture) or, for a guarded interpreter, ``GuardedPython.cli`` (which
runs :data:`CLI` where the interpreter's files are: the host, or inside a
namespace with that namespace's own argv, ``MountNamespace.cli``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Mapping, Optional, Sequence

#: argv prefix of the CLI of this checkout on the host (``python -m sitewarden``).
CLI: List[str] = [sys.executable, "-m", "sitewarden"]


def run_cli(*args: str, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
            user: Optional[int] = None, inherit: bool = True, argv: Sequence[str] = CLI,
            **kwargs) -> subprocess.CompletedProcess:
    """Run the CLI with ``args``: text mode, output captured, stdin closed.

    ``inherit``: the environment is this process's without ``SITEWARDEN_DISABLE``,
    plus ``env``; else exactly ``env`` (a guarded interpreter's clean environment).
    ``user``: run as that uid/gid (``setpriv``).  ``argv``: another way to start the
    same CLI (a venv's python).  Other keywords go to ``subprocess.run``.
    """
    if inherit:
        full_env = dict(os.environ)
        full_env.pop("SITEWARDEN_DISABLE", None)
        full_env.update(env or {})
    else:
        full_env = dict(env or {})
    command = [*argv, *args]
    if user is not None:
        command = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups",
                   *command]
    options = dict(capture_output=True, text=True, env=full_env, cwd=cwd,
                   stdin=subprocess.DEVNULL, timeout=300)
    options.update(kwargs)
    return subprocess.run(command, **options)
