"""``sitewarden quarantine ID``: take startup code, or a local copy that shadows the
distribution's, out of every start of the target without starting it; ``--restore``
puts it back byte for byte.

The finding is found by its id as ``acknowledge`` finds it: ``check``'s probe, which
starts the target isolated and without ``site`` (``-I -S``), so nothing of the target
runs, now or later in this command.  What moves, into a directory only its owner may
enter (:func:`base_dir`: ``/var/lib/sitewarden/quarantine/<time>-<id>/`` for root):

- for startup code: the startup file (left in place when it is a Debian package's file
  that matches dpkg's md5sums: then what makes it dangerous is a module it runs), and
  the module files it runs (``module_files`` of its lines in ``check --json``) that no
  other startup file of the target runs, that are not the standard library's nor a
  Debian package's, and that are no other distribution's unchanged files;
- the distributions involved, whole: the one that installed the startup file (or, for a
  shadow, the winning copy), and the ones whose files were among those modules.  Only
  what their RECORD vouches for: a file it lists, inside the distribution's own
  directory (or the scripts directory), whose hash matches, that no other
  distribution's RECORD there lists and no Debian package owns; the bytecode of a
  module that goes with it; the rest of its metadata directory.  A file its RECORD does
  not vouch for stays, and is said, with the command that removes it.

So no ``pip`` runs, and no start of the interpreter: what a shadow or an installed
payload needs is done here, and ``--restore`` undoes it.  Each move is a rename into
the quarantine (atomic) where it is on the same filesystem, else a copy, ``fsync``
and unlink; never through a symbolic link (``O_NOFOLLOW``, directory descriptors).
The quarantine's ``record.json`` (written before the first move, again after the last)
says, for each file, where it was, its type, mode, owner, times and sha256, and holds
the finding, the interpreter, the host and the time; with ``--restore`` each file is
checked against it before anything is put back, and nothing that now exists with
other content is overwritten.  Loaded only for this command.
"""

from __future__ import annotations

import os

from ..facts.records import SHOWN
from . import targets
from .acknowledge import _find
from .errors import EXIT_ATTENTION, EXIT_OK, UsageError
from .quarantine_files import (
    RECORD,
    SHADOW_KINDS,
    STARTUP_KINDS,
    _check_restore,
    _load,
    _open_dir,
    _put_back,
    _quarantines,
    _remake_dir,
    _remove_quarantine,
    _trusted_dir,
    base_dir,
)
from .quarantine_plan import Plan, about

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from .render import Style


# ---------------------------------------------------------------- the command


def cmd_quarantine(args: argparse.Namespace, style: Style, check_data: Any) -> int:
    """The command; ``check_data``: ``commands.check_data``, ``check``'s report."""
    given = [x for x in (args.id, args.restore, args.list or None) if x]
    if len(given) != 1:
        raise UsageError("give one of FINDING-ID, --restore DIR|ID, --list")
    if args.list:
        return _list(style)
    if args.restore:
        return restore(args.restore, style)
    return quarantine(args.id.strip().lower(), args.python, style, check_data)


class _Done:
    """A probe already answered, for ``check_data`` (which asks ``result()``)."""

    def __init__(self, result: Any) -> None:
        self._result = result

    def result(self) -> Any:
        return self._result


def quarantine(wanted: str, python: str | None, style: Style, check_data: Any) -> int:
    answer = targets.PendingCheck(python).result()  # -I -S: nothing of the target runs
    target = answer[0]
    report = check_data(python, _Done(answer))
    report.as_json()  # each finding's id (the CLI's side)
    finding = _find(report, wanted)
    plan = Plan(target, report, finding)
    if finding.kind in STARTUP_KINDS:
        plan.startup()
    elif finding.kind in SHADOW_KINDS:
        plan.shadow()
    else:
        command = finding.details.get("command")
        raise UsageError("a %s finding is not fixed by moving files out of the start; %s" % (
            finding.kind, "its fix: %s" % command if command else
            "the finding says what fixes it: " + finding.message))
    if not plan.moves:
        for line in plan.said():
            print(line)
        print("nothing to quarantine for %s: its files are gone already" % (
            finding.id[:SHOWN],))
        return EXIT_ATTENTION
    try:
        where = plan.run()
    except OSError as exc:
        raise UsageError("quarantine of %s stopped: %s" % (finding.id[:SHOWN], exc)) from None
    _report(plan, where, style)
    return EXIT_OK


# ---------------------------------------------------------------- saying it


