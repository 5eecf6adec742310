"""What ``sitewarden quarantine`` (:mod:`.quarantine`) moves for one finding, and what
it leaves: the rules are the command's (its module docstring).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time

from ..facts import distinfo, integrity, owners
from ..facts.distribution import Distribution
from ..facts.records import SHOWN, CheckReport, Finding
from ..facts.startup_records import StartupFile, StartupSection
from . import targets
from .errors import UsageError
from .quarantine_files import (
    FILES,
    FORMAT,
    UNHASHED,
    FileFacts,
    Left,
    QuarantineRecord,
    RemovedDistribution,
    _facts,
    _hash_file,
    _make_quarantine,
    _move_into,
    _remove_empty,
    _remove_quarantine,
    _under,
    _write_record,
    base_dir,
)


def about(finding: Finding) -> tuple[str | None, str | None]:
    """``(file, module)``: what ``finding`` is about, read in one place."""
    details = finding.details
    return details.get("file"), details.get("module")


class Plan:
    """What a quarantine moves for one finding, and what it leaves (said)."""

    def __init__(self, target: targets.Target, report: CheckReport, finding: Finding) -> None:
        self.target = target
        self.report = report
        self.finding = finding
        self.moves: list[FileFacts] = []
        self.left: list[Left] = []
        self.dists: list[Distribution] = []
        self.after: str | None = None  # the step that follows (apt's reinstall)
        self.owner_words: str | None = None
        self.shipped: str | None = None  # a Debian package's own file, moved: what then
        executable = target.executable
        self.interpreter = {os.path.realpath(executable), executable}
        self.entries = [e.path for e in (report.layout.entries if report.layout else [])
                        if isinstance(e.path, str) and e.path]
        sites = [target.purelib, target.platlib, target.user_site] + list(
            target.site_dirs or ())
        self.sites = [s for s in sites if s]

    # -- the finding
    def startup(self) -> None:
        path = about(self.finding)[0]
        section = StartupSection.from_json(self.report.section("startup") or {})
        files = {f.path: f for f in section.files or ()}
        f = files.get(path)
        if f is None:
            raise UsageError("%s is not a startup file of %s now (sitewarden check --python "
                             "%s)" % (path, self.target.executable, self.target.executable))
        owner = f.owner
        if owner.kind == "sitewarden":
            raise UsageError("%s is sitewarden's own: deploy it again instead (sitewarden "
                             "install --python %s)" % (f.path, self.target.executable))
        others: set[str] = set()
        for other in files.values():
            if other.path != f.path:
                others |= _runs(other) | {other.path, other.realpath or other.path}
        # A conffile is reached through a link (/usr/lib/python3.X/sitecustomize.py): the
        # file that changed is the conffile, which apt's confmiss puts back.
        startup = f.realpath if owner.record == "conffile" and f.realpath else f.path
        shipped = owner.kind == "dpkg" and owner.verified is True
        modules = sorted(_runs(f) - others - {f.path, f.realpath})
        dpkg = owners.dpkg_owners([m for m in modules if owners.dpkg_candidate(m)])
        owner_dist = self.distribution(owner.metadata) if owner.kind == "distribution" else None
        payload = {startup}
        packages = [owner.package] if owner.kind == "dpkg" else []
        dists = []
        cached = [m for m in modules if _source(m)]  # bytecode goes with its source alone
        for module in [m for m in modules if not _source(m)]:
            if self.stdlib(module):
                continue
            if module in dpkg:
                verdict = integrity.verify_dpkg(dpkg[module], module)
                if verdict.verified is not False:
                    self.leave(module, "a file of the Debian package %s" % dpkg[module])
                    continue
                packages.append(dpkg[module])  # changed: apt puts the package's back
            else:
                dist, vouched = self.module_owner(module)
                if dist is not None and vouched and not shipped and (
                        owner_dist is None or dist.path != owner_dist.path):
                    self.leave(module, "a file of %s %s, as its RECORD says: it no longer "
                               "runs at startup" % (dist.name, dist.version or ""))
                    continue
                if dist is not None and shipped:
                    dists.append(dist)  # what made a package's file dangerous: all of it
            self.add(module, "module")
            payload.add(module)
        for module in cached:
            if _source(module) in payload:
                self.add(module, "module")
                payload.add(module)
        if shipped and self.moves:
            self.leave(startup, "what the Debian package %s ships (it matches dpkg's "
                       "md5sums): what it runs goes" % owner.package)
            packages.remove(owner.package)
        else:
            if self.add(startup, "startup file"):
                self.moves.insert(0, self.moves.pop())  # said first
            if shipped:
                packages.remove(owner.package)
                self.shipped = "%s is what the Debian package %s ships: apt-get install " \
                    "--reinstall would put it back; remove the package (apt-get remove %s) " \
                    "or acknowledge it" % (startup, owner.package, owner.package)
        for dist in dists:
            self.remove(dist, payload)
        if owner_dist is not None:
            self.remove(owner_dist, payload)
        elif owner.kind == "distribution":
            self.leave(owner.metadata or "?", "the metadata of %s, which is not where it "
                       "was" % owner.distribution)
        if packages:
            unique = " ".join(sorted(set(packages), key=packages.index))
            conffile = owner.record == "conffile" and owner.package in packages
            self.after = "apt-get install --reinstall -y %s%s" % (
                "-o Dpkg::Options::=--force-confmiss " if conffile else "", unique)
            self.owner_words = "the Debian package%s %s" % (
                "s" if " " in unique else "", unique)
        elif owner.kind is None:
            self.owner_words = "no package installed it"

    def shadow(self) -> None:
        module = about(self.finding)[1]
        shadowing = self.report.shadowing
        items = (shadowing.modules or []) + (shadowing.hidden_namespaces or []) \
            if shadowing else []
        case = next((c for c in items if c.module == module), None)
        winner = case.winner if case else None
        if winner is None or not winner.metadata or winner.cls not in ("local", "user", "pth"):
            raise UsageError("the copy of %s that is imported is no distribution's in the local "
                             "directory or the user site: remove it by hand (%s)" % (
                                 module, winner.path if winner else "?"))
        dist = self.distribution(winner.metadata)
        if dist is None:
            raise UsageError("%s (%s) is not where it was" % (winner.metadata, module))
        self.remove(dist, set(), required=True)

    # -- facts
    def stdlib(self, path: str) -> bool:
        stdlib = self.target.stdlib or ""
        return bool(stdlib) and _under(path, stdlib) and not any(
            _under(path, s) for s in self.sites)

    def location_of(self, path: str) -> str | None:
        """The ``sys.path`` entry (or site directory) holding ``path``: the longest."""
        found = [e for e in self.entries + self.sites if _under(path, e)]
        return max(found, key=len) if found else None

    def distribution(self, metadata: str | None) -> Distribution | None:
        if not metadata:
            return None
        location = os.path.dirname(metadata.rstrip("/"))
        for dist in distinfo.distributions(location):
            if dist.path.rstrip("/") == metadata.rstrip("/"):
                return dist
        return None

    def module_owner(self, path: str) -> tuple[Distribution | None, bool]:
        """The distribution whose RECORD lists the module file ``path``, and whether the
        file matches its line there."""
        location = self.location_of(path)
        if location is None:
            return None, False
        rel = os.path.relpath(path, location).replace(os.sep, "/")
        for dist in distinfo.distributions(location):
            if dist.kind != "dist-info" or not dist.records(rel):
                continue
            rows = _rows(dist)
            row = rows.get(rel) if rows else None
            return dist, bool(row) and _matches(path, row[0], row[1]) is True
        return None, False

    # -- the moves
    def add(self, path: str, why: str) -> bool:
        if any(m.path == path for m in self.moves):
            return False
        if path in self.interpreter:
            self.leave(path, "the interpreter itself")
            return False
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise UsageError("cannot read %s (%s)" % (path, exc.strerror or exc)) from None
        if stat.S_ISDIR(st.st_mode):
            self.leave(path, "a directory")
            return False
        self.moves.append(FileFacts.make(path=path, why=why))
        return True

    def remove(self, dist: Distribution, payload: set[str], required: bool = False) -> None:
        """Add ``dist``'s files, as its RECORD vouches for them (see the module
        docstring); ``payload``: files moved whatever their hash."""
        if any(d.path == dist.path for d in self.dists):
            return
        rows = _rows(dist)
        own = os.path.basename(dist.path.rstrip("/")) + "/RECORD"
        if rows is None or own not in rows:
            why = "its RECORD is missing or does not list itself (no installer wrote it)"
            if required:
                raise UsageError("%s %s cannot be removed by its RECORD: %s" % (
                    dist.name, dist.version or "", why))
            self.leave(dist.path, "the metadata of %s %s: %s" % (
                dist.name, dist.version or "", why))
            return
        self.dists.append(dist)
        location = dist.location
        real_location = os.path.realpath(location)
        scripts = os.path.realpath(self.target.scripts) if self.target.scripts else None
        shared = set()
        for other in distinfo.distributions(location):
            if other.path != dist.path:
                shared.update(other.files() or ())
        paths = {rel: os.path.normpath(os.path.join(location, rel)) for rel in rows}
        listed = set(paths.values())
        dpkg = owners.dpkg_owners(sorted(p for p in listed if owners.dpkg_candidate(p)))
        sources = set()
        for rel, path in sorted(paths.items()):
            digest, _size = rows[rel]
            parent = os.path.realpath(os.path.dirname(path))
            if not (_under(parent, real_location) or parent == scripts):
                self.leave(path, "listed by %s's RECORD outside its directory and the "
                           "scripts directory" % dist.name)
                continue
            if rel in shared:
                self.leave(path, "listed by another distribution's RECORD too")
                continue
            if path in dpkg:
                self.leave(path, "a file of the Debian package %s" % dpkg[path])
                continue
            if not os.path.lexists(path):
                continue
            derived = _derived(path, listed)
            if path not in payload and not derived and not _under(path, dist.path):
                verdict = _matches(path, digest, _size)
                if verdict is not True:
                    self.leave(path, verdict or "its RECORD gives no hash of it")
                    continue
            self.add(path, "distribution" if path not in payload else "module")
            if path.endswith(".py") and any(m.path == path for m in self.moves):
                sources.add(path)
        for source in sorted(sources):  # the bytecode of each module that goes
            cache = os.path.join(os.path.dirname(source), "__pycache__")
            stem = os.path.basename(source)[:-3] + "."
            with contextlib.suppress(OSError):
                for name in sorted(os.listdir(cache)):
                    if name.startswith(stem) and name.endswith(".pyc") and \
                            name.count(".") == stem.count(".") + 1 + (".opt-" in name):
                        self.add(os.path.join(cache, name), "distribution")
        with contextlib.suppress(OSError):  # the rest of its metadata directory
            for walked, _dirs, names in os.walk(dist.path):
                for name in sorted(names):
                    self.add(os.path.join(walked, name), "distribution")

    def leave(self, path: str, why: str) -> None:
        """A file that stays, and why (said, and in the record)."""
        self.left.append(Left.make(path=path, why=why))

    def said(self) -> list[str]:
        return ["  left %s: %s" % (x.path, x.why) for x in self.left]

    # -- doing it
    def run(self) -> str:
        """Move the files; the quarantine's directory."""
        for index, move in enumerate(self.moves, 1):
            parent = os.path.dirname(move.path)
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UsageError("cannot move %s: %s is not writable by this user (run it "
                                 "as root: sudo sitewarden quarantine ...)" % (move.path, parent))
            facts = _facts(move.path)
            for _key, attr, _kind in FileFacts.FIELDS:
                value = getattr(facts, attr)
                if value is not None:
                    setattr(move, attr, value)
            move.stored, move.state = "%s/%04d" % (FILES, index), "planned"
        directory, fd = _make_quarantine(base_dir(), self.finding.id[:SHOWN])
        record = self.record()
        moved = 0
        try:
            _write_record(fd, record)
            dirs: list[str] = []
            for move in self.moves:
                move.how = _move_into(move.path, fd, move.stored, move)
                move.state = "moved"
                moved += 1
                dirs.append(os.path.dirname(move.path))
            roots = self.roots()
            record.directories = _remove_empty(dirs, roots | self.kept(), roots)
        except BaseException:
            with contextlib.suppress(OSError):
                if moved:  # what was moved stays restorable: --restore DIR
                    _write_record(fd, record)
                else:
                    _remove_quarantine(fd, directory, record)
            os.close(fd)
            raise
        _write_record(fd, record)
        os.close(fd)
        return directory

    def roots(self) -> set[str]:
        """The directories below which emptied directories are removed: the site
        directories, the distributions' and the scripts directory (never ``/etc``...)."""
        roots = set(self.sites) | {d.location for d in self.dists}
        if self.target.scripts:
            roots.add(self.target.scripts)
        return {os.path.normpath(r) for r in roots if r and r != os.sep}

    def kept(self) -> set[str]:
        """Directories never removed, empty or not: every ``sys.path`` entry."""
        return {os.path.normpath(e) for e in self.entries}

    def record(self) -> QuarantineRecord:
        return QuarantineRecord.make(
            format=FORMAT, id=self.finding.id, finding=self.finding,
            interpreter=self.target.executable, host=self.report.host,
            time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), user=os.geteuid(),
            distributions=[RemovedDistribution.make(name=d.name, version=d.version,
                                                    metadata=d.path) for d in self.dists],
            files=self.moves, directories=[], left=self.left, then=self.after)


