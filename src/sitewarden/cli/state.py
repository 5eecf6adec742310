"""The CLI's records: what ``status`` reports of a target, and the ``guard`` section it
adds to ``check``'s report (:class:`~sitewarden.facts.records.CheckReport`).

Records as ``detect``'s are (:class:`~sitewarden.facts.records.Record`): attributes in
the code, one JSON form (``as_json``/``from_json``) for ``--json`` only.
"""

from __future__ import annotations

from ..facts.records import Finding, MarkerState, Record

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any


def _fields(*names: str) -> tuple[tuple[str, str, Any], ...]:
    return tuple((name, name, None) for name in names)


class DeploymentState(Record):
    """A deployment as ``status`` shows it (``deployed.Deployment.as_json``'s form)."""

    __slots__ = ("site_dir", "version", "hook", "hook_files", "sitecustomize", "complete",
                 "missing", "installer")
    FIELDS = _fields(*__slots__)


class Orphan(Record):
    """A hook left without its runtime (``deployed.find_orphans``): which, what it does,
    the command that removes it (``remove``) and the uninstall that would."""

    __slots__ = ("hook", "kind", "site_dir", "problem", "effect", "remove", "uninstall")
    FIELDS = _fields(*__slots__)


class Word(Record):
    """One word of a setting (``SITEWARDEN_SILENCE``, a silence file): the word as
    written (a pin's digest cut short), its ``state`` here (``acknowledged``,
    ``silenced``, ``changed``, ``not understood``...) and what it ``meaning``s."""

    __slots__ = ("word", "state", "meaning")
    FIELDS = _fields(*__slots__)

    def __init__(self, word: str, state: str, meaning: str) -> None:
        self.word, self.state, self.meaning = word, state, meaning


class Verdict(Record):
    """``check``'s conclusion in one line (``cli.verdict``): ``counts`` (``{severity:
    how many}``, the marker's state aside), ``fail_on`` (the gate), ``exit`` (what the
    gate decides), ``next`` (the command to run next, or None); for ``status`` and
    ``--all``, ``status`` (the command's own exit status) and ``guard`` (why it differs
    from the gate's, or None)."""

    __slots__ = ("counts", "fail_on", "exit", "next", "status", "guard")
    FIELDS = _fields(*__slots__)
    OPTIONAL = ("status", "guard")


class Setting(Record):
    """A ``SITEWARDEN_*`` variable set (``name``) or a silence file (``path``, ``names``)
    and what it means (``cli.environment``): as a whole (``meaning``, ``understood``),
    and word by word (``words``: each ``{"word", "state", "meaning"}``)."""

    __slots__ = ("name", "path", "value", "names", "meaning", "understood", "words")
    FIELDS = _fields(*__slots__[:-1]) + (("words", "words", Word),)
    OPTIONAL = ("name", "path", "names", "words")

    def label(self) -> str:
        return self.path if self.name is None else "%s=%s" % (self.name, self.value)


class StartupState(Record):
    """What a plain start of the target loaded (``probe.STATUS_SCRIPT``, or the ``full``
    probe's ``startup``): ``stderr``, what it wrote there; ``error``, why no answer."""

    __slots__ = ("active", "meta_path_index", "module_file", "version", "stderr", "error")
    FIELDS = _fields(*__slots__)
    OPTIONAL = ("meta_path_index", "error")


class GuardState(Record):
    """``check``'s ``guard`` section: where it is deployed, whether a start loads it, and
    whether that start refuses installs (``cli.judgement``)."""

    __slots__ = ("deployments", "orphans", "active", "active_module", "active_version",
                 "disabled_by", "disabled_value", "installs_refused")
    FIELDS = (("deployments", "deployments", DeploymentState),
              ("orphans", "orphans", Orphan)) + _fields(*__slots__[2:])


class Status(GuardState):
    """``status``'s report on one target (``commands.status_of``): ``startup_probe``,
    how it learned what a start loads (``static``: read, nothing run; ``live``: a start)."""

    __slots__ = ("sitewarden", "host", "time", "python", "python_version", "virtualenv",
                 "startup_stderr", "marker", "environment", "silence_files", "aliases",
                 "startup_probe", "verdict")
    FIELDS = _fields("sitewarden", "host", "time", "python", "python_version", "virtualenv") + \
        GuardState.FIELDS[:5] + (("startup_stderr", "startup_stderr", None),
                                 ("marker", "marker", MarkerState)) + \
        GuardState.FIELDS[5:] + (("environment", "environment", Setting),
                                 ("silence_files", "silence_files", Setting),
                                 ("aliases", "aliases", None),
                                 ("startup_probe", "startup_probe", None),
                                 ("verdict", "verdict", Verdict))
    #: ``verdict``: ``check``'s, with its default gate (``cli.verdict``), and ``status``'s
    #: own exit status; ``host`` and ``time``: as ``check``'s report has them.
    OPTIONAL = ("host", "time", "aliases", "startup_probe", "verdict")

    def guard(self) -> GuardState:
        """Its ``guard`` section of ``check``'s report."""
        return GuardState.make(**{attr: getattr(self, attr)
                                  for _key, attr, _kind in GuardState.FIELDS})


class TargetFailure(Record):
    """An interpreter of ``--all`` that could not be probed, or (``untrusted``) was not:
    a user other than root may change it (``targets.untrusted``); its ``findings`` say
    so (``untrusted-interpreter``, high)."""

    __slots__ = ("python", "error", "aliases", "untrusted", "findings")
    FIELDS = _fields("python", "error", "aliases", "untrusted") + (
        ("findings", "findings", Finding),)
    OPTIONAL = ("untrusted", "findings")

    def __init__(self, python: str, error: str) -> None:
        self.python = python
        self.error = error
        self.aliases = None
        self.untrusted = None
        self.findings = None

    @classmethod
    def not_run(cls, python: str, why: str) -> TargetFailure:
        """An interpreter ``--all`` does not run: ``why`` another user may change it."""
        message = ("%s was not run: %s, so any root program that runs it runs what that "
                   "user puts there; make it root's alone (chown root, chmod go-w, on it and "
                   "every directory above it) or remove it" % (python, why))
        self = cls(python, "NOT RUN (untrusted): " + message)
        self.untrusted = True
        self.findings = [Finding("untrusted-interpreter", "high", message, python=python,
                                 reason=why)]
        return self

