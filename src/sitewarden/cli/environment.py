"""What ``status`` and ``check`` say of the guard's settings: every ``SITEWARDEN_*``
variable set in this environment and every silence file that exists, what each value
means and whether it was understood.  The parsing is ``settings``' (the runtime's own);
this module only words it.  Imports ``os`` and sitewarden's ``settings`` and
``failopen`` (two small modules): ``check``'s path imports nothing heavier.
"""

from __future__ import annotations

import os

from .. import failopen, settings
from ..facts.startup_records import Acknowledgement
from .state import Word

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any, Mapping

    from ..facts.records import RefusedSilenceFile

#: The variables sitewarden reads (``_SITEWARDEN_OVERRIDE`` is its own, set for children).
KNOWN = ("SITEWARDEN_DISABLE", "SITEWARDEN_SILENCE", "SITEWARDEN_DEBUG",
         "SITEWARDEN_QUARANTINE_DIR")



def spelled(words: tuple[str, ...]) -> str:
    """``settings``' words as the docs list them: the words, then the letters (``1, yes,
    true, on, y, t``); the empty value left out (each text says "or empty")."""
    kept = [w for w in words if w]
    return ", ".join([w for w in kept if len(w) > 1 or w.isdigit()]
                     + [w for w in kept if len(w) == 1 and not w.isdigit()])


#: The true and false words of every SITEWARDEN_* variable (``settings``), as written in
#: ``--help``, ``status``, the man page and the docs (tests hold them to this).
TRUE_WORDS = spelled(settings.TRUE_VALUES)
FALSE_WORDS = spelled(settings.FALSE_VALUES)
DISABLE_ACCEPTED = ("accepted: %s (any case) turn the guard off; %s or empty leave it on"
                    % (TRUE_WORDS, FALSE_WORDS))
SILENCE_ACCEPTED = ("accepted: shadow, path, all (or %s), none (or %s), %s, separated by "
                    "commas, semicolons or spaces" % (TRUE_WORDS, FALSE_WORDS,
                                                      ", ".join(settings.NAMED_WORDS)))
DEBUG_ACCEPTED = "accepted: %s; raise; %s or empty" % (TRUE_WORDS, FALSE_WORDS)
FILE_ACCEPTED = "accepted: %s, one or more a line, # comments" % (
    ", ".join(settings.NAMED_WORDS))


def _item(name: str, value: str, meaning: str, understood: bool) -> dict[str, Any]:
    return {"name": name, "value": value, "meaning": meaning, "understood": understood}


def _quoted(words: tuple[str, ...] | list[str]) -> str:
    return ", ".join("'%s'" % w for w in words)


def describe_disable(value: str) -> dict[str, Any]:
    name = "SITEWARDEN_DISABLE"
    if settings.disables(value):
        return _item(name, value, "the guard is off in every process started from this "
                     "environment: no warnings, no blocks", True)
    if value.strip().lower() in settings.FALSE_VALUES:
        return _item(name, value, "a false value: the guard stays on", True)
    return _item(name, value, "not understood: the guard stays on (SITEWARDEN_DISABLE=1 "
                 "turns it off; %s)" % DISABLE_ACCEPTED, False)


def startup_meanings(words: list[str], source: str,
                     acks: list[Acknowledgement] | None) -> tuple[list[Word], bool]:
    """Each ``startup:`` word of ``source`` as ``{"word", "state", "meaning"}``: its state
    in the target as the probe read it (``acks``: ``facts.startup_records.Acknowledgement``s;
    None: not read), and whether all of them pin something."""
    out, pinned = [], True
    for word in words:
        found = [a for a in acks or () if a.word == word and a.source == source]
        path, digest = settings.startup_pin(word)
        pinned = pinned and digest is not None
        if found:
            ack = found[0]
        elif digest is None:
            ack = Acknowledgement(word, source, None, "unpinned")
        elif source not in ("SITEWARDEN_SILENCE", settings.SYSTEM_FILE):  # a deployment's
            ack = Acknowledgement(word, source, path, "not-administrator")
        else:
            ack = None
        out.append(Word(settings.short_word(word), ack.state.replace("-", " ") if ack
                         else "pinned", ack.meaning() if ack
                         else "acknowledges %s as it was when pinned" % path))
    return out, pinned


def _meaning(words: list[Word], unknown: tuple[str, ...], accepted: str) -> str:
    """What a source's words mean together: those understood, then those not."""
    said = "; ".join("%s: %s" % (w.word, w.meaning) for w in words
                     if w.state != "not understood") or "nothing is silenced"
    if unknown:
        said += "; not understood, ignored: %s (%s)" % (_quoted(unknown), accepted)
    return said


def describe_silence(value: str, acks: list[Acknowledgement] | None = None) -> dict[str, Any]:
    kinds, names, unknown = settings.parse_silence(value)
    words = []
    for kind in settings.WARNING_KINDS:
        if kind in kinds:
            words.append(Word(kind, "silenced", "no %s warning is shown (silencing never "
                               "lifts a block)" % ("sys.path" if kind == "path" else kind)))
    for name in names:
        words.append(Word("shadow:" + name, "silenced" if "shadow" in kinds else
                           "acknowledged", "no shadow warning about %s; check lists it as "
                           "acknowledged" % name))
    startup, pinned = startup_meanings(settings.startup_words(value), "SITEWARDEN_SILENCE",
                                       acks)
    words.extend(startup)
    words.extend(Word(w, "not understood", "ignored (%s)" % SILENCE_ACCEPTED) for w in unknown)
    item = _item("SITEWARDEN_SILENCE", value, _meaning(words, unknown, SILENCE_ACCEPTED),
                 not unknown and pinned)
    item.update(words=[w.as_json() for w in words])
    return item


