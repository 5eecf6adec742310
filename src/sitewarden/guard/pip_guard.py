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
  the install left shadowed and the startup files it changed, as loud as pip's own
  messages (a high block up to ``-qq``, the rest up to ``-q``, nothing at ``-qqq``).
- ``InstallRequirement.uninstall`` (during ``pip uninstall``): a distribution
  pip would find in a distro directory or the standard library is refused
  before pip looks at it (upstream pips would say "No files were found to
  uninstall", Debian's "Not uninstalling ... outside environment", and exit 0):
  one refusal naming the Debian package dpkg says owns it (or the distro's
  generic command), and exit status 1.
- ``is_local`` (and ``UninstallPathSet._permitted``, which pip 24 stopped
  basing on it): a distribution in a distro directory is not pip's to
  remove, so an upgrade installs the new version locally and leaves the
  distro's copy, as Debian's own pip does; an uninstall that still reaches
  one is refused at the end of the command.
pip 26.3 refuses new imports once installation starts, so everything the guard
may need is imported with this module (``policy`` brings ``install_report``, ``json`` and
``subprocess``), when pip is, long before it installs.
Runtime module: imported only when pip is.
"""

import os
import sys

from .. import _swallowed
from ..facts.marker import in_virtualenv, scheme_paths
from . import policy, refusal, scheme_guard
from .patching import wrap_once


class _Command:
    """The pip command this process runs (``install``, ``uninstall`` or None) and the
    distributions refused so far: up front, and as pip reached them."""

    __slots__ = ("refused_dists", "command", "refused_up_front")

    def __init__(self):
        self.refused_dists, self.command, self.refused_up_front = [], None, []


_state = _Command()

#: dpkg's database: ``<package>[:<arch>].list`` holds the paths of the package's files.
DPKG_INFO = "/var/lib/dpkg/info"


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
    if kwargs["prefix"]:
        paths = scheme_paths("posix_prefix", vars={
            "base": kwargs["prefix"], "platbase": kwargs["prefix"]})
    elif kwargs["user"]:
        paths = scheme_paths("posix_user")
    else:
        paths = scheme_paths()
    return [scheme_guard.change_root(kwargs["root"], paths.get(k)) for k in ("purelib", "platlib")]


def _verdict(command, options):
    """``(verdict, directory)`` of :func:`scheme_guard.judge` for this command: where
    its files land, whatever the options that say so."""
    if command == "uninstall":
        return "interpreter", None
    if getattr(options, "dry_run", False) and getattr(options, "json_report_file", None):
        return None, None  # pip 23's exemption: nothing is installed
    if not any(getattr(options, name, None) for name in ("target_dir", "prefix_path",
                                                           "root_path", "use_user_site")):
        return "interpreter", None  # the default scheme
    try:
        verdict = scheme_guard.judge(_landing_dirs(options))
    except Exception:
        _swallowed("where pip installs to (taken as the interpreter: refused unless overridden)")
        return "interpreter", None  # fail closed
    if verdict[0] is None and getattr(options, "use_user_site", False):
        return "interpreter", None  # --user: the marker covers the user site, wherever it is
    return verdict


# ------------------------------------------------------------------ commands


def _main(original):
    """Make pips older than 23.0.1 accept ``--break-system-packages``.

    The option is added to the command's own parser, with pip 23's ``dest``,
    so pip's configuration machinery also maps ``PIP_BREAK_SYSTEM_PACKAGES``
    and ``break-system-packages = true`` onto it, on every pip.
    """

    def main(self, args, *rest, **kw):
        parser = getattr(self, "parser", None)
        if parser is not None and parser.get_option(refusal.FLAG) is None:
            import optparse  # stdlib, imported by pip's own parser already: only the name

            parser.add_option(optparse.Option(
                refusal.FLAG, dest="override_externally_managed", action="store_true",
                default=False, help="Allow pip to modify an EXTERNALLY-MANAGED Python "
                "installation (added by sitewarden)"))
        return original(self, args, *rest, **kw)

    return main


def _run(command):
    """pip's ``run``, decided by the guard first (pip 23's own check is skipped, see
    :func:`_skip_own_check`): pip 23.0 has no override, pip 23+ lets a damaged
    marker and destinations that resolve into the interpreter through."""

    def wrap(original):
        def run(self, options, args, *rest, **kw):
            overridden = bool(getattr(options, "override_externally_managed", False)) or (
                refusal.inherited_override())
            decision = policy.decide("pip", lambda: _verdict(command, options), overridden,
                                     arm_elsewhere=True)
            if decision.refusal is not None:
                refusal.write(decision.refusal)
                return refusal.PIP_ERROR_STATUS
            _state.refused_dists = []
            _state.refused_up_front = []
            _state.command = command
            if command == "uninstall":
                _patch_requirements()
            try:
                status = decision.run(original, self, options, args, *rest, **kw)
            finally:
                _state.command = None
            if command == "uninstall":
                late = [d for d in _state.refused_dists
                        if _canonical(d[0]) not in _state.refused_up_front]
                if late:
                    _report_distro_uninstall(late)
                if late or _state.refused_up_front:
                    return refusal.PIP_ERROR_STATUS
            if status in (0, None):
                decision.report(quiet=_quiet(options), verb=command)  # uninstall: startup only
            return status

        return run

    return wrap


def _quiet(options):
    """pip's ``-q`` count less its ``-v`` count (pip's own verbosity), at least 0."""
    try:
        return max(0, int(getattr(options, "quiet", 0) or 0)
                   - int(getattr(options, "verbose", 0) or 0))
    except (TypeError, ValueError):
        return 0


def _skip_own_check(check):
    """pip 23+'s ``check_externally_managed``, skipped while the guard's ``run``
    (which decided already, with the same semantics) is running: one decision,
    one report, on every pip."""

    def check_externally_managed(*args, **kwargs):
        if _state.command is not None:
            return None
        return check(*args, **kwargs)

    return check_externally_managed


def _patch_command(module, class_name, command):
    wrap_once(module, "check_externally_managed", _skip_own_check)
    cls = getattr(module, class_name, None)
    if cls is not None and wrap_once(cls, "run", _run(command)) is not None:
        wrap_once(cls, "main", _main)


def on_install_module(module):
    _patch_command(module, "InstallCommand", "install")


def on_uninstall_module(module):
    _patch_command(module, "UninstallCommand", "uninstall")
    _patch_requirements()


# ------------------------------------------------------------------ uninstall


def _patch_requirements():
    """Wrap ``InstallRequirement.uninstall`` (pip 9's ``pip.req.req_install``, pip 10+'s
    ``pip._internal.req.req_install``: the uninstall command imported it already), where
    pip looks up the installed distribution of each requirement it is asked to remove."""
    for name in ("pip._internal.req.req_install", "pip.req.req_install"):
        module = sys.modules.get(name)
        cls = getattr(module, "InstallRequirement", None)
        if cls is not None:
            wrap_once(cls, "uninstall", _uninstall_requirement)


def _uninstall_requirement(original):
    """``InstallRequirement.uninstall`` during ``pip uninstall``: a distribution pip
    would find in a distro directory (or the standard library) is refused before pip
    looks at it, whatever the pip: upstream pips would report "No files were found to
    uninstall", Debian's "Not uninstalling ... outside environment", both exiting 0.
    The refusal names the distro package that owns it; the command exits with 1."""

    def uninstall(self, *args, **kwargs):
        if _state.command != "uninstall" or in_virtualenv():
            return original(self, *args, **kwargs)
        name = getattr(self, "name", None)
        found = _installed(name) if name else None
        root = scheme_guard.protected_root(os.path.join(found[0], found[1])) if found else None
        if root is None:
            return original(self, *args, **kwargs)
        _state.refused_up_front.append(_canonical(name))
        owner = dpkg_package(os.path.join(found[0], found[1]), "python3-" + _canonical(name))
        _report_distro_uninstall([(name, found[2], root, owner)])
        if hasattr(self, "nothing_to_uninstall"):
            self.nothing_to_uninstall = True  # pip 9: no "Can't commit" error after it
        return None

    return uninstall


def _canonical(name):
    """PEP 503's normalised form of a project name (``Foo_Bar.baz`` -> ``foo-bar-baz``)."""
    text = str(name or "").lower().replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text


