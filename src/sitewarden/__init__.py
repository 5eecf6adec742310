"""sitewarden: PEP 668 enforced inside the interpreter.

Every start of a guarded interpreter runs this module (``sitewarden.pth``
imports it, and it activates itself while ``site`` runs; PEP 829's
``sitewarden.start`` and the sitecustomize block call :func:`activate`), so it
imports only ``sys``, holds no other module (a finder that keeps ``os`` alive
makes every interpreter exit slower), reads no file and creates no class: the
finder it puts on ``sys.meta_path`` is this module itself (the finder protocol
asks only for a ``find_spec`` attribute).  Once started, the finder passes a
name that is not a key of ``HOOKS``, the one table of watched names, through
with one dict membership test; it never finds anything itself.  Warnings fail
open; blocks, in the installer hooks, fail closed.  Measured in benchmarks/.
"""

import sys

__version__ = "0.2.0.dev0"

#: The entry point named by ``sitewarden.start`` and ``sitewarden.pth``; never renamed.
ENTRY_POINT = "sitewarden:activate"

#: Every watched module name -> its hook.  Written here: the installers' modules, the one
#: place that names them, each -> ``"hook [starts] [entry ...]"`` (one string: a tuple
#: per module costs every start some 13,000 instructions more, benchmarks/):
#:   ``hook``, the ``module:function`` in this package that patches the module once it
#:   executed (``guard/hooked.py`` imports it then: named, so that startup imports no
#:   guard module);
#:   ``starts``, when importing the module starts an install (rather than reading paths,
#:   as pip does with ``distutils.command.install``): without ``guard/hooked.py`` the
#:   finder refuses that import itself;
#:   ``entry``, what a damaged runtime makes refuse in the module: a class's method
#:   (``InstallCommand.run``) or a function (``bootstrap``); with none, it imports the
#:   module untouched.
#: Added at run time by detection: through ``_watch_module``, a callable (the
#: standard-library names shadowed ahead of the standard library, ``pathcheck``; the
#: duplicated submodules of a namespace package, ``shadowing``); or None, a name of the
#: shadow index, checked before it is imported (``_watch``).
HOOKS = {
    "pip.commands.install":  # pip 9
        "guard.pip_guard:on_install_module starts InstallCommand.run",
    "pip.commands.uninstall": "guard.pip_guard:on_uninstall_module starts UninstallCommand.run",
    "pip.utils": "guard.pip_guard:on_misc_module",
    "pip._internal.commands.install":  # pip 10+
        "guard.pip_guard:on_install_module starts InstallCommand.run",
    "pip._internal.commands.uninstall":
        "guard.pip_guard:on_uninstall_module starts UninstallCommand.run",
    "pip._internal.utils.misc": "guard.pip_guard:on_misc_module",
    "pip._internal.req.req_uninstall": "guard.pip_guard:on_req_uninstall_module",
    "ensurepip": "guard.ensurepip_guard:on_module starts bootstrap _bootstrap",
    "setuptools.command.develop": "guard.setuptools_guard:on_develop_module starts develop.run",
    "setuptools.command.easy_install":
        "guard.setuptools_guard:on_easy_install_module starts easy_install.run",
    "distutils.command.install": "guard.setuptools_guard:on_install_module install.run",
    "setuptools._distutils.command.install": "guard.setuptools_guard:on_install_module "
                                             "install.run",
    "installer._core": "guard.installer_guard:on_core_module starts install",
}

#: The one way detection watches a module: ``_watch_module(name, after)``, and
#: ``after(module)`` runs once module ``name`` executed; a name already watched keeps
#: its hook.  ``HOOKS.setdefault`` itself: a function would cost every start.
_watch_module = HOOKS.setdefault

#: Called with this module once, at the first import after startup.
STARTED_HOOKS = ["_watch:started"]

_sitewarden_finder = True  # how installed_finder() recognises a guard on sys.meta_path
_started = False
_checks = []  # pre-import checks (top-level name) installed by STARTED_HOOKS; each such
# name is also a key of HOOKS (value None: no post-exec hook), so that the finder
# passes every other name through with one dict membership test.
_busy = set()  # threads inside the watch: no re-entrancy


def __getattr__(name):
    # PEP 562: the public classes and the rarely used controls load on first use.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module 'sitewarden' has no attribute %r" % (name,))
    return getattr(__import__("sitewarden." + module, fromlist=[name]), name)


_LAZY = {"SitewardenWarning": "api.categories", "ShadowWarning": "api.categories",
         "PathWarning": "api.categories", "ExternallyManagedError": "api.categories",
         "deactivate": "api.activation", "installed_finder": "api.activation"}
__all__ = ("SitewardenWarning", "ShadowWarning", "PathWarning", "ExternallyManagedError",
           "__version__", "activate", "deactivate", "installed_finder")


def _call(target, *args):
    # Call ``"module:function"`` inside sitewarden, importing it now.
    module, _, function = target.partition(":")
    return getattr(__import__("sitewarden." + module, fromlist=[function]), function)(*args)


def find_spec(fullname, path=None, target=None):
    """The finder until the first import after startup (then :func:`_find_spec`)."""
    if fullname not in HOOKS and _site_running():
        return None  # still starting up: nothing to watch yet
    return _watched(fullname, path, target)


