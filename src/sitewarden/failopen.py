"""Fail open, never silently: the one way a guarded process swallows a failure.

A warning must never break a program, so the code that runs inside a guarded
interpreter catches what goes wrong and goes on without the warning.  Every
such handler calls :func:`swallowed` from its ``except`` block, saying what was
skipped; whoever asks learns what failed:

- ``SITEWARDEN_DEBUG`` unset, empty or false (``0``, ``no``...): nothing, as before;
- ``SITEWARDEN_DEBUG=1`` (any other value), or ``python -v``: one line on stderr
  per place per process: where (module and function), the exception, and what
  was skipped;
- ``SITEWARDEN_DEBUG=raise``: the failure propagates (the test suite's strict
  mode: a swallowed failure fails the test).

Blocks never come here: they fail closed.  Runtime module, imported only when
a failure is being swallowed: nothing at startup, nothing per import.
"""

import os
import sys

ENV = "SITEWARDEN_DEBUG"
#: Values of SITEWARDEN_DEBUG that leave it off (pip's strtobool false words).
FALSE_VALUES = ("", "0", "n", "no", "f", "false", "off")
#: The value that makes every swallowed failure propagate.
STRICT = "raise"

_told = set()  # (file, line) of the handlers already reported in this process


def mode(environ=None):
    """``None`` (silent), ``"print"`` or ``"raise"``, from SITEWARDEN_DEBUG and ``-v``."""
    value = str((os.environ if environ is None else environ).get(ENV, "")).strip().lower()
    if value == STRICT:
        return STRICT
    if value not in FALSE_VALUES:
        return "print"
    if environ is None and getattr(sys.flags, "verbose", 0):
        return "print"
    return None


def swallowed(skipped, depth=1):
    """Report the exception being handled, once per handler, then return (or, in
    strict mode, re-raise it).  ``skipped`` names what the program goes without
    ("no shadow warning for 'six'"); ``depth`` 1 is the caller's handler."""
    how = mode()
    if how is None:
        return
    if how == STRICT:
        raise  # noqa: PLE0704 - called from an except block: re-raises what it handles
    exc = sys.exc_info()[1]
    try:
        frame = sys._getframe(depth)
        key = (frame.f_code.co_filename, frame.f_lineno)
        where = "%s.%s" % (frame.f_globals.get("__name__", "?"), frame.f_code.co_name)
    except (AttributeError, ValueError):
        key = where = "?"
    if key in _told:
        return
    _told.add(key)
    sys.stderr.write("sitewarden: debug: %s failed (%s); skipped: %s\n"
                     % (where, describe(exc), skipped))


def tell(what):
    """Say ``what`` on stderr once per process when ``SITEWARDEN_DEBUG=1`` asks: why
    something the user may expect did not happen, though nothing failed (a warning
    silenced by a setting or a silence file).  Not in strict mode: nothing failed."""
    if mode() != "print" or what in _told:
        return
    _told.add(what)
    sys.stderr.write("sitewarden: debug: %s\n" % (what,))


def describe(exc):
    """``Type: first line of the message`` (the type alone for an empty message)."""
    if exc is None:
        return "no exception"
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0]) if text else type(exc).__name__
