"""pip, every release from 9.0 on: PEP 668 with pip 23's semantics, and rule 2.

Hooks (registered in ``sitewarden.HOOKS``) patch pip's modules right after they
execute, so ``python -m pip``, the ``pip`` script, ``pip.main()`` and
``pip._internal`` callers are all covered:

- ``InstallCommand``/``UninstallCommand``: ``main`` adds
  ``--break-system-packages`` to an old pip's parser (so its flag, variable
  and configuration key work as on pip 23);
  ``run`` decides for every pip, before anything is downloaded: refused
  what pip 23.0.1 refuses, and installs whose files land in the interpreter's
  own directories whatever the option (``--target``, ``--prefix``, ``--root``
  resolving there); refused always what would land in a distro directory or
  the standard library.  pip 23+'s own check is skipped meanwhile (pip 23.0
  has no override, pip's check reads an unreadable marker as no marker; one
  report, not two).  It arms the scheme guard, lets the build subprocesses
  of an overridden command through for that command only, and reports what
  the install left shadowed (not under ``-q``).
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


def _landing_dirs(options):
    """Where ``pip install`` with these options puts packages (purelib, platlib),
    asked of pip itself: ``--target`` is the directory; ``--prefix``, ``--root`` and
    ``--user`` go through pip's own scheme function (``get_scheme`` since pip 20.3,
    ``distutils_scheme`` before), so the answer is pip's on every release."""
    target = getattr(options, "target_dir", None)
    if target:
        return [target]
    kwargs = {"user": bool(getattr(options, "use_user_site", False)), "home": None,
              "root": getattr(options, "root_path", None),
              "isolated": bool(getattr(options, "isolated_mode", False)),
              "prefix": getattr(options, "prefix_path", None)}
    for name in ("pip._internal.locations", "pip.locations"):
        locations = sys.modules.get(name)
        if locations is None:
            continue
        get_scheme = getattr(locations, "get_scheme", None)
        if get_scheme is not None:
            scheme = get_scheme("", **kwargs)
            return [scheme.purelib, scheme.platlib]
        distutils_scheme = getattr(locations, "distutils_scheme", None)
        if distutils_scheme is not None:
            scheme = distutils_scheme("", **kwargs)
            return [scheme.get("purelib"), scheme.get("platlib")]
    return _sysconfig_landing_dirs(kwargs)


def _sysconfig_landing_dirs(kwargs):
    """The same answer from sysconfig, when pip's function cannot be found."""
    import sysconfig

    from . import scheme_guard
    from .marker import default_scheme

    if kwargs["prefix"]:
        paths = sysconfig.get_paths("posix_prefix", vars={
            "base": kwargs["prefix"], "platbase": kwargs["prefix"]})
    elif kwargs["user"]:
        paths = sysconfig.get_paths("posix_user")
    else:
        paths = sysconfig.get_paths(default_scheme())
    return [scheme_guard.change_root(kwargs["root"], paths.get(k)) for k in ("purelib", "platlib")]


def _verdict(command, options):
    """``(verdict, directory)`` of :func:`scheme_guard.judge` for this command: where
    its files land, whatever the options that say so."""
    from . import scheme_guard

    if command == "uninstall":
        return "interpreter", None
    if getattr(options, "dry_run", False) and getattr(options, "json_report_file", None):
        return None, None  # pip 23's exemption: nothing is installed
    if not any(getattr(options, name, None) for name in ("target_dir", "prefix_path",
                                                           "root_path")):
        return "interpreter", None  # the default scheme, or the user site
    try:
        return scheme_guard.judge(_landing_dirs(options))
    except Exception:
        return "interpreter", None  # fail closed: refused unless overridden


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
        venv = in_virtualenv()
        verdict = None
        if not venv:
            # The guard decides for every pip (pip 23's own check is skipped, below):
            # pip 23.0 has no override, pip 23+ lets a damaged marker and destinations
            # that resolve into the interpreter through.
            verdict, directory = _verdict(command, options)
            if verdict == "protected":
                refusal.write_protected(directory)
                return refusal.PIP_ERROR_STATUS
            if verdict == "interpreter" and not overridden and refusal.applies():
                refusal.write_message()
                return refusal.PIP_ERROR_STATUS
            scheme_guard.arm()
        inherited = refusal.allow_children() if overridden and not venv else _NOTHING
        _state["refused_dists"] = []
        _state["command"] = command
        try:
            status = original(self, options, args, *rest, **kw)
        finally:
            _state["command"] = None
            if inherited is not _NOTHING:
                refusal.restore_children(inherited)
        if command == "uninstall" and _state["refused_dists"]:
            _report_distro_uninstall(_state["refused_dists"])
            return refusal.PIP_ERROR_STATUS
        if (command == "install" and status in (0, None) and verdict == "interpreter"
                and not getattr(options, "quiet", 0)):
            _report_shadowing()
        return status

    run._sitewarden_original = original
    cls.run = run


_NOTHING = object()


def _skip_own_check(module):
    """pip 23+'s ``check_externally_managed``, skipped while the guard's ``run``
    (which decided already, with the same semantics) is running: one decision,
    one report, on every pip."""
    check = getattr(module, "check_externally_managed", None)
    if check is None or getattr(check, "_sitewarden_original", None) is not None:
        return

    def check_externally_managed(*args, **kwargs):
        if _state["command"] is not None:
            return None
        return check(*args, **kwargs)

    check_externally_managed._sitewarden_original = check
    module.check_externally_managed = check_externally_managed


def _patch_command(module, class_name, command):
    _skip_own_check(module)
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
    """PEP 668's recommendation: say which distro packages this install shadows."""
    try:
        from . import install_report, scheme_guard

        install_report.report(sys.stderr, scheme_guard.written())
    except Exception:
        pass
