"""Emit sitewarden's warnings: once per key per process, through ``warnings``.

Thread-safe without ``threading``: a lock from ``_thread`` (built in, loaded at
startup) guards only the check-and-set of the key, never an import nor a
call that could block, so racing imports cannot deadlock on it.  The warning
is attributed to the line that imported the module (frames of sitewarden and
of ``importlib._bootstrap`` are skipped) and to the module ``sitewarden``, so
``-W``/``PYTHONWARNINGS`` filters (``ignore:::sitewarden``) and pytest's
capture work as for any other warning.  Runtime module.
"""

import os
import sys

from .. import _swallowed

_claimed = set()
_lock = []
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the sitewarden package


def init_lock():
    """Create the lock (called from the started hooks, before threads race)."""
    if not _lock:
        _lock.append(sys.modules["_thread"].allocate_lock() if "_thread" in sys.modules
                     else __import__("_thread").allocate_lock())
    return _lock[0]


def claim(key):
    """True the first time ``key`` is claimed in this process, False after."""
    lock = _lock[0] if _lock else init_lock()
    with lock:
        if key in _claimed:
            return False
        _claimed.add(key)
        return True


def _internal(filename):
    return "importlib" in filename and "_bootstrap" in filename


def _ours(filename):
    return filename.startswith(_HERE + os.sep)


#: Modules that import on someone's behalf: the warning points past them.
_MACHINERY = frozenset(("importlib", "importlib.util", "importlib._bootstrap",
                        "importlib._bootstrap_external", "_frozen_importlib",
                        "_frozen_importlib_external", "runpy", "pkgutil", "zipimport"))


def stacklevel():
    """``(stacklevel, frame)``: the ``stacklevel`` that makes a ``warnings.warn``
    called by the caller of this function point at the first frame outside
    sitewarden (the importer), and that frame."""
    try:
        frame = sys._getframe(1)  # the function that will call warnings.warn: level 1
    except (AttributeError, ValueError):  # no frames (another implementation)
        return 1, None
    level = 1
    frame = frame.f_back
    while frame is not None:
        filename = frame.f_code.co_filename
        if _internal(filename):  # warnings skips these without counting them
            frame = frame.f_back
            continue
        level += 1
        if not _ours(filename) and frame.f_globals.get("__name__") not in _MACHINERY:
            return level, frame
        frame = frame.f_back
    # Only import machinery called the import (``python -m pkg``: runpy): no line of
    # the program to point at, so the warning says ``sys:1``, as CPython's own do.
    return level + 1, None


def emit(kind, key, message, category_name, where=None):
    """Warn ``message`` (category ``sitewarden.<category_name>``) once per ``key``,
    unless ``SITEWARDEN_SILENCE`` silences ``kind``, or ``key`` (a shadow's module
    name) is acknowledged there or in a silence file (``settings``: read now, once per
    process, never at startup; a deployment's only while no package's record lists it:
    :func:`_lister`).  Returns True if it warned.

    The warning points at ``where`` (``(filename, lineno)``: the ``.pth`` line that
    imported a module at startup), else at the line that imported the module.  Its
    module, for filters, is ``sitewarden`` (``-W ignore:::sitewarden``: a standard
    filter that CPython accepts at startup, unlike a category of a package that is
    not importable yet)."""
    from .. import settings  # not at module level: a name that shadows nothing never warns

    why = settings.silenced(kind, key, lister=_lister)
    if why:
        if claim(("silenced", kind, key)):
            from .. import failopen  # only for a silenced warning: says why under DEBUG

            failopen.tell("%s about %r not shown: silenced by %s" % (category_name, key, why))
        return False
    if not claim((kind, key)):
        return False
    import warnings  # only once a warning is due (not when silenced)

    package = sys.modules["sitewarden"]
    category = getattr(package, category_name)
    if claim("warnoptions"):
        apply_warnoptions(package, warnings)
    module_globals = None
    if where is not None:
        filename, lineno = where
    else:
        frame = stacklevel()[1]
        if frame is not None:
            filename, lineno = frame.f_code.co_filename, frame.f_lineno
            module_globals = _source_globals(frame.f_globals)
        else:  # where warnings itself puts a warning with no frame
            filename, lineno = ("<sys>", 0) if sys.version_info >= (3, 13) else ("sys", 1)
    message = wrapped(message, "%s:%s: %s: " % (filename, lineno, category_name))
    try:
        warnings.warn_explicit(message, category, filename, lineno, module=package.__name__,
                               module_globals=module_globals)
    except category:
        # An "error" filter: the guard never fails an import (it fails open),
        # so the warning is shown instead of raised.
        warnings.showwarning(message, category, filename, lineno)
    return True


def _lister(path):
    """The distribution whose record lists the deployment's silence file ``path`` (then a
    package put it there: ``settings.refusal``)."""
    from ..facts.distinfo import lister  # only when a deployment's file would silence one

    return lister(path)


#: How far a warning's continuation lines are indented: deeper than the source line
#: ``warnings`` prints under it (two spaces), so a reader tells them apart.
INDENT = 4


def wrapped(message, head):
    """``message`` wrapped as ``warnings`` will print it after ``head`` (``FILE:LINE:
    Category: ``): no line wider than a screen, continuation lines indented by
    :data:`INDENT` (``records.unwrap`` joins them again)."""
    from ..facts.text import wrap  # reason: a warning's text, once one is due

    lines = wrap(message, head, indent=INDENT)
    return "\n".join([lines[0][len(head):]] + lines[1:])


_ACTIONS = ("default", "always", "ignore", "module", "once", "error")


def apply_warnoptions(package, warnings):
    """Apply the ``-W``/``PYTHONWARNINGS`` options that name a sitewarden category.

    CPython processes those options at startup, before the site directories
    are on ``sys.path``, so a category of a package installed there is
    rejected ("Invalid -W option ignored").  Applied again here, on the first
    warning, in order, as ``warnings`` (the module, passed by :func:`emit`) itself
    would have.
    """
    prefix = package.__name__ + "."
    for option in getattr(sys, "warnoptions", ()):
        try:
            parts = [p.strip() for p in str(option).split(":")]
            if len(parts) < 3 or len(parts) > 5 or not parts[2].startswith(prefix):
                continue
            parts += [""] * (5 - len(parts))
            action, message, category, module, lineno = parts
            if action == "all":
                action = "always"
            elif not action:
                action = "default"
            else:
                action = next((a for a in _ACTIONS if a.startswith(action)), None)
            cls = getattr(package, category[len(prefix):], None)
            if action is None or not (isinstance(cls, type) and issubclass(cls, Warning)):
                continue
            import re  # only for an option that names a sitewarden category

            warnings.filterwarnings(action, re.escape(message), cls,
                                    re.escape(module) + r"\Z" if module else "",
                                    int(lineno) if lineno.isdigit() else 0)
        except Exception:
            _swallowed("the -W option %r" % (option,))
            continue


def _source_globals(module_globals):
    """What ``warn_explicit`` may ask for the importing line's source (a zipped
    module's): the module's loader under the name it was loaded as.  ``__main__``
    run with ``-m`` or ``runpy`` is loaded as its real name, and its loader refuses
    ``__main__`` (``ImportError``, raised out of ``warn_explicit``); none for code
    without a spec (``-c``, stdin, ``exec``): linecache reads files by name."""
    spec = module_globals.get("__spec__")
    loader = getattr(spec, "loader", None)
    name = getattr(spec, "name", None)
    if loader is None or not isinstance(name, str):
        return None
    return {"__name__": name, "__loader__": loader, "__spec__": spec}
