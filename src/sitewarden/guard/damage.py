"""A damaged runtime: programs keep working, installs are refused, loudly.

Every installer hook goes through :func:`spec` (called by the finder in
``sitewarden/__init__``, which has a last resort of its own for when this very
file is missing).  The first time, the deployed runtime is checked
against its manifest (``sitewarden/_deployment.json``, written by ``sitewarden
install``): every ``.py`` file it lists must be readable.  An intact runtime
patches the module as usual (``guard.patching``).  A damaged one (a file
deleted, or a module that fails to import) patches nothing it cannot trust:
imports that only feed warnings or rule 2 proceed untouched, and the entry
points of installers refuse with one line naming the damage and the fix.

Only ``os`` and ``sys`` are imported, and nothing else of sitewarden (but
``patching``, when the runtime is intact): this module must work when any
other one is missing.  A runtime without a manifest
and without a startup hook beside it (a source checkout) is trusted.
"""

import os
import sys

#: Modules whose import starts an installer: refused when the runtime is damaged.
#: Every other hooked module (pip's ``is_local``, the standard-library watch...)
#: is imported untouched.
INSTALLERS = {
    "pip.commands.install": ("InstallCommand",),
    "pip.commands.uninstall": ("UninstallCommand",),
    "pip._internal.commands.install": ("InstallCommand",),
    "pip._internal.commands.uninstall": ("UninstallCommand",),
    "ensurepip": (),
    "setuptools.command.develop": ("develop",),
    "setuptools.command.easy_install": ("easy_install",),
    "distutils.command.install": ("install",),
    "setuptools._distutils.command.install": ("install",),
    "installer._core": (),
}

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
    except Exception:
        pass


def spec(finder, fullname, path, target, hook):
    """The finder's answer for a hooked module: patched (intact runtime), refusing
    (damaged, an installer) or None (damaged, anything else: imported untouched)."""
    problem = damage()
    if not problem:
        try:
            from .patching import with_hook  # not at module level: patching.py may be missing
        except ImportError as exc:
            problem = "%s cannot be imported: %s" % ("sitewarden.guard.patching", exc)
        else:
            return with_hook(_real_spec(finder, fullname, path, target), hook)
    if fullname not in INSTALLERS:
        return None
    real = _real_spec(finder, fullname, path, target)
    if real is None or real.loader is None:
        return real
    real.loader = _Refusing(real.loader, fullname, problem)
    return real


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


class _Refusing:
    """Runs the real loader, then makes the installer's entry points refuse."""

    def __init__(self, loader, fullname, problem):
        self._sitewarden_loader = loader
        self._sitewarden_name = fullname
        self._sitewarden_problem = problem

    def create_module(self, spec):
        create = getattr(self._sitewarden_loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        loader = self._sitewarden_loader
        if hasattr(loader, "exec_module"):
            loader.exec_module(module)
        else:  # a legacy loader (zipimport on 3.8/3.9)
            exec(loader.get_code(module.__name__), module.__dict__)
        disarm(module, self._sitewarden_name, self._sitewarden_problem)

    def __getattr__(self, name):
        return getattr(self._sitewarden_loader, name)


def disarm(module, fullname, problem):
    """Make the installer entry points of ``module`` refuse (print :func:`line`)."""

    def refuse_run(self, *args, **kwargs):
        _say(problem)
        if fullname.startswith("pip"):
            return 1  # pip's own error status: pip.main() callers get it too
        raise SystemExit(1)

    def refuse(*args, **kwargs):
        _say(problem)
        raise SystemExit(1)

    for name in INSTALLERS.get(fullname, ()):
        cls = getattr(module, name, None)
        if cls is not None:
            cls.run = refuse_run
    if fullname == "ensurepip":
        for name in ("bootstrap", "_bootstrap"):
            if hasattr(module, name):
                setattr(module, name, refuse)
    elif fullname == "installer._core":
        module.install = refuse
