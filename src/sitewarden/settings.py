"""Environment switches, parsed without importing anything.

Every value is tolerated: an unknown or garbled value is ignored, never an
error.  (``SITEWARDEN_DISABLE`` is read by the ``.pth`` line and by
``sitewarden.activate`` themselves, before this module could be imported.)
"""

import os

#: What pip's strtobool takes as true (pip 23 semantics for PIP_BREAK_SYSTEM_PACKAGES).
TRUE_VALUES = ("1", "y", "yes", "t", "true", "on")

#: Warning kinds SITEWARDEN_SILENCE can name.
WARNING_KINDS = ("shadow", "path")


def is_true(value):
    """pip's reading of a boolean setting (``1``, ``yes``, ``true``...)."""
    try:
        return str(value).strip().lower() in TRUE_VALUES
    except (TypeError, ValueError, UnicodeError):  # a value str() cannot render
        return False


def silenced_kinds(environ=None):
    """The warning kinds that ``SITEWARDEN_SILENCE`` turns off, as a frozenset.

    A comma (or space) separated list of ``shadow``, ``path``; ``all`` or a
    true value (``1``, ``yes``...) silences every kind.  Unknown words are ignored.
    """
    environ = os.environ if environ is None else environ
    try:
        raw = str(environ.get("SITEWARDEN_SILENCE", ""))
    except (TypeError, ValueError, UnicodeError):  # a value str() cannot render
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
    environ = os.environ if environ is None else environ
    return is_true(environ.get("PIP_BREAK_SYSTEM_PACKAGES", ""))
