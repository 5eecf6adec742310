"""The command line's exit statuses, and its errors reported as one line (status 2)."""

#: Exit statuses (see ``commands.EXAMPLES``): the rule, and what ends a run early.
EXIT_OK, EXIT_ATTENTION, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141


class UsageError(Exception):
    """A command line that cannot be served as given (``sitewarden: error: ...``)."""


#: ``check --fail-on``'s levels, lowest first (lintian's convention): a finding at or
#: above the level makes the exit status EXIT_ATTENTION; ``none``: no finding does.
FAIL_ON = ("info", "low", "medium", "high", "none")
#: ``status``'s rule: any finding above ``info`` (a guard not loaded is ``low``).
DEFAULT_FAIL_ON = "low"
#: ``check``'s default: what needs someone's attention (``medium`` and ``high``); a stock
#: machine that is merely unguarded (``low``) exits 0, so a fleet needs no flag for it.
CHECK_FAIL_ON = "medium"
