"""The file operations of ``sitewarden quarantine`` (:mod:`.quarantine`): each file
moved into the quarantine and back by a rename where both are on one filesystem, else
a copy, synced and checked, then an unlink; never through a symbolic link
(``O_NOFOLLOW``, directory descriptors); the quarantine a directory only its owner may
enter, under directories no other user may change; its ``record.json`` replaced
atomically.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import time

from ..facts.records import Finding, Record
from .errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Iterator


def _fields(*names: str) -> tuple[tuple[str, str, Any], ...]:
    return tuple((name, name, None) for name in names)


#: Where root's quarantines are kept (a directory only root may enter).
SYSTEM_DIR = "/var/lib/sitewarden/quarantine"
#: Another directory for them (a test's, an image build's): made 0700 like the others.
ENV = "SITEWARDEN_QUARANTINE_DIR"
RECORD = "record.json"
FILES = "files"
#: The record's format (``format`` in ``record.json``).
FORMAT = 1
#: The findings whose file ``quarantine`` takes out of every start (:mod:`.quarantine_plan`).
STARTUP_KINDS = ("dangerous-startup-code", "unproven-startup-code", "unowned-startup-code",
                 "distribution-startup-code", "startup-file-modified",
                 "startup-module-modified", "startup-line-fails", "startup-file-undecodable",
                 "startup-file-too-large", "startup-file-special", "unread-startup-code")
#: The findings whose winning copy's distribution it removes.
SHADOW_KINDS = ("shadowed-module", "hidden-namespace")
#: A distribution's metadata files that its RECORD lists without a hash.
UNHASHED = ("RECORD", "RECORD.jws", "RECORD.p7s")


def base_dir(environ: dict[str, str] | None = None) -> str:
    """Where this user's quarantines are: ``$SITEWARDEN_QUARANTINE_DIR``, else
    ``/var/lib/sitewarden/quarantine`` for root, ``$XDG_STATE_HOME/sitewarden/quarantine``
    (``~/.local/state/...``) for another user (quarantining the files of a target of
    their own)."""
    environ = os.environ if environ is None else environ
    if environ.get(ENV):
        return os.path.abspath(environ[ENV])
    if os.geteuid() == 0:
        return SYSTEM_DIR
    state = environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                          "state")
    return os.path.join(state, "sitewarden", "quarantine")


class FileFacts(Record):
    """A file as the quarantine keeps it: where it was (``path``), why it went (``why``:
    ``startup file``, ``module``, ``distribution``), where it is kept (``stored``,
    relative to the quarantine), ``state`` (``planned``, then ``moved``), ``how``
    (``rename``, ``copy``); ``type`` (``file``, ``symlink``...), ``mode`` (octal text),
    ``uid``, ``gid``, ``atime_ns``, ``mtime_ns``, ``size``, ``sha256`` (a file's) or
    ``link`` (where a link points)."""

    __slots__ = ("path", "why", "stored", "state", "how", "type", "mode", "uid", "gid",
                 "atime_ns", "mtime_ns", "size", "sha256", "link")
    FIELDS = _fields(*__slots__)
    OPTIONAL = ("how", "link", "sha256")

    def content(self) -> tuple[Any, ...]:
        """What must be equal for two files to be the same, byte for byte."""
        return self.type, self.sha256, self.link


class RemovedDirectory(Record):
    """A directory the quarantine left empty and removed: ``--restore`` makes it again."""

    __slots__ = ("path", "mode", "uid", "gid")
    FIELDS = _fields(*__slots__)


class Left(Record):
    """A file the quarantine did not move, and why."""

    __slots__ = ("path", "why")
    FIELDS = _fields(*__slots__)


class RemovedDistribution(Record):
    """A distribution whose files went into the quarantine."""

    __slots__ = ("name", "version", "metadata")
    FIELDS = _fields(*__slots__)


class QuarantineRecord(Record):
    """``record.json``: the finding, the interpreter, the host, the time, the user, the
    distributions removed, each file moved (:class:`FileFacts`), the directories removed,
    what was left, and the step that follows (``then``: apt's reinstall), if any."""

    __slots__ = ("format", "id", "finding", "interpreter", "host", "time", "user",
                 "distributions", "files", "directories", "left", "then")
    FIELDS = _fields("format", "id") + (("finding", "finding", Finding),) + _fields(
        "interpreter", "host", "time", "user") + (
        ("distributions", "distributions", RemovedDistribution),
        ("files", "files", FileFacts), ("directories", "directories", RemovedDirectory),
        ("left", "left", Left), ("then", "then", None))

    def moved(self) -> list[FileFacts]:
        return [f for f in self.files or () if f.state == "moved"]


def _hash_file(path: str, h: Any, dir_fd: int | None = None) -> int:
    """Feed the regular file at ``path`` (never through a link) to ``h``; its size."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        n = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return n
            h.update(chunk)
            n += len(chunk)
    finally:
        os.close(fd)


def _facts(path: str, dir_fd: int | None = None) -> FileFacts:
    """What the record keeps of a file: type, mode, owner, times, size, sha256 (a
    regular file) or where it points (a link)."""
    st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    facts = FileFacts.make(mode="%04o" % stat.S_IMODE(st.st_mode), uid=st.st_uid,
                           gid=st.st_gid, mtime_ns=st.st_mtime_ns, atime_ns=st.st_atime_ns,
                           size=st.st_size, type=_type_name(st.st_mode))
    if stat.S_ISLNK(st.st_mode):
        facts.link = os.readlink(path, dir_fd=dir_fd)
    elif stat.S_ISREG(st.st_mode):
        h = hashlib.sha256()
        _hash_file(path, h, dir_fd)
        facts.sha256 = h.hexdigest()
    return facts


def _type_name(mode: int) -> str:
    return ("file" if stat.S_ISREG(mode) else "symlink" if stat.S_ISLNK(mode)
            else "fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
            else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "other")


# ---------------------------------------------------------------- the files


def _under(path: str, directory: str) -> bool:
    directory = directory.rstrip(os.sep)
    return path == directory or path.startswith(directory + os.sep)


def _open_dir(path: str) -> int:
    """A descriptor of the directory ``path``, never through a link at its last part."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError("%s is a symbolic link: sitewarden never moves files through "
                             "one" % path) from None
        raise


def _trusted_dir(path: str) -> None:
    """Refuse a quarantine directory others may change (or replace): it not this user's
    alone, or a directory above it writable by others than its owner without the sticky
    bit, or owned by another user than this one or root."""
    euid = os.geteuid()
    current = path
    first = True
    while True:
        st = os.lstat(current)
        if first and (stat.S_ISLNK(st.st_mode) or st.st_uid != euid or
                      stat.S_IMODE(st.st_mode) & 0o077):
            raise UsageError("%s is not a directory only this user may enter (mode %04o, "
                             "owner %d): sitewarden keeps quarantined files in one" % (
                                 current, stat.S_IMODE(st.st_mode), st.st_uid))
        if (not first and st.st_uid not in (0, euid)) or (
                st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX):
            raise UsageError("%s may be changed by other users: sitewarden keeps no "
                             "quarantine under it" % current)
        first = False
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def _ensure_base(base: str) -> None:
    missing = []
    current = base
    while not os.path.lexists(current):
        missing.append(current)
        current = os.path.dirname(current)
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
    st = os.lstat(base)
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and \
            stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(base, 0o700)  # its owner's, made private: it holds no one else's files
    _trusted_dir(base)


def _make_quarantine(base: str, short: str) -> tuple[str, int]:
    """A new quarantine directory under ``base`` (made, 0700), and a descriptor of it."""
    try:
        _ensure_base(base)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        for n in range(100):
            name = "%s-%s%s" % (stamp, short, "" if not n else "-%d" % n)
            try:
                os.mkdir(os.path.join(base, name), 0o700)
                break
            except FileExistsError:
                continue
        else:
            raise UsageError("cannot make a new quarantine directory in %s" % base)
        directory = os.path.join(base, name)
        fd = _open_dir(directory)
        os.mkdir(FILES, 0o700, dir_fd=fd)
        return directory, fd
    except PermissionError as exc:
        raise UsageError("cannot make a quarantine in %s (%s): run it as root (sudo)" % (
            base, exc.strerror or exc)) from None


def _write_record(fd: int, record: QuarantineRecord) -> None:
    """``record.json`` in the quarantine (descriptor ``fd``), replaced atomically."""
    data = (json.dumps(record.as_json(), indent=1, sort_keys=True) + "\n").encode(
        "utf-8", "surrogateescape")
    tmp = ".%s.tmp" % RECORD
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp, dir_fd=fd)
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
    try:
        os.write(out, data)
        os.fsync(out)
    finally:
        os.close(out)
    os.rename(tmp, RECORD, src_dir_fd=fd, dst_dir_fd=fd)
    os.fsync(fd)


