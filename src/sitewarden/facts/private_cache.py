"""Files a ``check`` probe keeps between checks in the CLI's private cache (its payload).

What a probe learns that does not change from one check to the next is kept there: the
index of dpkg's startup files (:mod:`.owners`), the verdicts on startup lines
(:mod:`sitewarden.audit.line_checks`).  A file is trusted only as far as the code beside it: read
only from a directory and a file this user owns and nobody else may write, never
through a symbolic link; written whole, then renamed into place, so that a reader sees
a whole file or the one before.  Values are kept as ``marshal`` data (:func:`load`,
:func:`keep`).  Runs inside a target: module level imports ``os`` and ``sys``.
"""

import os
import sys

from .. import pathfacts

#: The probe's payload (the CLI's private cache), set by the probe; None elsewhere:
#: nothing is kept.
DIRECTORY = None


def is_private(st):
    """Is this (an ``lstat``/``fstat`` result) this user's and writable by nobody else?"""
    return st.st_uid == os.geteuid() and not st.st_mode & 0o022


#: Never a cache, whoever runs the CLI and however ``HOME`` or ``XDG_CACHE_HOME`` are
#: set (an older apt hook passed the Debian package's own directory): the trees package
#: managers and the administrator own (FHS), every interpreter's site directories there.
SYSTEM_TREES = ("/usr/", "/etc/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
                "/libx32/", "/boot/")


def in_system_tree(path):
    """Is the absolute path ``path`` in one of :data:`SYSTEM_TREES` (textually)?"""
    return os.path.join(path, "").startswith(SYSTEM_TREES)


def private_directory(directory):
    """``directory`` when it is this user's alone (not a link) and outside the system's
    trees, else None."""
    if directory is None or not isinstance(directory, str) or \
            in_system_tree(os.path.abspath(directory)):
        return None
    try:
        return directory if is_private(os.lstat(directory)) else None
    except OSError:
        return None


#: The largest kept file read back (the bundle of the probe's modules: ~1 MB).
MAX_KEPT = 1 << 26


def read(path, private=True):
    """The bytes of the kept file ``path``, or None (missing, a link, not a regular file,
    larger than :data:`MAX_KEPT`, or, ``private``, another user could have written it):
    read by :func:`..pathfacts.read_regular` (never a FIFO, never waiting).  The
    payload's own files (its bytecode, in a private directory) are read with
    ``private`` False."""
    data, st, _why = pathfacts.read_regular(path, MAX_KEPT, follow=False)
    return data if data is not None and (not private or is_private(st)) else None


def write(path, data, mode=0o600):
    """Keep ``data`` as ``path``: written beside it, then renamed there (``mode``: less
    the umask).  A file that cannot be kept costs the next check what keeping it saves,
    nothing more."""
    temp = "%s.%d" % (path, os.getpid())
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError:
        return
    try:
        try:
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


def load(path):
    """The value kept as ``path`` (:func:`read`, then ``marshal``), or None: no such
    file, or not marshal data.  Its caller checks that the value has the shape it wrote."""
    data = read(path)
    if not data:
        return None
    try:
        return sys.modules["marshal"].loads(data)  # built in, loaded at startup
    except (EOFError, ValueError, TypeError):  # not marshal data
        return None


def keep(path, value):
    """Keep ``value`` (strings, numbers, tuples, lists, dicts, code) as ``path`` (:func:`write`)."""
    write(path, sys.modules["marshal"].dumps(value))  # built in, loaded at startup


class Memo:
    """Answers that depend on a text alone (and the interpreter's version: in the file's
    name), kept from one check to the next as ``NAME`` in the probe's private cache: the
    answers of the last check, no more.  A subclass names its file (``NAME``), computes an
    answer (``answer``) and says what a kept one looks like (``valid``); a file that holds
    anything else is ignored."""

    NAME = None

    def __init__(self, directory):
        self.path, self.known, self.used = None, {}, {}
        if private_directory(directory) is not None:
            self.path = os.path.join(directory, self.NAME)
            kept = load(self.path)
            if type(kept) is dict and all(type(text) is str and self.valid(value)
                                          for text, value in kept.items()):
                self.known = kept

    @staticmethod
    def answer(text):
        raise NotImplementedError

    @staticmethod
    def valid(value):
        return False

    def get(self, text, make=None):
        """The answer for ``text``: kept, else computed (by ``make()`` when given: a key
        that names what the answer is about, not the text itself); kept for the next
        check."""
        found = self.known.get(text)
        if found is None:
            found = self.answer(text) if make is None else make()
        self.used[text] = found
        return found

    def save(self):
        """Keep this check's answers, when they are not what the file holds already."""
        if self.path is not None and self.used != self.known:
            keep(self.path, self.used)