def describe_debug(value: str) -> dict[str, Any]:
    how = failopen.mode({failopen.ENV: value})
    meaning = {
        None: "off: a failure the guard swallows (it fails open) is not told",
        "print": "a failure the guard swallows is told on stderr, once per place",
        failopen.STRICT: "a failure the guard would swallow is raised (strict mode)",
    }[how]
    understood = value.strip().lower() in settings.debug_words()
    if not understood:
        meaning = "not understood: taken as 1: %s (%s)" % (meaning, DEBUG_ACCEPTED)
    return _item(failopen.ENV, value, meaning, understood)


def describe_quarantine_dir(value: str) -> dict[str, Any]:
    """``SITEWARDEN_QUARANTINE_DIR``: read by ``sitewarden quarantine`` alone."""
    if not value:
        return _item("SITEWARDEN_QUARANTINE_DIR", value, "empty: sitewarden quarantine keeps "
                     "what it moves where it does by default", True)
    return _item("SITEWARDEN_QUARANTINE_DIR", value, "sitewarden quarantine keeps what it "
                 "moves in %s (made 0700; refused if others may change it)" % (
                     os.path.abspath(value)), True)


DESCRIBE = {"SITEWARDEN_DISABLE": describe_disable, "SITEWARDEN_SILENCE": describe_silence,
            "SITEWARDEN_DEBUG": describe_debug,
            "SITEWARDEN_QUARANTINE_DIR": describe_quarantine_dir}


def variables(environ: Mapping[str, str] | None = None,
              acks: list[Acknowledgement] | None = None) -> list[dict[str, Any]]:
    """Every ``SITEWARDEN_*`` variable set, sorted by name: ``name``, ``value``,
    ``meaning``, ``understood`` (``acks``: :func:`startup_meanings`')."""
    environ = os.environ if environ is None else environ
    out = []
    for name in sorted(n for n in environ if n.startswith("SITEWARDEN_")):
        describe = DESCRIBE.get(name)
        if describe is describe_silence:
            out.append(describe_silence(environ[name], acks))
        elif describe is not None:
            out.append(describe(environ[name]))
        else:
            out.append(_item(name, environ[name], "not a sitewarden setting: ignored "
                             "(sitewarden reads %s)" % ", ".join(KNOWN), False))
    return out


def silence_files(site_dirs: list[str], acks: list[Acknowledgement] | None = None,
                  refused: list[RefusedSilenceFile] | None = None) -> list[dict[str, Any]]:
    """Every silence file that exists (the machine's, then those of the deployments in
    ``site_dirs``): ``path``, ``value`` (its words), ``names`` (the shadows it
    acknowledges), ``meaning``, ``understood``, and ``words``, each with its state
    (``acks``: :func:`startup_meanings`'; ``refused``: the deployments' files whose
    ``shadow:`` words acknowledge nothing in the target, as its probe judged them)."""
    refusals = {r.path: r for r in refused or ()}
    out = []
    for path in settings.silence_files(site_dirs):
        text, problem = settings.read_silence_file(path)
        if text is None and problem is None:
            continue
        if problem is not None:
            meaning = "cannot be read (%s): the shadows it names are warned about" % problem
            out.append({"path": path, "value": None, "names": [], "understood": False,
                        "meaning": meaning,
                        "words": [Word("(unread)", "cannot be read", meaning).as_json()]})
            continue
        _kinds, names, unknown = settings.parse_silence(text or "", names_only=True)
        who = ("any guarded python of this machine" if path == settings.SYSTEM_FILE
               else "the guard deployed in %s" % os.path.dirname(path))
        no = refusals.get(path)
        if no is not None:
            words = [Word("shadow:" + name, (no.state or "").replace("-", " "),
                          "acknowledges nothing: %s" % settings.refusal_text(
                              no.state, no.reason, path)) for name in names]
        else:
            words = [Word("shadow:" + name, "acknowledged", "not warned about by %s, "
                          "whatever its environment; check lists it as acknowledged" % who)
                     for name in names]
        startup, pinned = startup_meanings(settings.startup_words(text or "", lines=True),
                                           path, acks)
        words.extend(startup)
        accepted = "a silence file acknowledges shadows by name, startup code pinned; " \
            "SITEWARDEN_SILENCE silences a kind; %s" % FILE_ACCEPTED
        words.extend(Word(w, "not understood", "ignored (%s)" % accepted) for w in unknown)
        meaning = _meaning(words, unknown, accepted) if words else "acknowledges nothing"
        out.append({"path": path, "value": " ".join(text.split()), "names": list(names),
                    "understood": not unknown and pinned, "meaning": meaning,
                    "words": [w.as_json() for w in words]})
    return out
