"""ensurepip: refused into the interpreter's own scheme unless overridden.

``python -m ensurepip`` gets pip's message and exit status 1;
``ensurepip.bootstrap()`` raises :class:`sitewarden.ExternallyManagedError`.
``root=``/``--root`` is exempt.  ensurepip strips every ``PIP_*`` variable
before running its bundled pip (python/cpython#118384), so the guard reads
``PIP_BREAK_SYSTEM_PACKAGES`` first and, when it is set, passes
``--break-system-packages`` to that pip itself.  Runtime module.
"""



_state = {"cli": False, "overridden": False}


def _refuse():
    from ..api.categories import ExternallyManagedError
    from . import refusal

    if _state["cli"]:
        refusal.write_message()
        return refusal.PIP_ERROR_STATUS
    raise ExternallyManagedError(refusal.message())


def on_module(module):
    bootstrap = getattr(module, "_bootstrap", None)
    if bootstrap is None or getattr(bootstrap, "_sitewarden_original", None) is not None:
        return

    def _bootstrap(*args, **kwargs):
        from . import refusal, scheme_guard
        from .marker import in_virtualenv

        root = kwargs.get("root")
        user = kwargs.get("user", False)
        _state["overridden"] = refusal.override_active("install")
        if root is None and refusal.applies() and not _state["overridden"]:
            return _refuse()
        if root is None and not in_virtualenv():
            scheme_guard.arm()
            if _state["overridden"] or user:
                refusal.allow_children()
        return bootstrap(*args, **kwargs)

    _bootstrap._sitewarden_original = bootstrap
    module._bootstrap = _bootstrap

    main = getattr(module, "_main", None)
    if main is not None:
        def _main(*args, **kwargs):
            _state["cli"] = True
            try:
                return main(*args, **kwargs)
            finally:
                _state["cli"] = False

        _main._sitewarden_original = main
        module._main = _main

    run_pip = getattr(module, "_run_pip", None)
    if run_pip is not None:
        def _run_pip(args, *rest, **kwargs):
            from .refusal import FLAG

            if _state["overridden"] and args and args[0] == "install" and FLAG not in args:
                args = list(args) + [FLAG]
            return run_pip(args, *rest, **kwargs)

        _run_pip._sitewarden_original = run_pip
        module._run_pip = _run_pip

