"""Patch a module right after it executes, by wrapping its loader's ``exec_module``.

For a watched module name, the finder (through ``damage.spec``, which asks the
other finders for the real spec) calls :func:`with_hook`: it arranges for
``after(module)`` to run once the module's code has run.  Nothing is patched
before the module exists and nothing is imported that the process did not
import itself.  Modelled on
virtualenv's ``_virtualenv.py``: per-module file loaders are wrapped in
place; shared, read-only or legacy loaders (``zipimport``, which on 3.8/3.9
has no ``exec_module``) get a forwarding proxy.

Inside a patched module, :func:`wrap_once` replaces one of its functions (or a
method of one of its classes) with a wrapper, once.
"""

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


def _named(name):
    """A ``HOOKS`` value, ``"module:function"``, run through sitewarden's one resolver."""

    def after(module):
        return _call(name, module)

    return after


def with_hook(spec, after):
    """``spec`` (the one the other finders gave), with ``after(module)`` run once
    the module executed.

    ``after`` is a callable or a ``"module:function"`` name inside sitewarden.
    """
    if isinstance(after, str):
        after = _named(after)
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


def wrap_once(owner, name, make, inherited=True):
    """Replace ``owner.<name>`` (a module's function, a class's method) by
    ``make(original)``, once: nothing when it is missing or already a wrapper.

    The wrapper gets the original's name, qualified name and docstring, and keeps
    the original as ``_sitewarden_original`` (how a second import, or a subclass,
    finds it wrapped) and ``__wrapped__``.  With ``inherited=False`` only a
    method the class itself defines is wrapped.  Returns the wrapper, or None.
    """
    original = getattr(owner, name, None) if inherited else vars(owner).get(name)
    if original is None or getattr(original, "_sitewarden_original", None) is not None:
        return None
    wrapper = make(original)
    for attribute in ("__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, attribute, getattr(original, attribute))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = wrapper._sitewarden_original = original
    setattr(owner, name, wrapper)
    return wrapper
