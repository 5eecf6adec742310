"""Environment switches, parsed without importing anything.

Imported at interpreter start, so only ``os`` is used.  Every value is
tolerated: an unknown or garbled value is ignored, never an error.
"""

import os

#: What pip's strtobool takes as true (pip 23 semantics for PIP_BREAK_SYSTEM_PACKAGES).
TRUE_VALUES = ("1", "y", "yes", "t", "true", "on")

#: Warning kinds SITEWARDEN_SILENCE can name.
WARNING_KINDS = ("shadow", "path")


def _flag(name, environ=None):
    environ = os.environ if environ is None else environ
    try:
        return str(environ.get(name, "")).strip().lower() in TRUE_VALUES
    except Exception:
        return False


def disabled(environ=None):
    """``SITEWARDEN_DISABLE`` set to anything but empty or ``0``: the guard does
    nothing in this process (the same test the ``.pth`` line makes)."""
    environ = os.environ if environ is None else environ
    try:
        return environ.get("SITEWARDEN_DISABLE", "0") not in ("", "0")
    except Exception:
        return False


def silenced_kinds(environ=None):
    """The warning kinds that ``SITEWARDEN_SILENCE`` turns off, as a frozenset.

    A comma (or space) separated list of ``shadow``, ``path``; ``all`` or a
    true value (``1``, ``yes``...) silences every kind.  Unknown words are ignored.
    """
    environ = os.environ if environ is None else environ
    try:
        raw = str(environ.get("SITEWARDEN_SILENCE", ""))
    except Exception:
        return frozenset()
    kinds = set()
    for word in raw.replace(",", " ").split():
        word = word.strip().lower()
        if word == "all" or word in TRUE_VALUES:
            return frozenset(WARNING_KINDS)
        if word in WARNING_KINDS:
            kinds.add(word)
    return frozenset(kinds)


def silenced(kind, environ=None):
    """Is the warning kind (``shadow`` or ``path``) silenced?  Never affects blocks."""
    return kind in silenced_kinds(environ)


def break_system_packages_env(environ=None):
    """``PIP_BREAK_SYSTEM_PACKAGES`` set to a true value (pip's override)."""
    return _flag("PIP_BREAK_SYSTEM_PACKAGES", environ)
