"""PEP 668's second rule: installers change files only in their own scheme.

Once an installer starts in this process (never before: ordinary processes
pay nothing), an audit hook refuses, with ``PermissionError``, any write,
rename, deletion or permission change under the protected directories: the
standard library and every site directory that is not one the installer
writes to (Debian's ``/usr/lib/python3/dist-packages``...).  Audit hooks can't
be removed, so the hook is added once and checks a flag.  Runtime module.
"""

import os
import sys

from .. import _swallowed
from ..facts.marker import scheme_paths


class _Watch:
    """The write watch of this process: armed for one install, what it protects, what it
    saw written into the scheme's own directories."""

    __slots__ = ("armed", "hooked", "protected", "own", "errno", "written")

    def __init__(self):
        self.armed = self.hooked = False
        self.protected, self.own, self.errno, self.written = None, [], None, set()


_state = _Watch()


def scheme_dirs():
    """``(own, protected)`` real paths: the directories installers of this
    interpreter may write to (the default scheme's purelib/platlib and the user
    site), and the stdlib plus every site directory that is not one of those.

    Every directory is judged by its real path.  The scheme's own purelib/platlib
    are carved out of the protected directories (on most builds ``site-packages``
    lives inside the standard library directory); the user site is not: one that
    resolves into the standard library or a distro directory (``PYTHONUSERBASE=/usr``,
    a user site linked to ``/usr/lib/python3/dist-packages``) is theirs, not the
    installer's, unless it resolves into the scheme's own directories."""
    import site  # stdlib: loaded at startup, unless -S (then deferred to here)

    paths = scheme_paths()
    scheme_own = _reals([paths.get("purelib"), paths.get("platlib")])
    candidates = [paths.get("stdlib"), paths.get("platstdlib")]
    try:
        candidates.extend(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site.py
        pass
    protected = []
    for real in _reals(candidates):
        if real not in protected and _under(real, scheme_own) is None:
            protected.append(real)
    own = list(scheme_own)
    try:
        user = site.getusersitepackages()
    except AttributeError:  # an old virtualenv's site.py
        user = None
    for real in _reals([user]):
        if real not in own and (_under(real, scheme_own) is not None
                                or _under(real, protected) is None):
            own.append(real)
    return own, protected


def _reals(paths):
    """The real paths of ``paths`` (None and empty ones left out), in order, once each."""
    out = []
    for d in paths:
        real = os.path.realpath(d) if d else None
        if real and real not in out:
            out.append(real)
    return out


def own_dirs():
    """Directories installers of this interpreter may write to."""
    return scheme_dirs()[0]


def judge(paths):
    """Where files installed into ``paths`` land, as ``(verdict, directory)``:
    ``("protected", d)`` in the standard library or a distro directory (PEP 668's
    rule 2: no installer may write there, override or not), ``("interpreter", d)`` in
    one of the interpreter's own site directories (its scheme's or the user site:
    PEP 668's rule 1 applies), else ``(None, None)``.  Real paths are compared, so a
    symbolic link, ``--root /`` or a prefix that resolves into the interpreter counts."""
    own, protected = scheme_dirs()
    found = (None, None)
    for p in paths:
        if not p:
            continue
        try:
            real = os.path.realpath(os.fsdecode(p))
        except (OSError, TypeError, ValueError):  # not a path
            continue
        mine = _under(real, own)
        theirs = _under(real, protected)
        if theirs is not None and not _inside(mine, theirs):
            return "protected", theirs
        if mine is not None and found[0] is None:
            found = ("interpreter", mine)
    return found


def change_root(root, path):
    """``path`` moved under ``root``, as pip's, distutils' and installer's
    ``--root``/``--destdir`` do."""
    if not root:
        return path
    return os.path.join(root, os.path.splitdrive(path)[1].lstrip(os.sep))


def _under(path, roots):
    """The deepest of ``roots`` that is ``path`` or holds it, or None."""
    found = None
    for root in roots:
        if (path == root or path.startswith(root + os.sep)) and (
                found is None or len(root) > len(found)):
            found = root
    return found


def _inside(mine, theirs):
    """An own directory ``mine`` carves a path out of the protected ``theirs`` when it
    lies inside it (``site-packages`` in the standard library directory), not when it
    holds it (a user site that resolves to ``/usr/lib`` holds the standard library)."""
    return mine is not None and mine != theirs and mine.startswith(theirs + os.sep)


def protected_root(path, ancestors=False):
    """The protected directory ``path`` is in (or, with ``ancestors``, holds), or None.

    The installer's own directories are carved out of the protected ones: on
    most builds ``site-packages`` lives inside the stdlib directory."""
    if _state.protected is None:
        _state.own, _state.protected = scheme_dirs()
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (OSError, TypeError, ValueError):  # not a path
        return None
    root = _under(real, _state.protected)
    if root is not None and _inside(_under(real, _state.own), root):
        root = None
    if root is None and ancestors:
        for protected in _state.protected:
            if protected.startswith(real + os.sep):
                return protected
    return root


def _is_write(mode, flags):
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    if isinstance(flags, int):
        return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
    return False


#: Events that remove or move what they name, and so everything below it.
_TREE_EVENTS = ("os.rmdir", "os.rename", "shutil.rmtree", "shutil.move")

# event -> indexes of the path arguments that get modified
_PATH_EVENTS = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.mkdir": ((0, 2),),
    "os.rename": ((0, 2), (1, 3)),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.truncate": ((0, None),),
    "os.utime": ((0, 3),),
    "os.symlink": ((1, 2),),
    "os.link": ((1, 3),),
    "shutil.rmtree": ((0, None),),
    "shutil.move": ((0, None), (1, None)),
    "shutil.copyfile": ((1, None),),
    "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),),
}
"""event -> ``(index of a modified path, index of its dir_fd or None)`` pairs."""


