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


def _check(command, paths):
    """Refuse (SystemExit 1 with pip's message) or arm the scheme guard; True when
    the install goes into the interpreter (and is to be reported)."""
    from . import refusal, scheme_guard
    from .marker import in_virtualenv

    if in_virtualenv():
        return False
    verdict, directory = scheme_guard.judge(paths)
    if verdict == "protected":
        refusal.write_protected(directory)
        raise SystemExit(refusal.PIP_ERROR_STATUS)
    if verdict is None:
        return False
    if refusal.applies() and not refusal.override_active("install"):
        refusal.write_message(installer="setuptools")
        raise SystemExit(refusal.PIP_ERROR_STATUS)
    scheme_guard.arm()
    return True


def _report(cmd):
    if getattr(getattr(cmd, "distribution", None), "verbose", 1) == 0:
        return  # setup.py -q
    try:
        from . import install_report, scheme_guard

        install_report.report(None, scheme_guard.written())
    except Exception:
        pass


def _wrap_run(cls, paths_of):
    run = cls.__dict__.get("run")
    if run is None or getattr(run, "_sitewarden_original", None) is not None:
        return

    def wrapped(self, *args, **kwargs):
        if getattr(self, "_sitewarden_checked", False):
            return run(self, *args, **kwargs)
        self._sitewarden_checked = True
        into_interpreter = _check(cls.__name__, paths_of(self))
        result = run(self, *args, **kwargs)
        if into_interpreter and not _nested():
            _report(self)
        return result

    wrapped._sitewarden_original = run
    cls.run = wrapped


def _nested():
    """Only the outermost guarded command reports (``install`` runs ``easy_install``)."""
    import sys

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
