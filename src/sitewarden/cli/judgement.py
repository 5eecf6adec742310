"""What ``status`` and ``check`` conclude about a target's guard, in one place.

Both commands show whether the target is a virtual environment's, whether PEP 668's
marker applies, whether a start loads the guard and whether installs are refused; both
exit by the same findings (``commands.guard_findings``).  What they say of a damaged
deployment depends on what a start of the target would do, never on the files alone.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from ..facts.records import MarkerState


def installs_refused(active: bool, marker: MarkerState) -> bool:
    """Would a start of the target refuse installs into its own site directories?  Only
    when that start loads the guard and the marker applies there (not a virtual
    environment).  A deployment missing files still refuses while its ``__init__``
    loads (the runtime fails closed); one whose start loads nothing refuses nothing."""
    return bool(active and marker.applies)


def incomplete_effect(active: bool, marker: MarkerState, fix: str) -> str:
    """What a start does with an incomplete deployment, and the command that repairs it."""
    if installs_refused(active, marker):
        return "installs are refused until `%s` repairs it" % fix
    if active:
        return "a start loads what is left of it; `%s` repairs it" % fix
    return ("a start does not load it: nothing is refused or reported until `%s` "
            "repairs it" % fix)