def _move_into(path: str, qfd: int, stored: str, facts: FileFacts) -> str:
    """Move ``path`` into the quarantine as ``stored``: ``rename`` (the same filesystem)
    or ``copy`` (copied, synced, checked, then unlinked).  The file must be what
    :func:`_facts` found."""
    parent, name = os.path.split(path)
    pfd = _open_dir(parent)
    try:
        if _facts(name, pfd).content() != facts.content():
            raise UsageError("%s changed while being quarantined" % path)
        return _relocate(pfd, name, qfd, stored, facts, path)
    except PermissionError as exc:
        raise UsageError("cannot move %s (%s): run it as root (sudo sitewarden quarantine "
                         "...)" % (path, exc.strerror or exc)) from None
    finally:
        os.close(pfd)


def _relocate(src_fd: int, src: str, dst_fd: int, dst: str, facts: FileFacts,
              shown: str) -> str:
    """Move ``src`` (in directory ``src_fd``) to ``dst`` (in ``dst_fd``): a rename, else a
    copy with its mode, owner and times, synced and checked, then an unlink."""
    try:
        os.rename(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        os.fsync(dst_fd)
        return "rename"
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    if facts.type == "symlink":
        os.symlink(facts.link, dst, dir_fd=dst_fd)
    elif facts.type == "file":
        _copy(src_fd, src, dst_fd, dst, facts)
    else:
        raise UsageError("%s is a %s on another filesystem than the quarantine: it cannot "
                         "be moved there" % (shown, facts.type))
    os.fsync(dst_fd)
    os.unlink(src, dir_fd=src_fd)
    os.fsync(src_fd)
    return "copy"


def _copy(src_fd: int, src: str, dst_fd: int, dst: str, facts: FileFacts) -> None:
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_fd)
    try:
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                      dir_fd=dst_fd)
        try:
            h = hashlib.sha256()
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                h.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
            if h.hexdigest() != facts.sha256:
                raise UsageError("%s changed while being copied" % src)
            _set_facts(out, facts)
            os.fsync(out)
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _set_facts(fd: int, facts: FileFacts) -> None:
    """Mode, owner (as root) and times of the record, on the open file ``fd``."""
    if os.geteuid() == 0:
        os.fchown(fd, facts.uid, facts.gid)
    os.fchmod(fd, int(facts.mode, 8))
    os.utime(fd, ns=(facts.atime_ns, facts.mtime_ns))


