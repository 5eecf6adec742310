"""Patch a module that just executed: replace one of its functions, once.

The installer guards' ``on_<module>`` hooks run once their module's code has
run (``hooked.with_hook`` arranges it); inside them, :func:`wrap_once` replaces
one of the module's functions (or a method of one of its classes) with a
wrapper, once, so that a second import or a subclass never wraps twice.
"""


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