def _installed(name):
    """Where pip finds the installed distribution ``name``: the first on ``sys.path``
    (pip's default environment, both its pkg_resources and its importlib.metadata
    back ends), as ``(directory, metadata entry, version)``, or None."""
    want = _canonical(name)
    for entry in sys.path:
        if not isinstance(entry, str):
            continue  # pip's environment reads text entries only
        directory = os.path.abspath(entry or os.curdir)
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue  # not a directory (a zip file, a missing entry)
        for entry_name in names:
            stem, dot, suffix = entry_name.rpartition(".")
            if not dot or suffix.lower() not in ("dist-info", "egg-info"):
                continue
            project, _, rest = stem.partition("-")
            if _canonical(project) == want:
                return directory, entry_name, rest.split("-")[0]
    return None


def dpkg_package(path, guess=None):
    """The Debian package whose files include ``path`` (dpkg's ``.list`` files), or
    None (no dpkg, or no package owns it).  ``guess``'s list is read first."""
    from ..facts import owners  # only to name the owner of a refused distro uninstall

    return owners.dpkg_owners([path], guess, DPKG_INFO).get(path)


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


def _is_local(original):
    def is_local(path):
        local = original(path)
        if in_virtualenv():
            return local
        root = scheme_guard.protected_root(path)
        if root is None:
            return local
        if _state.command == "uninstall":
            # Also when pip said no itself (Debian's pip: "outside environment"): a
            # distribution the up-front check missed is still refused, not skipped.
            name, version = _dist_from_frames()
            _state.refused_dists.append(
                (name or os.path.basename(str(path)), version, root, None))
        return False

    return is_local


