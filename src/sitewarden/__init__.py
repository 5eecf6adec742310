"""sitewarden: PEP 668 enforced inside the interpreter.

This module is what runs at every start of a guarded interpreter:
``sitewarden.pth`` (or ``sitewarden.start``, PEP 829) imports it and calls
:func:`activate`, which puts one plain-class finder at the front of
``sys.meta_path``.  Startup is sacred, so it imports only ``os`` and ``sys``,
scans no directory, reads no file and creates one class; everything else
(the public warning classes included) loads on first need.  The finder never
finds anything: it watches imports and hands the few that matter to modules
imported then.  Everything here fails open: an exception in the guard must
never break the interpreter (blocks, which fail closed, live in the
installer hooks).
"""

import os
import sys

__version__ = "0.1.0"

__all__ = [
    "ExternallyManagedError",
    "PathWarning",
    "ShadowWarning",
    "SitewardenWarning",
    "__version__",
    "activate",
    "deactivate",
]

#: The entry point named by ``sitewarden.start`` (PEP 829) and ``sitewarden.pth``.
#: Its name never changes.
ENTRY_POINT = "sitewarden:activate"

_PUBLIC_CLASSES = ("SitewardenWarning", "ShadowWarning", "PathWarning", "ExternallyManagedError")


def __getattr__(name):
    # PEP 562: the public classes are created on first use, not at startup.
    if name in _PUBLIC_CLASSES:
        from . import categories

        return getattr(categories, name)
    raise AttributeError("module 'sitewarden' has no attribute %r" % (name,))


#: Fully qualified module names whose import arms a hook, mapped to the
#: ``module:function`` (inside this package) that patches the module right
#: after it executed (see ``patching``).  Looked up with one dict access per
#: import; nothing of the hook is imported until a watched module is.
HOOKS = {
    # pip 9
    "pip.commands.install": "pip_guard:on_install_module",
    "pip.commands.uninstall": "pip_guard:on_uninstall_module",
    "pip.utils": "pip_guard:on_misc_module",
    # pip 10 and later
    "pip._internal.commands.install": "pip_guard:on_install_module",
    "pip._internal.commands.uninstall": "pip_guard:on_uninstall_module",
    "pip._internal.utils.misc": "pip_guard:on_misc_module",
    "pip._internal.req.req_uninstall": "pip_guard:on_req_uninstall_module",
    "ensurepip": "ensurepip_guard:on_module",
    "setuptools.command.develop": "setuptools_guard:on_develop_module",
    "setuptools.command.easy_install": "setuptools_guard:on_easy_install_module",
    "distutils.command.install": "setuptools_guard:on_install_module",
    "setuptools._distutils.command.install": "setuptools_guard:on_install_module",
    "installer._core": "installer_guard:on_core_module",
}


#: Called once, at the first import after ``site`` has finished building
#: ``sys.path`` (``module:function`` inside this package), with the finder.
STARTED_HOOKS = ["_watch:started"]


def _resolve(target):
    """``"module:function"`` inside sitewarden -> the function, imported now."""
    module_name, _, function = target.partition(":")
    module = __import__("sitewarden." + module_name, fromlist=[function])
    return getattr(module, function)


def _call(target, *args):
    """Import ``sitewarden.<module>`` on first need and call ``function``."""
    return _resolve(target)(*args)


class SitewardenFinder:
    """Watches imports; never claims one (``find_spec`` returns None, or the
    spec another finder produced with a patch hook attached)."""

    _sitewarden_finder = True

    def __init__(self):
        self.started = False
        self._busy = set()  # thread idents inside the finder: no re-entrancy
        #: Per-import checks installed by STARTED_HOOKS: callables taking the
        #: top-level module name.  Empty until then.
        self.top_level_checks = []

    def __repr__(self):
        return "<sitewarden finder>"

    def find_spec(self, fullname, path=None, target=None):
        hook = HOOKS.get(fullname)
        if hook is None and self.started and (path is not None or not self.top_level_checks):
            return None
        # _thread is built in and loaded at startup; threading is not (gevent needs that).
        thread = sys.modules.get("_thread")
        ident = thread.get_ident() if thread is not None else 0
        if ident in self._busy:
            return None
        self._busy.add(ident)
        try:
            try:  # warnings fail open: nothing here may break an import
                if not self.started and not _site_running():
                    self.started = True
                    _move_to_front(self)
                    for name in STARTED_HOOKS:
                        try:
                            _call(name, self)
                        except Exception:
                            pass
                if path is None and "." not in fullname:
                    for check in self.top_level_checks:
                        try:
                            check(fullname)
                        except Exception:
                            pass
            except Exception:
                pass
            if hook is not None:
                # Installer hooks fail closed: their exceptions propagate.
                return _call("patching:spec_with_hook", self, fullname, path, target, hook)
            return None
        finally:
            self._busy.discard(ident)

    def invalidate_caches(self):
        pass


def _move_to_front(finder):
    """Finders that later .pth files put ahead (``_distutils_hack``) must not
    hide watched modules from the guard.  Safe during the import system's
    iteration: entries after ours keep their indexes."""
    meta_path = sys.meta_path
    if meta_path and meta_path[0] is not finder and finder in meta_path:
        meta_path.remove(finder)
        meta_path.insert(0, finder)


def _site_running():
    """True while the interpreter is still starting: ``site`` is building
    ``sys.path`` (a frame runs in site's globals: ``.pth`` files,
    ``sitecustomize``), or the import comes from the interpreter's C code with
    no Python caller at all (3.13 imports ``linecache`` for ``-c``): such an
    import is not the program's first."""
    site = sys.modules.get("site")
    site_globals = site.__dict__ if site is not None else None
    try:
        frame = sys._getframe(2)
    except (AttributeError, ValueError):
        return False
    python_caller = False
    while frame is not None:
        if frame.f_globals is site_globals:
            return True
        if not python_caller and not frame.f_code.co_filename.startswith("<frozen importlib"):
            python_caller = True
        frame = frame.f_back
    return not python_caller


def installed_finder():
    """The guard's finder on ``sys.meta_path``, or None."""
    for finder in sys.meta_path:
        if getattr(finder, "_sitewarden_finder", False) is True:
            return finder
    return None


def activate():
    """Install the guard in this process.  Idempotent; never raises."""
    try:
        if getattr(sys, "frozen", False):
            return None
        if os.environ.get("SITEWARDEN_DISABLE", "0") not in ("", "0"):
            return None
        finder = installed_finder()
        if finder is None:
            finder = SitewardenFinder()
            sys.meta_path.insert(0, finder)
        return finder
    except Exception:
        return None


def deactivate():
    """Remove the guard's finder from ``sys.meta_path`` (tests, embedding)."""
    sys.meta_path[:] = [
        f for f in sys.meta_path if getattr(f, "_sitewarden_finder", False) is not True
    ]
