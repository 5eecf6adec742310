"""pip, every release from 9.0 on: PEP 668 with pip 23's semantics, and rule 2.

Hooks (registered in ``sitewarden.HOOKS``) patch pip's modules right after they
execute, so ``python -m pip``, the ``pip`` script, ``pip.main()`` and
``pip._internal`` callers are all covered:

- ``InstallCommand``/``UninstallCommand``: ``main`` adds
  ``--break-system-packages`` to an old pip's parser (so its flag, variable
  and configuration key work as on pip 23);
  ``run`` refuses, before anything is downloaded, what pip 23 refuses (pip
  23+ refuses for itself, so it is left to do so: no double report), arms the
  scheme guard, and reports shadowed distro packages after an install.
- ``is_local`` (and ``UninstallPathSet._permitted``, which pip 24 stopped
  basing on it): a distribution in a distro directory is not pip's to
  remove, so an upgrade installs the new version locally and leaves the
  distro's copy, as Debian's own pip does.
pip 26.3 refuses new imports once installation starts, so ``run`` imports
everything the guard may need before calling pip's own.
Runtime module: imported only when pip is.
"""

import os
import sys

_state = {"refused_dists": [], "command": None}


def pip_version():
    pip = sys.modules.get("pip")
    raw = getattr(pip, "__version__", "0")
    parts = []
    for piece in raw.split(".")[:2]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits or 0))
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def pip_checks_itself():
    """pip 23.0+ has its own PEP 668 check (23.0.1+ with the override)."""
    return pip_version() >= (23, 0)


def _exempt(options):
    """pip 23's ``installing_into_current_environment`` exemptions."""
    if getattr(options, "target_dir", None) or getattr(options, "prefix_path", None):
        return True
    if getattr(options, "root_path", None):
        return True
    return bool(getattr(options, "dry_run", False) and getattr(options, "json_report_file", None))


# ------------------------------------------------------------------ commands


def _wrap_main(cls):
    """Make pips older than 23.0.1 accept ``--break-system-packages``.

    The option is added to the command's own parser, with pip 23's ``dest``,
    so pip's configuration machinery also maps ``PIP_BREAK_SYSTEM_PACKAGES``
    and ``break-system-packages = true`` onto it, on every pip.
    """
    original = cls.main

    def main(self, args, *rest, **kw):
        from .refusal import FLAG

        parser = getattr(self, "parser", None)
        if parser is not None and parser.get_option(FLAG) is None:
            import optparse

            parser.add_option(optparse.Option(
                FLAG, dest="override_externally_managed", action="store_true", default=False,
                help="Allow pip to modify an EXTERNALLY-MANAGED Python installation "
                "(added by sitewarden)"))
        return original(self, args, *rest, **kw)

    main._sitewarden_original = original
    cls.main = main


def _preload():
    """Import now everything the guard may need later: pip 26.3 refuses new
    imports once installation has started."""
    import errno  # noqa: F401
    import optparse  # noqa: F401

    from . import marker, refusal, scheme_guard  # noqa: F401

    try:
        from . import install_report

        install_report.preload()
    except Exception:
        pass


def _wrap_run(cls, command):
    original = cls.run

    def run(self, options, args, *rest, **kw):
        _preload()
        from . import refusal, scheme_guard
        from .marker import in_virtualenv

        overridden = bool(getattr(options, "override_externally_managed", False)) or (
            refusal.inherited_override())
        exempt = command == "install" and _exempt(options)
        if not pip_checks_itself() and not exempt and not overridden and refusal.applies():
            refusal.write_message()
            return refusal.PIP_ERROR_STATUS
        if not in_virtualenv():
            scheme_guard.arm()
            if overridden:
                refusal.allow_children()
        _state["refused_dists"] = []
        _state["command"] = command
        try:
            status = original(self, options, args, *rest, **kw)
        finally:
            _state["command"] = None
        if command == "uninstall" and _state["refused_dists"]:
            _report_distro_uninstall(_state["refused_dists"])
            return refusal.PIP_ERROR_STATUS
        if command == "install" and status in (0, None) and not exempt and not in_virtualenv():
            _report_shadowing()
        return status

    run._sitewarden_original = original
    cls.run = run


