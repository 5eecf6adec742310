"""The ``sitewarden`` command's entry point.

A ``check`` is two processes: this one and the probe it runs in the target (which
starts that interpreter and collects the report there).  So the probe is started
first, from the plain command line, and the commands' own modules (:mod:`.commands`:
records, rendering, deployments...) load while it runs: on two cores they cost the
check nothing.
"""

from __future__ import annotations

import os
import sys

from .. import __version__
from ..probe.runner import exit_without_teardown
from . import targets
from .errors import CHECK_FAIL_ON, EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, FAIL_ON

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Sequence


class PlainArgs:
    """What argparse would make of a plain ``check``/``status`` command line."""

    def __init__(self, command: str) -> None:
        self.command, self.python, self.all, self.json = command, None, False, False
        self.verbose = False
        if command == "status":
            self.live = False  # status --live goes through argparse
        if command == "check":
            self.fail_on = CHECK_FAIL_ON


def plain_args(argv: Sequence[str]) -> PlainArgs | None:
    """``check`` and ``status`` with ``--json``, ``--all``, ``--verbose`` and ``--python
    EXE`` each at most once (``check``: ``--fail-on SEVERITY`` too), parsed without argparse (whose
    import, with gettext's, is a tenth of a ``check``); None for anything else, which
    argparse parses (and reports)."""
    if not argv or argv[0] not in ("check", "status"):
        return None
    args, rest = PlainArgs(argv[0]), list(argv[1:])
    while rest:
        arg = rest.pop(0)
        if arg in ("--json", "--all", "--verbose") and not getattr(args, arg[2:]):
            setattr(args, arg[2:], True)
        elif arg == "--python" and args.python is None and rest and \
                not rest[0].startswith("-"):
            args.python = rest.pop(0)
        elif arg == "--fail-on" and args.command == "check" and rest and rest[0] in FAIL_ON:
            args.fail_on = rest.pop(0)
        else:
            return None
    return args


def _drop_current_directory() -> None:
    """The CLI imports nothing from the current directory: ``PYTHONPATH=:/x`` (``export
    PYTHONPATH=$PYTHONPATH:/x``) puts it on ``sys.path`` (``site`` makes the empty entry
    absolute), and a ``random.py`` there is what ``check`` is run to report, not a module
    for the CLI's own lazy imports (``tempfile`` imports ``random``).  sitewarden itself is
    already imported; other entries stay (``python -m`` drops its own in ``__main__``)."""
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:  # a deleted directory: nothing on sys.path can name it usefully
        here = None
    sys.path[:] = [p for p in sys.path if isinstance(p, str) and os.path.isabs(p)
                   and (here is None or os.path.realpath(p) != here)]


def _start_check(args: PlainArgs | None) -> targets.PendingCheck | None:
    """The probe of a plain ``check`` or ``status`` of one target, started; None for any
    other command, or a target that cannot be started (the command then reports why)."""
    if args is None or args.all:
        return None
    try:
        return targets.PendingCheck(args.python)  # status gives check's verdict too
    except targets.TargetError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (see ``commands.EXAMPLES``).  A closed stdout
    (``sitewarden status | head -1``) ends the run quietly with 141, as the Python
    documentation's "Note on SIGPIPE" does it: the output still buffered goes to
    /dev/null, so the interpreter's own flush at exit finds nothing to complain about."""
    _drop_current_directory()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        try:
            if argv == ["--version"]:  # as argparse prints it, without loading argparse
                print("sitewarden " + __version__)
                return 0
            args = plain_args(argv)
            pending = _start_check(args)
            try:
                from . import commands  # while the probe runs (see the module docstring)
            except BaseException:  # Ctrl-C meanwhile: the probe goes too, not orphaned
                if pending is not None:
                    pending.cancel()
                raise
            return commands.run(argv, args, pending)
        finally:
            if sys.stdout is not None:  # None: started with descriptor 1 closed
                sys.stdout.flush()  # here, not at exit: a closed pipe is reported below
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:  # before the command ran (commands.run reports its own)
        return EXIT_INTERRUPTED


def script() -> None:
    """The ``sitewarden`` command (the launcher ``bin/sitewarden`` and
    ``/usr/bin/sitewarden``, both starting their python ``-I -S``; ``python -m sitewarden``):
    :func:`main`, then out at once, without the interpreter's teardown
    (:func:`.probe.exit_without_teardown`)."""
    status = main()
    exit_without_teardown(status)
