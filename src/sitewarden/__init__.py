"""sitewarden: PEP 668 enforced inside the interpreter.

This package is imported at every start of a guarded interpreter, so this
module imports nothing at all: it only names the version and the public
warning and error classes (``-W ignore::sitewarden.ShadowWarning`` must work
without pulling anything else in).
"""

__version__ = "0.1.0"

__all__ = [
    "ExternallyManagedError",
    "PathWarning",
    "ShadowWarning",
    "SitewardenWarning",
    "__version__",
]


class SitewardenWarning(UserWarning):
    """Base class of every warning sitewarden emits."""


class ShadowWarning(SitewardenWarning):
    """A local copy of a module is imported instead of the distro's copy."""


class PathWarning(SitewardenWarning):
    """``sys.path`` is ordered or populated in a way that breaks the interpreter."""


class ExternallyManagedError(Exception):
    """An install into an externally managed interpreter was refused (PEP 668).

    Raised only where a caller of a library API (not a command line) expects an
    exception; command lines get pip's message and exit status 1 instead.
    """

    exit_status = 1
