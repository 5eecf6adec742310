"""Errors of the command line that are reported as one line, with exit status 2."""


class UsageError(Exception):
    """A command line that cannot be served as given (``sitewarden: error: ...``)."""
