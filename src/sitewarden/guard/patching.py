"""Patch a module right after it executes, by wrapping its loader's ``exec_module``.

The finder calls :func:`spec_with_hook` for a watched module name: it asks the
other finders for the real spec, then arranges for ``after(module)`` to run
once the module's code has run.  Nothing is patched before the module exists
and nothing is imported that the process did not import itself.  Modelled on
virtualenv's ``_virtualenv.py``: per-module file loaders are wrapped in
place; shared, read-only or legacy loaders (``zipimport``, which on 3.8/3.9
has no ``exec_module``) get a forwarding proxy.
"""

import sys

from .. import _call


class _HookedLoader:
    """Forwards everything to the real loader; runs ``after`` past exec_module."""

    def __init__(self, loader, after):
        self._sitewarden_loader = loader
        self._sitewarden_after = after

    def create_module(self, spec):
        create = getattr(self._sitewarden_loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        loader = self._sitewarden_loader
        if hasattr(loader, "exec_module"):
            loader.exec_module(module)
        else:
            # A legacy loader (zipimport on 3.8/3.9 has only load_module):
            # run the module's code as importlib's own fallback would.
            exec(loader.get_code(module.__name__), module.__dict__)
        self._sitewarden_after(module)

    def __getattr__(self, name):
        return getattr(self._sitewarden_loader, name)


def find_real_spec(finder, fullname, path, target):
    """The spec the rest of ``sys.meta_path`` gives for ``fullname``."""
    for other in list(sys.meta_path):
        if other is finder:
            continue
        find_spec = getattr(other, "find_spec", None)
        if find_spec is None:
            continue
        spec = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


def _named(name):
    """A ``HOOKS`` value, ``"module:function"``, run through sitewarden's one resolver."""

    def after(module):
        return _call(name, module)

    return after


def spec_with_hook(finder, fullname, path, target, after):
    """The real spec of ``fullname``, with ``after(module)`` run once it executed.

    ``after`` is a callable or a ``"module:function"`` name inside sitewarden.
    """
    if isinstance(after, str):
        after = _named(after)
    spec = find_real_spec(finder, fullname, path, target)
    if spec is None or spec.loader is None or getattr(spec.loader, "_sitewarden_after", None):
        return spec
    loader = spec.loader
    if not hasattr(loader, "exec_module") and not hasattr(loader, "get_code"):
        return spec  # nothing we can run the module with: leave it alone
    if getattr(loader, "path", None) == spec.origin and type(loader).__name__ in (
        "SourceFileLoader", "SourcelessFileLoader"
    ):
        original = loader.exec_module

        def exec_module(module):
            original(module)
            after(module)

        try:
            loader.exec_module = exec_module
            loader._sitewarden_after = after
            return spec
        except (AttributeError, TypeError):
            pass
    spec.loader = _HookedLoader(loader, after)
    return spec
