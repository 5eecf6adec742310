"""Access to ``packaging``, the one third-party library the runtime uses.

Deployed into a target interpreter, sitewarden carries a private copy under
``sitewarden._vendor.packaging`` so that it never imports, shadows or depends
on the distro's own ``packaging``.  Run from a source checkout or a normal
install (the CLI), the installed ``packaging`` is used.  Runtime module: the
import happens on first use.
"""


def packaging():
    """The ``packaging`` package to use (vendored copy first)."""
    try:
        from .._vendor import packaging as pkg  # deployed runtime (absent in a checkout)
    except ImportError:
        import packaging as pkg  # CLI / development checkout (not a runtime dependency)
    return pkg


def modules():
    """``(version, specifiers, requirements, markers, utils)`` modules of packaging."""
    name = packaging().__name__
    return tuple(
        __import__(name + "." + sub, fromlist=["_"])  # the submodule itself
        for sub in ("version", "specifiers", "requirements", "markers", "utils")
    )
