"""setuptools and distutils: ``setup.py install``/``develop``, ``easy_install``.

The plain distutils ``install.run`` is guarded (setuptools' own ``install``
inspects its caller's frame to choose between egg and flat installs, so it
is never wrapped), with ``develop.run`` and ``easy_install.run``; never
``finalize_options``, which pip calls to learn install paths.

Refused when the command would write into one of the interpreter's own site
directories (default scheme, user site, distro directories) outside a virtual
environment and without an override; ``--root`` is always allowed, as are
``--prefix``/``--home``/``--install-dir`` pointing elsewhere.  The override
is ``PIP_BREAK_SYSTEM_PACKAGES`` (or an install pip already let through).
Runtime module.
"""


def _check(command, paths, root=None):
    """Refuse (SystemExit 1 with pip's message) or arm the scheme guard."""
    from . import refusal, scheme_guard
    from .marker import in_virtualenv

    if in_virtualenv() or root:
        return
    if not scheme_guard.targets_interpreter(paths):
        return
    if refusal.applies() and not refusal.override_active("install"):
        refusal.write_message()
        raise SystemExit(refusal.PIP_ERROR_STATUS)
    scheme_guard.arm()


def _wrap_run(cls, paths_of):
    run = cls.__dict__.get("run")
    if run is None or getattr(run, "_sitewarden_original", None) is not None:
        return

    def wrapped(self, *args, **kwargs):
        if not getattr(self, "_sitewarden_checked", False):
            self._sitewarden_checked = True
            _check(cls.__name__, paths_of(self), getattr(self, "root", None))
        return run(self, *args, **kwargs)

    wrapped._sitewarden_original = run
    cls.run = wrapped


def _install_paths(cmd):
    return [getattr(cmd, name, None) for name in
            ("install_lib", "install_purelib", "install_platlib")]


def _install_dir(cmd):
    return [getattr(cmd, "install_dir", None)]


def on_install_module(module):
    cls = getattr(module, "install", None)
    if cls is not None:
        _wrap_run(cls, _install_paths)


def on_develop_module(module):
    cls = getattr(module, "develop", None)
    if cls is not None:
        _wrap_run(cls, _install_dir)


def on_easy_install_module(module):
    cls = getattr(module, "easy_install", None)
    if cls is not None:
        _wrap_run(cls, _install_dir)


__all__ = ["on_develop_module", "on_easy_install_module", "on_install_module"]