def _patch_command(module, class_name, command):
    cls = getattr(module, class_name, None)
    if cls is None or getattr(cls.run, "_sitewarden_original", None) is not None:
        return
    _wrap_main(cls)
    _wrap_run(cls, command)


def on_install_module(module):
    _patch_command(module, "InstallCommand", "install")


def on_uninstall_module(module):
    _patch_command(module, "UninstallCommand", "uninstall")


# ------------------------------------------------------------------ is_local


def _dist_from_frames():
    frame = sys._getframe(2)
    for _ in range(5):
        if frame is None:
            break
        dist = frame.f_locals.get("dist")
        if dist is not None:
            name = (getattr(dist, "project_name", None) or getattr(dist, "canonical_name", None)
                    or getattr(dist, "key", None) or str(dist))
            return str(name), str(getattr(dist, "version", "") or "")
        frame = frame.f_back
    return None, None


def on_misc_module(module):
    """Teach ``is_local`` that distro directories are not pip's."""
    original = getattr(module, "is_local", None)
    if original is None or getattr(original, "_sitewarden_original", None) is not None:
        return

    def is_local(path):
        if not original(path):
            return False
        from .marker import in_virtualenv

        if in_virtualenv():
            return True
        from . import scheme_guard

        root = scheme_guard.protected_root(path)
        if root is None:
            return True
        if _state["command"] == "uninstall":
            name, version = _dist_from_frames()
            _state["refused_dists"].append((name or os.path.basename(str(path)), version, root))
        return False

    is_local._sitewarden_original = original
    module.is_local = is_local


def on_req_uninstall_module(module):
    """pip 24+ inlined ``is_local`` into ``UninstallPathSet._permitted``: a file
    in a protected directory is not pip's to remove, even if a local
    distribution's RECORD lists it."""
    cls = getattr(module, "UninstallPathSet", None)
    permitted = getattr(cls, "_permitted", None) if cls is not None else None
    if permitted is None or getattr(permitted, "_sitewarden_original", None) is not None:
        return

    def _permitted(self, path):
        if not permitted(self, path):
            return False
        from .marker import in_virtualenv

        if in_virtualenv():
            return True
        from . import scheme_guard

        return scheme_guard.protected_root(path) is None

    _permitted._sitewarden_original = permitted
    cls._permitted = _permitted


# ------------------------------------------------------------------ reports


def distro_tool(name):
    """The command a user of this OS runs to remove ``name``'s distro package."""
    lower = (name or "").lower().replace("_", "-")
    if os.path.exists("/etc/debian_version"):
        return "apt remove python3-%s" % lower
    if os.path.exists("/etc/fedora-release") or os.path.exists("/etc/redhat-release"):
        return "dnf remove python3-%s" % lower
    if os.path.exists("/etc/arch-release"):
        return "pacman -R python-%s" % lower
    if os.path.exists("/etc/alpine-release"):
        return "apk del py3-%s" % lower
    if "homebrew" in sys.prefix.lower() or "/cellar/" in sys.prefix.lower():
        return "brew uninstall (the formula that provides %s)" % (name or "it")
    return "your operating system's package manager"


def _report_distro_uninstall(refused):
    from .scheme_guard import own_dirs

    own = own_dirs()
    local = own[0] if own else "the local site directory"
    seen = set()
    for name, version, root in refused:
        if (name, root) in seen:
            continue
        seen.add((name, root))
        sys.stderr.write(
            "error: cannot uninstall %s%s from %s: that directory belongs to the operating "
            "system's package manager (PEP 668), and pip must not change it.\n"
            "hint: to remove it, use `%s`; to run a different version, install it into a "
            "virtual environment, or into %s with pip install --upgrade.\n"
            % (name, " " + version if version else "", root, distro_tool(name), local)
        )
    sys.stderr.flush()


def _report_shadowing():
    """PEP 668's recommendation: say which distro packages the install shadows."""
    try:
        from . import install_report

        install_report.report(sys.stderr)
    except Exception:
        pass