def _remove_empty(dirs: list[str], keep: set[str], roots: set[str]) -> list[RemovedDirectory]:
    """Remove the directories in ``dirs`` (and their parents) left empty, deepest first,
    only below one of ``roots`` and never one of ``keep``; what they were, for
    ``--restore``."""
    removed = []
    todo = sorted(set(dirs), key=lambda d: (-d.count(os.sep), d))
    seen = set()
    while todo:
        directory = os.path.normpath(todo.pop(0))
        if directory in seen or directory in keep or directory == os.sep or \
                not any(_under(directory, r) for r in roots):
            continue
        seen.add(directory)
        try:
            st = os.lstat(directory)
            if not stat.S_ISDIR(st.st_mode) or os.listdir(directory):
                continue
            os.rmdir(directory)
        except OSError:
            continue
        removed.append(RemovedDirectory.make(path=directory, mode="%04o" % stat.S_IMODE(
            st.st_mode), uid=st.st_uid, gid=st.st_gid))
        todo.append(os.path.dirname(directory))
        todo.sort(key=lambda d: (-d.count(os.sep), d))
    return removed


# ---------------------------------------------------------------- the quarantines


def _quarantines(base: str) -> Iterator[tuple[str, QuarantineRecord]]:
    """Each quarantine under ``base`` with its record, oldest first."""
    try:
        names = sorted(os.listdir(base))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError("cannot list %s (%s)" % (base, exc.strerror or exc)) from None
    for name in names:
        directory = os.path.join(base, name)
        record = _load(directory, quiet=True)
        if record is not None:
            yield directory, record


