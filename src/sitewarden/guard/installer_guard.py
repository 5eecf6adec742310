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

from ..api.categories import ExternallyManagedError
from . import policy, refusal, scheme_guard
from .patching import wrap_once


def _from_command_line():
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return getattr(spec, "name", "") in ("installer.__main__", "installer")


def _refuse(text):
    if _from_command_line():
        refusal.write(text)
        raise SystemExit(refusal.PIP_ERROR_STATUS)
    raise ExternallyManagedError(text)


def _judge(destination):
    """:func:`scheme_guard.judge` of the destination's purelib and platlib, under its
    ``destdir`` when it has one."""
    scheme = getattr(destination, "scheme_dict", None) or {}
    destdir = getattr(destination, "destdir", None)
    return scheme_guard.judge([scheme_guard.change_root(destdir, p) if p else p
                               for p in (scheme.get("purelib"), scheme.get("platlib"))])


def _install(install):
    def wrapped(source, destination, *args, **kwargs):
        decision = policy.decide("installer", lambda: _judge(destination))
        if decision.refusal is not None:
            _refuse(decision.refusal)
        result = install(source, destination, *args, **kwargs)
        decision.report()
        return result

    return wrapped


def on_core_module(module):
    wrap_once(module, "install", _install)
