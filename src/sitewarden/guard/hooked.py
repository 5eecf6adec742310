"""The finder's answer for a hooked module, and what a damaged runtime does.

For every name in ``sitewarden.HOOKS`` that an import asks for, the finder (in
``sitewarden/__init__``, which has a last resort of its own for when this very
file is missing) calls :func:`spec`.  It asks the other finders for the real
spec and wraps its loader, so that code runs once the module executed:

- an intact runtime runs the module's hook: the installer table's
  ``"module:function"`` (e.g. ``guard.pip_guard:on_install_module``, which patches
  the module with ``patching.wrap_once``), or the function detection registered;
- a damaged one (a file of its manifest missing: checked once, against
  ``sitewarden/_deployment.json``, written by ``sitewarden install``) patches
  nothing it cannot trust: imports that only feed warnings or rule 2 proceed
  untouched, and the entry points of installers (those the table names)
  refuse with one line naming the damage and the fix.  A runtime without a
  manifest and without a startup hook beside it (a source checkout) is trusted.

Nothing but ``os``, ``sys`` and the package itself is imported: this module must
work when any other one is missing, so the loader wrapping lives here too.
Modelled on virtualenv's ``_virtualenv.py``: per-module file loaders are
wrapped in place; shared, read-only or legacy loaders (``zipimport``, which on
3.8/3.9 has no ``exec_module``) get a forwarding proxy.
"""

import os
import sys

from .. import _call

_state = {"damage": None}


def _package_dir():
    """The deployed ``sitewarden`` package (this file is in its ``guard/``)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def damage():
    """What is missing of this deployed runtime, as a phrase; ``""`` when intact."""
    if _state["damage"] is None:
        try:
            _state["damage"] = _check(_package_dir())
        except Exception as exc:  # fail closed
            _state["damage"] = "its files cannot be checked (%s)" % (exc,)
    return _state["damage"]


def _check(package):
    site = os.path.dirname(package)
    try:
        with open(os.path.join(package, "_deployment.json"), "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError) and not any(
                os.path.lexists(os.path.join(site, name))
                for name in ("sitewarden.pth", "sitewarden.start")):
            return ""  # not deployed by `sitewarden install` (a source checkout)
        return "sitewarden/_deployment.json is %s" % (
            "missing" if isinstance(exc, FileNotFoundError) else "unreadable")
    # The Debian package's copy (packaging/build-deb) is repaired by reinstalling it.
    _state["dpkg"] = '"installer": "dpkg"' in text
    missing = []
    for line in text.splitlines():
        # json.dumps(indent=2) writes one file per line: "sitewarden/guard/refusal.py",
        item = line.strip().rstrip(",")
        if len(item) > 2 and item[0] == '"' == item[-1] and item.startswith('"sitewarden/') \
                and item.endswith('.py"'):
            rel = item[1:-1]
            if not os.access(os.path.join(site, *rel.split("/")), os.R_OK):
                missing.append(rel)
    if not missing:
        return ""
    if len(missing) > 3:
        return "%s and %d more files are missing" % (", ".join(missing[:3]), len(missing) - 3)
    return "%s %s missing" % (", ".join(missing), "is" if len(missing) == 1 else "are")


def line(problem):
    """The one line an installer prints when the runtime is damaged."""
    fix = ("apt install --reinstall sitewarden" if _state.get("dpkg")
           else "sitewarden install --python %s" % sys.executable)
    return ("sitewarden: error: the guard deployed in %s is damaged (%s): installs are refused "
            "until it is repaired; run `%s` again (SITEWARDEN_DISABLE=1 turns the guard off)"
            % (os.path.dirname(_package_dir()), problem, fix))


def _say(problem):
    try:
        sys.stderr.write(line(problem) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no stderr, or a closed one
        pass


def spec(finder, fullname, path, target, hook):
    """The finder's answer for a hooked module: the real spec, hooked (intact
    runtime), refusing (damaged, an installer) or untouched (damaged, anything else).

    ``hook`` is ``finder.HOOKS[fullname]``: the installer table's string,
    ``"module:function [starts] [entry ...]"`` (see ``sitewarden.HOOKS``), or the
    callable detection registered (``sitewarden._watch_module``).
    """
    entries = ()
    if isinstance(hook, str):
        hook, *entries = hook.split()
        if entries[:1] == ["starts"]:
            entries = entries[1:]  # only the finder's last resort needs to know
    problem = damage()
    if not problem:
        return with_hook(_real_spec(finder, fullname, path, target), hook)
    if not entries:
        return None
    return with_hook(_real_spec(finder, fullname, path, target),
                     lambda module: disarm(module, fullname, entries, problem))


def _real_spec(finder, fullname, path, target):
    """The spec the rest of ``sys.meta_path`` gives for ``fullname``."""
    for other in list(sys.meta_path):
        find = getattr(other, "find_spec", None)
        if other is finder or find is None:
            continue
        found = find(fullname, path, target)
        if found is not None:
            return found
    return None


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


def _named(name):
    """An installer table hook, ``"module:function"``, run through sitewarden's one
    resolver."""

    def after(module):
        return _call(name, module)

    return after


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


def disarm(module, fullname, entries, problem):
    """Make the installer ``entries`` of ``module`` (``"Class.method"`` or
    ``"function"``, from ``sitewarden.HOOKS``) refuse: print :func:`line`."""

    def refuse_run(self, *args, **kwargs):
        _say(problem)
        if fullname.startswith("pip"):
            return 1  # pip's own error status: pip.main() callers get it too
        raise SystemExit(1)

    def refuse(*args, **kwargs):
        _say(problem)
        raise SystemExit(1)

    for entry in entries:
        owner, _, name = entry.rpartition(".")
        if owner:
            cls = getattr(module, owner, None)
            if cls is not None:
                setattr(cls, name, refuse_run)
        elif hasattr(module, name):
            setattr(module, name, refuse)
