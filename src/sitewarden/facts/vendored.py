"""Access to ``packaging``, the one third-party library the runtime uses.

sitewarden carries a private copy under ``sitewarden._vendor.packaging`` (one
pinned version, committed: see ``src/sitewarden/_vendor/vendor.txt``), in the
deployed runtime, the CLI and a checkout alike, so that it never imports,
shadows or depends on the distro's or the environment's own ``packaging``.
Runtime module: the import happens on first use.
"""


def packaging():
    """The vendored ``packaging`` package."""
    from .._vendor import packaging as pkg  # on first use only (see the module docstring)

    return pkg


def modules():
    """``(version, specifiers, requirements, markers, utils)`` modules of packaging."""
    name = packaging().__name__
    return tuple(
        __import__(name + "." + sub, fromlist=["_"])  # the submodule itself
        for sub in ("version", "specifiers", "requirements", "markers", "utils")
    )
