"""ensurepip: refused into the interpreter's own scheme unless overridden.

``python -m ensurepip`` gets pip's message and exit status 1;
``ensurepip.bootstrap()`` raises :class:`sitewarden.ExternallyManagedError`.
Judged by where pip would land (``root=``/``--root`` applied): the
interpreter's own directories are refused unless overridden, a distro
directory always.  ensurepip strips every ``PIP_*`` variable
before running its bundled pip (python/cpython#118384), so the guard reads
``PIP_BREAK_SYSTEM_PACKAGES`` first and, when it is set, passes
``--break-system-packages`` to that pip itself.  Runtime module.
"""

from ..api.categories import ExternallyManagedError
from ..facts.marker import scheme_paths
from . import policy, refusal, scheme_guard
from .patching import wrap_once

_state = {"cli": False, "overridden": False}


def _refuse(text):
    if _state["cli"]:
        refusal.write(text)
        return refusal.PIP_ERROR_STATUS
    raise ExternallyManagedError(text)


def _landing_dirs(root, user):
    """Where ensurepip's pip puts itself: the default scheme's (or the user
    scheme's) purelib and platlib, under ``root`` when given."""
    paths = scheme_paths("user" if user else None)
    return [scheme_guard.change_root(root, paths.get(k)) for k in ("purelib", "platlib")]


def _bootstrap(bootstrap):
    def _bootstrap(*args, **kwargs):
        _state["overridden"] = refusal.override_active()
        decision = policy.decide("ensurepip", lambda: scheme_guard.judge(
            _landing_dirs(kwargs.get("root"), kwargs.get("user", False))), _state["overridden"])
        if decision.refusal is not None:
            return _refuse(decision.refusal)
        return decision.run(bootstrap, *args, **kwargs)

    return _bootstrap


def _main(main):
    def _main(*args, **kwargs):
        _state["cli"] = True
        try:
            return main(*args, **kwargs)
        finally:
            _state["cli"] = False

    return _main


def _run_pip(run_pip):
    def _run_pip(args, *rest, **kwargs):
        if _state["overridden"] and args and args[0] == "install" and refusal.FLAG not in args:
            args = list(args) + [refusal.FLAG]
        return run_pip(args, *rest, **kwargs)

    return _run_pip


def on_module(module):
    if wrap_once(module, "_bootstrap", _bootstrap) is not None:
        wrap_once(module, "_main", _main)
        wrap_once(module, "_run_pip", _run_pip)
