"""The rarely used controls, kept out of ``sitewarden/__init__`` (which every
start pays for): ``sitewarden.installed_finder`` and ``sitewarden.deactivate``
load them on first use (PEP 562)."""

import sys


def installed_finder():
    """The guard's finder on ``sys.meta_path`` (the ``sitewarden`` module), or None."""
    for finder in sys.meta_path:
        if getattr(finder, "_sitewarden_finder", False) is True:
            return finder
    return None


def deactivate():
    """Remove the guard's finder from ``sys.meta_path`` (tests, embedding)."""
    sys.meta_path[:] = [
        f for f in sys.meta_path if getattr(f, "_sitewarden_finder", False) is not True
    ]
