"""What the reliability tests tried, printed and optionally written for the README.

Every reliability test counts what it tried (inputs, starts, kills, files
lost) and calls :func:`record` once per property and interpreter.  The line
is printed (``pytest -s`` shows it); when ``SITEWARDEN_FIGURES`` names a file,
a JSON object is appended to it as one line::

    {"property": "startup: marker corruption", "interpreter": "3.12.1",
     "tried": 26, "failures": 0, ...}

Appends are single ``write`` calls on an ``O_APPEND`` descriptor under an
``flock``, so pytest-xdist workers can share the file.

``SITEWARDEN_STRESS=N`` multiplies the bounded iterations of the expensive
loops (kills, concurrent runs): :func:`stress`.
"""

from __future__ import annotations

import fcntl
import json
import os
from typing import Any, Union

ENV_FIGURES = "SITEWARDEN_FIGURES"
ENV_STRESS = "SITEWARDEN_STRESS"


def stress() -> int:
    """The iteration multiplier (``SITEWARDEN_STRESS``, default 1, never below 1)."""
    try:
        return max(1, int(os.environ.get(ENV_STRESS, "1") or 1))
    except ValueError:
        return 1


def interpreter_label(interp: Any) -> str:
    """``3.12.1`` for a pyenv CPython, ``debian 3.11.2`` for Debian's system python."""
    version = ".".join(map(str, getattr(interp, "version", ())[:3])) or str(interp)
    return ("debian " if getattr(interp, "is_debian_system", False) else "") + version


def record(prop: str, interpreter: Union[str, Any], tried: int, failures: int = 0,
           **extra: Any) -> dict:
    """Print one count line and append it to ``$SITEWARDEN_FIGURES`` (if set)."""
    label = interpreter if isinstance(interpreter, str) else interpreter_label(interpreter)
    entry = {"property": prop, "interpreter": label, "tried": int(tried),
             "failures": int(failures), **extra}
    details = "".join(", %s: %s" % (k.replace("_", " "), v) for k, v in extra.items())
    print("%s [%s]: %d tried, %d failures%s" % (prop, label, tried, failures, details))
    path = os.environ.get(ENV_FIGURES)
    if path:
        line = (json.dumps(entry, sort_keys=True) + "\n").encode("utf-8")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line)
        finally:
            os.close(fd)
    return entry