def _report(plan: Plan, where: str, style: Style) -> None:
    f = plan.finding
    print(style.bold("quarantined %s (%s, %s): %s" % (
        f.id[:SHOWN], f.kind, f.severity, about(f)[0] or about(f)[1])))
    print("  moved %d file%s into %s:" % (len(plan.moves), "" if len(plan.moves) == 1
                                          else "s", where))
    for move in plan.moves[:12]:
        print("    %s (%s)" % (move.path, move.why))
    if len(plan.moves) > 12:
        print("    ... and %d more (%s lists them)" % (len(plan.moves) - 12,
                                                      os.path.join(where, RECORD)))
    for line in plan.said():
        print(line)
    for dist in plan.dists:
        print("  %s %s is uninstalled: its files are in the quarantine" % (
            dist.name, dist.version or ""))
    stay = [x.path for x in plan.left if x.why.startswith(("changed since",
                                                              "its RECORD gives"))]
    if plan.shipped:
        print("  next: %s" % plan.shipped)
    if plan.after:
        print("  next: %s (puts back %s's own version, from apt's archive)" % (
            plan.after, plan.owner_words))
    elif stay:
        print("  next: review what was left, then remove it: rm -- %s" % " ".join(stay))
    elif not plan.shipped:
        print("  nothing else is needed%s" % (
            ": %s" % plan.owner_words if plan.owner_words else ""))
    print("  undo: sitewarden quarantine --restore %s" % where)


# ---------------------------------------------------------------- --list, --restore


def _list(style: Style) -> int:
    base = base_dir()
    found = list(_quarantines(base))
    if not found:
        print("no quarantine in %s" % base)
        return EXIT_ATTENTION
    print(style.bold("%d quarantine%s in %s" % (len(found), "" if len(found) == 1 else "s",
                                                base)))
    for directory, record in found:
        finding = record.finding
        moved = record.moved()
        dists = ", ".join("%s %s" % (d.name, d.version or "") for d in record.distributions or ())
        print("  %s" % directory)
        print("    %s %s (%s) of %s, %s: %s" % (
            record.time, (record.id or "")[:SHOWN], finding.kind if finding else "?",
            record.interpreter, "%d file%s" % (len(moved), "" if len(moved) == 1 else "s"),
            (about(finding)[0] or about(finding)[1]) if finding else "?") + (
                "; %s" % dists if dists else ""))
    return EXIT_OK


def _resolve(given: str) -> str:
    """The quarantine directory ``given`` names: a path, or a finding's id (8 digits or
    more: its newest quarantine)."""
    if os.sep in given or given.startswith("."):
        return os.path.abspath(given)
    wanted = given.strip().lower()
    if len(wanted) < 8 or wanted.strip("0123456789abcdef"):
        raise UsageError("--restore takes a quarantine's directory or a finding's id (8 hex "
                         "digits or more): %s" % given)
    found = [d for d, r in _quarantines(base_dir()) if (r.id or "").startswith(wanted)]
    if not found:
        raise UsageError("no quarantine of %s in %s (sitewarden quarantine --list)" % (
            given, base_dir()))
    return found[-1]


def restore(given: str, style: Style) -> int:
    """Put a quarantine's files back where they were, byte for byte: refused, before
    anything moves, when a file changed in the quarantine or its place now holds other
    content."""
    try:
        return _restore(given, style)
    except OSError as exc:
        raise UsageError("restore stopped: %s" % exc) from None


def _restore(given: str, style: Style) -> int:
    directory = _resolve(given)
    record = _load(directory)
    _trusted_dir(directory)
    fd = _open_dir(directory)
    try:
        entries = record.moved()
        problems, there = _check_restore(fd, entries)
        if problems:
            raise UsageError("nothing restored from %s: %s" % (directory, "; ".join(problems)))
        for d in reversed(record.directories or ()):
            _remake_dir(d)
        put = 0
        for entry in entries:
            if entry.path in there:
                os.unlink(entry.stored, dir_fd=fd)
                continue
            _put_back(fd, entry)
            put += 1
        _remove_quarantine(fd, directory, record)
    except PermissionError as exc:
        raise UsageError("cannot restore from %s (%s): run it as root (sudo)" % (
            directory, exc.strerror or exc)) from None
    finally:
        os.close(fd)
    print(style.bold("restored %d file%s from %s" % (put, "" if put == 1 else "s", directory)))
    for entry in entries:
        print("  %s%s" % (entry.path, " (there already, the same)" if entry.path in there
                          else ""))
    return EXIT_OK if put else EXIT_ATTENTION