def _load(directory: str, quiet: bool = False) -> QuarantineRecord | None:
    try:
        fd = _open_dir(directory)
    except (OSError, UsageError):
        if quiet:
            return None
        raise UsageError("%s is no quarantine (sitewarden quarantine --list)" % directory
                         ) from None
    try:
        rfd = os.open(RECORD, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
        with os.fdopen(rfd, "rb") as f:
            data = json.loads(f.read().decode("utf-8", "surrogateescape"))
        record = QuarantineRecord.from_json(data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError, AttributeError):
        record = None
    finally:
        os.close(fd)
    if record is None or record.format != FORMAT:
        if quiet:
            return None
        raise UsageError("%s has no %s this sitewarden reads: no quarantine of its" % (
            directory, RECORD))
    return record


def _check_restore(fd: int, entries: list[FileFacts]) -> tuple[list[str], set[str]]:
    """What stops the restore (a file changed in the quarantine, a place taken by other
    content), and the places that hold the same content already."""
    problems, there = [], set()
    for entry in entries:
        try:
            stored = _facts(entry.stored, fd)
        except OSError as exc:
            problems.append("%s is missing from the quarantine (%s)" % (
                entry.path, exc.strerror or exc))
            continue
        if stored.content() != entry.content():
            problems.append("the quarantined copy of %s is not what was moved (its sha256 "
                            "differs)" % entry.path)
            continue
        try:
            now = _facts(entry.path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append("cannot read %s (%s)" % (entry.path, exc.strerror or exc))
            continue
        if now.content() == entry.content():
            there.add(entry.path)
        else:
            problems.append("%s exists now with other content: remove or move it first"
                            % entry.path)
    return problems, there


def _remake_dir(d: RemovedDirectory) -> None:
    if os.path.isdir(d.path):
        return
    os.mkdir(d.path, int(d.mode, 8))
    dfd = _open_dir(d.path)
    try:
        if os.geteuid() == 0:
            os.fchown(dfd, d.uid, d.gid)
        os.fchmod(dfd, int(d.mode, 8))
    finally:
        os.close(dfd)


def _put_back(fd: int, entry: FileFacts) -> None:
    """``entry``'s file where it was, with its mode, owner and times, checked."""
    parent, name = os.path.split(entry.path)
    pfd = _open_dir(parent)
    try:
        _relocate(fd, entry.stored, pfd, name, entry, entry.path)
        if entry.type == "file":
            out = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=pfd)
            try:
                _set_facts(out, entry)
            finally:
                os.close(out)
        elif entry.type == "symlink" and os.geteuid() == 0:
            os.chown(name, entry.uid, entry.gid, dir_fd=pfd, follow_symlinks=False)
        if _facts(name, pfd).content() != entry.content():
            raise UsageError("%s is not what was quarantined after its restore" % (
                entry.path,))
    finally:
        os.close(pfd)


def _remove_quarantine(fd: int, directory: str, record: QuarantineRecord) -> None:
    """The emptied quarantine goes (its record too): nothing is left to restore."""
    for entry in record.files or ():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.stored, dir_fd=fd)
    with contextlib.suppress(OSError):
        os.rmdir(FILES, dir_fd=fd)
    os.unlink(RECORD, dir_fd=fd)
    os.rmdir(directory)