def _find_spec(fullname, path=None, target=None):
    # The finder once started: a name nobody watches costs one dict membership test.
    if fullname in HOOKS:
        return _watched(fullname, path, target)
    return None


def _watched(fullname, path, target):
    # Watch an import; return None, or another finder's spec with a hook attached.
    global _started, find_spec
    # _thread is built in and loaded at startup; threading is not (gevent needs that).
    thread = sys.modules.get("_thread")
    ident = thread.get_ident() if thread is not None else 0
    if ident in _busy:
        return None
    hook = HOOKS.get(fullname)
    _busy.add(ident)
    try:
        try:  # warnings fail open: nothing here may break an import
            if not _started and (hook is None or not _site_running()):
                _started = True
                find_spec = _find_spec
                for name in STARTED_HOOKS:
                    try:
                        _call(name, sys.modules[__name__])
                    except Exception:
                        _swallowed("the watches (%s)" % name)
                hook = HOOKS.get(fullname)  # the watch may have armed this very import
            if path is None and _checks and "." not in fullname:
                for check in _checks:
                    try:
                        check(fullname)
                    except Exception:
                        _swallowed("the shadow check of %r" % fullname)
        except Exception:
            _swallowed("the watch of %r" % fullname)
        if hook is not None:
            # Installer hooks fail closed: their exceptions propagate, and a damaged
            # runtime refuses installs (see guard/hooked.py).
            try:
                return _call("guard.hooked:spec", sys.modules[__name__], fullname, path, target,
                             hook)
            except ImportError as exc:
                if not (__name__ + ".guard.hooked.").startswith(
                        "%s." % getattr(exc, "name", None)):
                    raise  # not guard.hooked's own absence (nor its package's)
                if type(hook) is not str or hook.split()[1:2] != ["starts"]:
                    return None  # its import starts no install (see HOOKS)
                site = __file__.rpartition("/")[0].rpartition("/")[0]
                raise SystemExit("sitewarden: error: the guard deployed in %s is damaged "
                                 "(sitewarden/guard/hooked.py is missing): installs are refused; "
                                 "run `sitewarden install --python %s` again"
                                 % (site, sys.executable)) from None
        return None
    finally:
        _busy.discard(ident)


def _site_running():
    # Still starting: ``site`` is still executing (``.pth`` files, sitecustomize,
    # usercustomize: importlib flags a module while it initialises), or no Python code
    # called the import (3.13 imports ``linecache`` for ``-c`` from C).  Private
    # functions here say why in comments: every start unmarshals a docstring.
    spec = getattr(sys.modules.get("site"), "__spec__", None)
    if getattr(spec, "_initializing", False) is True:
        return True
    try:
        frame = sys._getframe(2)
    except (AttributeError, ValueError):
        return False
    while frame is not None:
        if not frame.f_code.co_filename.startswith("<frozen importlib"):
            return False
        frame = frame.f_back
    return True


def activate():
    """Install the guard in this process.  Idempotent; never raises."""
    try:
        # No getattr(x, name, default) for what is usually missing: each miss formats
        # an AttributeError message, at every start.
        module = type(sys)
        if sys.__dict__.get("frozen"):
            return None
        # os.environ's own dict (bytes on POSIX), read without a call into os.environ's
        # Python methods; os is no global here: a finder holding os costs every exit.
        # SITEWARDEN_DISABLE turns the guard off with a true word only, in any case
        # (settings.TRUE_VALUES); any other value keeps it on: an unknown value must not
        # lift a block.  Unset, it costs what the first test costs, as it always did.
        env = getattr(sys.modules.get("posix"), "environ", None)
        if type(env) is dict:
            if env.get(b"SITEWARDEN_DISABLE", b"0") not in (b"", b"0") and env[
                    b"SITEWARDEN_DISABLE"].lower() in (b"1", b"y", b"yes", b"t", b"true", b"on"):
                return None
        else:  # not POSIX: os.environ holds str
            os = __import__("os")
            if os.fsencode(os.environ.get("SITEWARDEN_DISABLE", "")).lower() in (
                    b"1", b"y", b"yes", b"t", b"true", b"on"):
                return None
        for finder in sys.meta_path:  # a guard is a module (importlib's finders: classes)
            if isinstance(finder, module) and finder.__dict__.get("_sitewarden_finder") is True:
                return finder
        finder = sys.modules[__name__]
        sys.meta_path.insert(0, finder)
        return finder
    except Exception:
        _swallowed("activation")
        return None


def _swallowed(skipped):
    # The one way the runtime fails open (failopen: SITEWARDEN_DEBUG); every broad
    # handler calls it from its except block.  No docstring: every start loads this.
    try:
        from .failopen import swallowed  # only once a failure is swallowed
    except ImportError:  # damaged: installs refuse, and status names the missing file
        if __import__("os").environ.get("SITEWARDEN_DEBUG", "0") not in ("", "0"):
            sys.stderr.write("sitewarden: debug: no failopen.py; skipped: %s\n" % skipped)
        return
    swallowed(skipped, 2)


# Imported while ``site`` runs (by ``sitewarden.pth``, ``sitecustomize`` or the
# ``sitewarden.start`` entry point): the guard activates itself, so the ``.pth``
# line, compiled at every start, need not say so.  Imported later (the CLI, a
# program): nothing happens until activate() is called.
if getattr(getattr(sys.modules.get("site"), "__spec__", None), "_initializing", False) is True:
    activate()
