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
        from .._vendor import packaging as pkg  # deployed runtime
    except ImportError:
        import packaging as pkg  # CLI / development checkout
    return pkg


def modules():
    """``(version, specifiers, requirements, markers, utils)`` modules of packaging."""
    pkg = packaging()
    name = pkg.__name__
    import importlib

    return tuple(
        importlib.import_module(name + "." + sub)
        for sub in ("version", "specifiers", "requirements", "markers", "utils")
    )