def on_misc_module(module):
    """Teach ``is_local`` that distro directories are not pip's."""
    wrap_once(module, "is_local", _is_local)


def _uninstall_permitted(original):
    def _permitted(self, path):
        if not original(self, path):
            return False
        if in_virtualenv():
            return True
        return scheme_guard.protected_root(path) is None

    return _permitted


def on_req_uninstall_module(module):
    """pip 24+ inlined ``is_local`` into ``UninstallPathSet._permitted``: a file
    in a protected directory is not pip's to remove, even if a local
    distribution's RECORD lists it."""
    cls = getattr(module, "UninstallPathSet", None)
    if cls is not None:
        wrap_once(cls, "_permitted", _uninstall_permitted)


# ------------------------------------------------------------------ reports


def distro_tool(name, owner=None):
    """The command a user of this OS runs to remove ``name``'s distro package
    (``owner``: the Debian package dpkg says owns it)."""
    if owner:
        return "apt remove %s" % owner
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
    """Say why each distro package's uninstall is refused, and what to do: the distro's
    tool, or a virtual environment; never a local copy, which would shadow the distro's."""
    own = scheme_guard.own_dirs()
    local = own[0] if own else "the local site directory"
    seen = set()
    for name, version, root, owner in refused:
        if (name, root) in seen:
            continue
        seen.add((name, root))
        sys.stderr.write(
            "error: cannot uninstall %s%s from %s: %sthat directory belongs to the "
            "operating system's package manager (PEP 668), and pip must not change it.\n"
            "hint: to remove it, use `%s`; to run a different version, install it into a "
            "virtual environment (python3 -m venv DIR, then DIR/bin/pip install %s): a copy in "
            "%s would shadow the distro's for every distro program.\n"
            % (name, " " + version if version else "", root,
               "the Debian package %s installed it, " % owner if owner else "",
               distro_tool(name, owner), name, local)
        )
    sys.stderr.flush()

