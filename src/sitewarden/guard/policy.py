"""The refuse-or-arm policy every installer guard applies to one install.

Outside a virtual environment, an install whose files land in the standard
library or a distro directory is refused (PEP 668's second rule: no override
lifts it); one that lands in the interpreter's own site directories is refused
while the marker applies, unless overridden; else it is let through with the
scheme guard armed (and, once it succeeded into the interpreter, reported).
In a virtual environment, or when the files land elsewhere, it passes through
untouched.  Each guard gives what differs: the installer's name (for the
override its message names), where the files land, the override, and whether
to refuse, write or raise.  Runtime module.
"""

import sys

from .. import _swallowed
from ..facts.marker import in_virtualenv
from . import install_report, refusal, scheme_guard


class Decision:
    """What a guard does with one install: ``refusal`` is the message to refuse
    it with (None: allowed); ``armed``, the scheme guard watches it; ``verdict``
    is :func:`scheme_guard.judge`'s (``"interpreter"``: its files land in the
    interpreter's own directories)."""

    __slots__ = ("refusal", "verdict", "armed", "overridden", "before")

    def __init__(self, refusal=None, verdict=None, armed=False, overridden=False):
        self.refusal = refusal
        self.verdict = verdict
        self.armed = armed
        self.overridden = overridden
        # The startup files before an allowed install (startup_report.snapshot), or None;
        # False: they could not be listed (the report says it failed).
        self.before = _snapshot() if armed else None

    @property
    def into_interpreter(self):
        """Allowed into the interpreter's own directories: what it shadows is reported."""
        return self.armed and self.verdict == "interpreter"

    def run(self, installer, *args, **kwargs):
        """Call ``installer``; an overridden install lets the installer subprocesses
        it starts (builds, ``setup.py``, ensurepip's pip) through, for its duration
        only (:data:`refusal.INHERITED`)."""
        if not (self.armed and self.overridden):
            return installer(*args, **kwargs)
        previous = refusal.allow_children()
        try:
            return installer(*args, **kwargs)
        finally:
            refusal.restore_children(previous)

    def report(self, stream=None, quiet=0, verb="install"):
        """PEP 668's recommendation, after a successful install into the interpreter:
        say which distro packages the entries it wrote now shadow; and, after any install
        the guard let through, which startup files it added, changed or removed
        (:mod:`.startup_report`).  One child of the interpreter, without ``site``,
        answers both, and only when asked.  ``quiet``: the installer's ``-q`` count, heard
        as pip hears it (``-q`` keeps warnings, ``-qq`` errors, ``-qqq`` nothing): the
        high blocks print up to ``-qq``, the rest up to ``-q``.  Never raises, never
        changes the install: a failure is one line saying how to see why."""
        if quiet >= 3:
            return
        try:
            self._report(stream, quiet, verb)
        except Exception:
            _swallowed("the install report")  # SITEWARDEN_DEBUG=1: what failed
            try:
                (sys.stderr if stream is None else stream).write(FAILED)
            except Exception:
                _swallowed("saying that the install report failed")

    def _report(self, stream, quiet, verb):
        reporter = sys.modules.get(__package__ + ".startup_report")  # by _snapshot()
        if reporter is None:
            return self._unlisted()
        taken = {}

        def check(kind="report"):
            # the whole report serves both; the shadows alone cost the child less
            if "report" not in taken and kind not in taken:
                taken[kind] = reporter.static_report(kind)
            return taken.get("report") or taken[kind]

        changed = isinstance(self.before, dict) and any(reporter.changes(
            self.before, reporter.snapshot()))
        if changed:
            check("report")
        if self.into_interpreter and quiet <= 1:
            install_report.report(check, stream, scheme_guard.written())
        if changed:
            reporter.report(self.before, stream, check, high_only=quiet >= 2, verb=verb)
        return self._unlisted()

    def _unlisted(self):
        if self.before is False:  # the shadow report, if any, is printed already
            raise RuntimeError("the startup files could not be listed before the install")


#: What an install prints when its report failed (the install itself is untouched).
FAILED = ("sitewarden: warning: the report of what this install changed failed (the install "
          "is unaffected); run it again with SITEWARDEN_DEBUG=1 to see why\n")


def _snapshot():
    """The startup files before an allowed install (``startup_report.snapshot``); the
    reports' module is imported here, before the install starts (pip 26.3 refuses new
    imports once it has), and only for an install that goes through."""
    try:
        from . import startup_report  # allowed installs only (a refusal imports no more)

        return startup_report.snapshot()
    except Exception:
        _swallowed("listing the startup files before an install (no startup report)")
        return False


def decide(installer, judge, overridden=None, arm_elsewhere=False):
    """The :class:`Decision` for one install by ``installer`` (``"pip"``,
    ``"ensurepip"``, ``"setuptools"``, ``"installer"``: the override its message
    names, see :func:`refusal.message`).

    ``judge()`` gives ``(verdict, directory)`` as :func:`scheme_guard.judge` does,
    for where this install's files land; it is asked outside a virtual environment
    only.  ``overridden``: PEP 668 is overridden for it (None: ask
    :func:`refusal.override_active` when it matters).  ``arm_elsewhere``: arm the
    scheme guard also when the files land elsewhere (pip: an upgrade or an
    uninstall reaches into the distro's directories whatever its destination).
    """
    if in_virtualenv():
        return Decision()
    verdict, directory = judge()
    if verdict == "protected":
        own = scheme_guard.own_dirs()
        return Decision(refusal.protected_message(directory, own[0] if own else None), verdict)
    if verdict is None and not arm_elsewhere:
        return Decision()
    if verdict == "interpreter" and refusal.applies():
        if overridden is None:
            overridden = refusal.override_active()
        if not overridden:
            return Decision(refusal.message(installer), verdict)
    scheme_guard.arm()
    return Decision(None, verdict, True, bool(overridden))
