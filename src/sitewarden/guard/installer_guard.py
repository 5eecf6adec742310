"""pypa/installer: ``installer.install()`` and ``python -m installer``.

Refused when the destination is the interpreter's own scheme (no
``destdir``, purelib/platlib one of its site directories) outside a virtual
environment and without ``PIP_BREAK_SYSTEM_PACKAGES``.  From the command line:
pip's message, exit status 1; from code: :class:`sitewarden.ExternallyManagedError`.
Runtime module.
"""

import sys


def _from_command_line():
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return getattr(spec, "name", "") in ("installer.__main__", "installer")


def _check(destination):
    from ..api.categories import ExternallyManagedError
    from . import refusal, scheme_guard
    from .marker import in_virtualenv

    if in_virtualenv() or getattr(destination, "destdir", None):
        return
    scheme = getattr(destination, "scheme_dict", None) or {}
    if not scheme_guard.targets_interpreter([scheme.get("purelib"), scheme.get("platlib")]):
        return
    if refusal.applies() and not refusal.override_active("install"):
        if _from_command_line():
            refusal.write_message()
            raise SystemExit(refusal.PIP_ERROR_STATUS)
        raise ExternallyManagedError(refusal.message())
    scheme_guard.arm()


def on_core_module(module):
    install = getattr(module, "install", None)
    if install is None or getattr(install, "_sitewarden_original", None) is not None:
        return

    def wrapped(source, destination, *args, **kwargs):
        _check(destination)
        return install(source, destination, *args, **kwargs)

    wrapped._sitewarden_original = install
    wrapped.__doc__ = install.__doc__
    module.install = wrapped