def _runs(f: StartupFile) -> set[str]:
    """The module files ``f``'s code runs, as ``check`` read them."""
    out = set(f.module_files or ())
    for line in f.lines or ():
        if line.kind in ("import", "entry-point"):
            out.update(line.module_files or ())
    return out


def _source(path: str) -> str | None:
    """The source file whose bytecode ``path`` is (``__pycache__/NAME.TAG.pyc``), or None."""
    if not path.endswith(".pyc") or os.path.basename(os.path.dirname(path)) != "__pycache__":
        return None
    return os.path.join(os.path.dirname(os.path.dirname(path)),
                        os.path.basename(path).split(".")[0] + ".py")


def _derived(path: str, listed: set[str]) -> bool:
    """Is ``path`` the bytecode of a module the same distribution lists?"""
    return _source(path) in listed


def _rows(dist: Distribution) -> dict[str, tuple[str, str]] | None:
    """``{path as listed: (hash, size)}`` of ``dist``'s RECORD, or None without one."""
    try:
        text = dist._member("RECORD") if dist.kind == "dist-info" else None
    except (OSError, ValueError):
        text = None
    if text is None:
        return None
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        row = integrity._record_row(line)
        if row and row[0]:
            out[row[0]] = ((row[1] if len(row) > 1 else "").strip(),
                           (row[2] if len(row) > 2 else "").strip())
    return out


def _matches(path: str, digest: str, size: str = "") -> bool | str | None:
    """True when the file ``path`` has the RECORD's ``digest`` (and size); else what
    differs, in words; None when the RECORD gives no hash to check (an unhashed
    metadata file is its own)."""
    algorithm, _, value = digest.partition("=")
    if not value or algorithm in ("md5", "sha1"):
        return True if os.path.basename(path) in UNHASHED else None
    try:
        h = hashlib.new(algorithm)
    except ValueError:
        return None
    try:
        n = _hash_file(path, h)
    except OSError as exc:
        return "unreadable (%s)" % (exc.strerror or exc)
    import base64  # only once a RECORD's hash is compared

    actual = base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode("ascii")
    if actual != value:
        return "changed since installed: %s=%s, its RECORD says %s" % (algorithm, actual,
                                                                       digest)
    if size.isdigit() and int(size) != n:
        return "changed since installed: %d bytes, its RECORD says %s" % (n, size)
    return True


