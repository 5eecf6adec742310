"""pypa/installer: ``installer.install()`` and ``python -m installer``.

Judged by where the files land (the destination's purelib/platlib, under its
``destdir`` when it has one), outside a virtual environment: into the standard
library or a distro directory, always refused; into one of the interpreter's
own site directories, refused unless ``PIP_BREAK_SYSTEM_PACKAGES`` (or the pip
configuration key) overrides it.  From the command line: pip's message, exit
status 1; from code: :class:`sitewarden.ExternallyManagedError`.  After an
allowed install there, what it left shadowed is reported.  Runtime module.
"""

import sys


def _from_command_line():
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return getattr(spec, "name", "") in ("installer.__main__", "installer")


def _refuse(text):
    from ..api.categories import ExternallyManagedError
    from . import refusal

    if _from_command_line():
        refusal._write(text)
        raise SystemExit(refusal.PIP_ERROR_STATUS)
    raise ExternallyManagedError(text)


def _check(destination):
    """Refuse, or arm the scheme guard; True when the install goes into the interpreter."""
    from . import refusal, scheme_guard
    from .marker import in_virtualenv

    if in_virtualenv():
        return False
    scheme = getattr(destination, "scheme_dict", None) or {}
    destdir = getattr(destination, "destdir", None)
    paths = [scheme_guard.change_root(destdir, p) if p else p
             for p in (scheme.get("purelib"), scheme.get("platlib"))]
    verdict, directory = scheme_guard.judge(paths)
    if verdict == "protected":
        from .scheme_guard import own_dirs

        own = own_dirs()
        _refuse(refusal.protected_message(directory, own[0] if own else None))
    if verdict is None:
        return False
    if refusal.applies() and not refusal.override_active("install"):
        _refuse(refusal.message(installer="installer"))
    scheme_guard.arm()
    return True


def on_core_module(module):
    install = getattr(module, "install", None)
    if install is None or getattr(install, "_sitewarden_original", None) is not None:
        return

    def wrapped(source, destination, *args, **kwargs):
        into_interpreter = _check(destination)
        result = install(source, destination, *args, **kwargs)
        if into_interpreter:
            try:
                from . import install_report, scheme_guard

                install_report.report(None, scheme_guard.written())
            except Exception:
                pass
        return result

    wrapped._sitewarden_original = install
    wrapped.__doc__ = install.__doc__
    module.install = wrapped