def _resolve(path, dir_fd):
    """A path relative to a directory descriptor (``shutil.rmtree`` works so), made
    absolute; None when it cannot be (then it is judged as given)."""
    if dir_fd is None or not isinstance(dir_fd, int) or os.path.isabs(os.fsdecode(path)):
        return path
    try:
        return os.path.join(os.readlink("/proc/self/fd/%d" % dir_fd), os.fsdecode(path))
    except OSError:
        return None


def _audit(event, args):
    if not _state.armed:
        return
    if event == "open":
        if len(args) < 3 or not _is_write(args[1], args[2]):
            return
        paths = (args[0],)
    else:
        indexes = _PATH_EVENTS.get(event)
        if indexes is None:
            return
        paths = tuple(
            _resolve(args[i], args[fd] if fd is not None and fd < len(args) else None)
            for i, fd in indexes if i < len(args))
    for path in paths:
        if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
            continue  # file descriptors, or a dir_fd-relative path that cannot be resolved
        root = protected_root(path, ancestors=event in _TREE_EVENTS)
        if root is not None:
            errno = _state.errno
            raise PermissionError(
                errno.EACCES,
                "sitewarden: %s is in %s, which the installer must not change (PEP 668: "
                "installers modify only the directories of the scheme they install into)"
                % (os.fsdecode(path), root),
                os.fsdecode(path),
            )
        _note_written(path)


def _note_written(path):
    """Remember the top-level entry of an own directory that this install changed."""
    try:
        real = os.path.realpath(os.fsdecode(path))
        for own in _state.own:
            if real.startswith(own + os.sep):
                _state.written.add((own, real[len(own) + 1:].split(os.sep, 1)[0]))
                return
    except Exception:
        _swallowed("noting %r for the install report" % (path,))


def written():
    """``{(own directory, top-level entry)}`` changed since :func:`arm`."""
    return set(_state.written)


def arm():
    """Start refusing changes to protected directories in this process.

    Everything the hook needs is imported here: pip 26.3 refuses imports
    once installation has started."""
    import errno  # stdlib, imported here: pip 26.3 refuses imports once it installs

    _state.errno = errno
    if not _state.hooked:
        sys.addaudithook(_audit)
        _state.hooked = True
    _state.own, _state.protected = scheme_dirs()
    _state.written = set()
    _state.armed = True
