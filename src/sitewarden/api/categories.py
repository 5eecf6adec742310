"""sitewarden's public warning categories and its refusal exception.

Kept out of ``sitewarden/__init__`` so that startup creates no classes it
does not need; ``sitewarden.ShadowWarning`` and friends resolve here on first
use (``-W ignore::sitewarden.ShadowWarning`` included).
"""


class SitewardenWarning(UserWarning):
    """Base class of every warning sitewarden emits."""

    __module__ = "sitewarden"


class ShadowWarning(SitewardenWarning):
    """A local copy of a module is imported instead of the distro's copy."""

    __module__ = "sitewarden"


class PathWarning(SitewardenWarning):
    """``sys.path`` is ordered or populated in a way that breaks the interpreter."""

    __module__ = "sitewarden"


class ExternallyManagedError(Exception):
    """An install into an externally managed interpreter was refused (PEP 668).

    Raised only where a caller of a library API (``ensurepip.bootstrap()``,
    ``installer.install()``) expects an exception; command lines get pip's
    message and exit status 1 instead.
    """

    __module__ = "sitewarden"
    exit_status = 1
