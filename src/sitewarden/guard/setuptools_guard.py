"""setuptools and distutils: ``setup.py install``/``develop``, ``easy_install``.

The plain distutils ``install.run`` is guarded (setuptools' own ``install``
inspects its caller's frame to choose between egg and flat installs, so it
is never wrapped), with ``develop.run`` and ``easy_install.run``; never
``finalize_options``, which pip calls to learn install paths.

Judged by where the files land (the command's final install directories,
``--root`` already applied by distutils), outside a virtual environment:
into the standard library or a distro directory, always refused; into one of
the interpreter's own site directories (default scheme, user site), refused
unless overridden.  The override is ``PIP_BREAK_SYSTEM_PACKAGES`` or
``break-system-packages = true`` in a pip configuration file (or an install
pip already let through); ``setup.py`` rejects pip's option.  After an
allowed install there, what it left shadowed is reported.  Runtime module.
"""

import sys

from . import policy, refusal, scheme_guard
from .patching import wrap_once


def _run(paths_of):
    """The command's ``run``, decided first by where its files land (``paths_of``)."""

    def wrap(run):
        def wrapped(self, *args, **kwargs):
            if getattr(self, "_sitewarden_checked", False):
                return run(self, *args, **kwargs)
            self._sitewarden_checked = True
            decision = policy.decide("setuptools", lambda: scheme_guard.judge(paths_of(self)))
            if decision.refusal is not None:
                refusal.write(decision.refusal)
                raise SystemExit(refusal.PIP_ERROR_STATUS)
            result = run(self, *args, **kwargs)
            if not _nested():
                # setup.py -q (verbose 0) still shows distutils' warnings: as pip's -q
                quiet = getattr(getattr(self, "distribution", None), "verbose", 1) == 0
                decision.report(quiet=int(quiet))
            return result

        return wrapped

    return wrap


def _nested():
    """Only the outermost guarded command reports (``install`` runs ``easy_install``)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "wrapped" and frame.f_globals.get("__name__") == __name__:
            return True
        frame = frame.f_back
    return False


def _install_paths(cmd):
    return [getattr(cmd, name, None) for name in
            ("install_lib", "install_purelib", "install_platlib")]


def _install_dir(cmd):
    return [getattr(cmd, "install_dir", None)]


def _patch(module, class_name, paths_of):
    cls = getattr(module, class_name, None)
    if cls is not None:
        wrap_once(cls, "run", _run(paths_of), inherited=False)


def on_install_module(module):
    _patch(module, "install", _install_paths)


def on_develop_module(module):
    _patch(module, "develop", _install_dir)


def on_easy_install_module(module):
    _patch(module, "easy_install", _install_dir)


__all__ = ["on_develop_module", "on_easy_install_module", "on_install_module"]
