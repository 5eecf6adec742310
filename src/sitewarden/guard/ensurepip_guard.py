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



_state = {"cli": False, "overridden": False}
_NOTHING = object()


def _refuse(text):
    from ..api.categories import ExternallyManagedError
    from . import refusal

    if _state["cli"]:
        refusal._write(text)
        return refusal.PIP_ERROR_STATUS
    raise ExternallyManagedError(text)


def _landing_dirs(root, user):
    """Where ensurepip's pip puts itself: the default scheme's (or the user
    scheme's) purelib and platlib, under ``root`` when given."""
    import sysconfig

    from . import scheme_guard
    from .marker import default_scheme

    if user:
        preferred = getattr(sysconfig, "get_preferred_scheme", None)
        scheme = preferred("user") if preferred is not None else "posix_user"
    else:
        scheme = default_scheme()
    paths = sysconfig.get_paths(scheme)
    return [scheme_guard.change_root(root, paths.get(k)) for k in ("purelib", "platlib")]


def on_module(module):
    bootstrap = getattr(module, "_bootstrap", None)
    if bootstrap is None or getattr(bootstrap, "_sitewarden_original", None) is not None:
        return

    def _bootstrap(*args, **kwargs):
        from . import refusal, scheme_guard
        from .marker import in_virtualenv

        _state["overridden"] = refusal.override_active("install")
        if in_virtualenv():
            return bootstrap(*args, **kwargs)
        verdict, directory = scheme_guard.judge(
            _landing_dirs(kwargs.get("root"), kwargs.get("user", False)))
        if verdict == "protected":
            own = scheme_guard.own_dirs()
            return _refuse(refusal.protected_message(directory, own[0] if own else None))
        if verdict is None:
            return bootstrap(*args, **kwargs)
        if refusal.applies() and not _state["overridden"]:
            return _refuse(refusal.message(installer="ensurepip"))
        scheme_guard.arm()
        inherited = refusal.allow_children() if _state["overridden"] else _NOTHING
        try:
            return bootstrap(*args, **kwargs)
        finally:
            if inherited is not _NOTHING:
                refusal.restore_children(inherited)

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

