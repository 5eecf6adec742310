"""What is deployed where: the read-only side of ``deploy`` (``status`` and ``check``).

Imports no ``pathlib``, ``contextlib`` or ``subprocess``: ``sitewarden check`` loads
this module, and every module it imports is paid at every run (see
docs/benchmarks.md).  Paths are strings here (a ``Path`` given is accepted).
"""

from __future__ import annotations

import os

from ..pathfacts import package_dir, read_regular
from .jsontext import loads
from .state import Orphan

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

    from .targets import Target

PACKAGE = "sitewarden"
PTH = "sitewarden.pth"
START = "sitewarden.start"
MANIFEST = "sitewarden/_deployment.json"
BLOCK_BEGIN = "# >>> sitewarden guard >>>"
BLOCK_END = "# <<< sitewarden guard <<<"
STAGING_PREFIX = ".sitewarden-"
#: The hooks ``install --hook`` takes.
HOOKS = ("pth", "start", "sitecustomize")
#: First version whose ``site`` reads ``.start`` files (PEP 829).
START_READ_FROM = (3, 15)
#: ``installer`` in the manifest of the Debian package's copy: dpkg owns those files.
DPKG = "dpkg"
#: First version whose ``site`` ignores ``.pth`` import lines (PEP 829).
PTH_IMPORTS_END = (3, 18)
#: The most read of a manifest or a ``sitecustomize`` (the one reader's limit).
MAX_READ = 1 << 22


def hook_loads(hook: str | None, version: tuple[int, ...]) -> bool:
    """Does a start of Python ``version`` load a deployment whose hook is ``hook``?  A
    ``.pth`` import line runs before 3.18, a ``.start`` entry point from 3.15 on, a
    sitecustomize block always."""
    version = tuple(version)[:2]
    if hook == "pth":
        return version < PTH_IMPORTS_END
    if hook == "start":
        return version >= START_READ_FROM
    return hook == "sitecustomize"


#: What ``shell_quote`` leaves unquoted (``shlex.quote``'s safe characters).
_SHELL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def shell_quote(text: str) -> str:
    """``shlex.quote(text)``, without importing ``shlex`` (and through it ``re``)."""
    if not text:
        return "''"
    if all(c in _SHELL_SAFE for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


class DeployError(Exception):
    """Deployment refused or failed; nothing was left half-written (exit status 2)."""


class Deployment:
    """A deployment found in a site directory."""

    def __init__(self, site_dir: str | os.PathLike[str], manifest: dict[str, Any] | None,
                 hook_files: list[str] | None = None,
                 leftovers: list[str] | None = None) -> None:
        self.site_dir = site_dir
        self.manifest = manifest
        self.hook_files = hook_files or []
        #: Hidden staging entries a killed run left (the next install or uninstall removes them).
        self.leftovers = leftovers or []

    def __repr__(self) -> str:
        return "Deployment(%r, version=%r)" % (str(self.site_dir), self.version)

    @property
    def version(self) -> str | None:
        return (self.manifest or {}).get("version")

    @property
    def hook(self) -> str | None:
        return (self.manifest or {}).get("hook")

    @property
    def installer(self) -> str | None:
        """``"dpkg"`` for the Debian package's copy; None for ``sitewarden install``'s."""
        return (self.manifest or {}).get("installer")

    def as_json(self) -> dict[str, Any]:
        return {
            "site_dir": str(self.site_dir),
            "version": self.version,
            "hook": self.hook,
            "hook_files": self.hook_files,
            "sitecustomize": (self.manifest or {}).get("sitecustomize"),
            "complete": self.manifest is not None and not self.missing,
            "missing": self.missing,
            "installer": self.installer,
        }

    @property
    def missing(self) -> list[str]:
        """Files of the runtime that the manifest lists and that are gone (the
        runtime's own check, ``sitewarden.guard.hooked``, looks at the same ``.py`` files;
        the manifest itself when it is missing)."""
        if self.manifest is None:
            return [MANIFEST] if self.hook_files else []
        return [f for f in self.manifest.get("files", []) if f.endswith(".py")
                and not os.access(os.path.join(self.site_dir, f), os.R_OK)]


def startup_dirs(target: Target) -> list[str]:
    """Directories whose ``.pth`` files the target reads at startup."""
    dirs = [target.purelib, target.platlib, *target.site_dirs]
    if target.user_site:
        dirs.append(target.user_site)
    seen, out = set(), []
    for d in dirs:
        real = os.path.realpath(d) if d else None
        if real is not None and real not in seen:
            seen.add(real)
            out.append(d)
    return out


def find_deployments(target: Target) -> list[Deployment]:
    """Every deployment (or stray hook) in the target's startup directories."""
    found = []
    for d in startup_dirs(target):
        dep = read_deployment(d)
        if dep is not None:
            found.append(dep)
    return found


def read_deployment(site_dir: str | os.PathLike[str]) -> Deployment | None:
    manifest = None
    data = read_regular(os.path.join(package_dir(site_dir), "_deployment.json"), MAX_READ)[0]
    try:
        manifest = loads(data.decode("utf-8")) if data is not None else None
    except ValueError:  # UnicodeDecodeError too
        manifest = None
    hooks = [name for name in (PTH, START) if os.path.lexists(os.path.join(site_dir, name))]
    leftovers = _staging_leftovers(site_dir)
    if manifest is None and not hooks and not leftovers:
        return None
    return Deployment(site_dir, manifest, hooks, leftovers)


def runtime_problem(site_dir: str | os.PathLike[str]) -> str | None:
    """Why the runtime in ``site_dir`` cannot be loaded by its hook, or None."""
    package = package_dir(site_dir)
    if not os.path.lexists(package):
        return "its runtime %s is missing" % package
    init = os.path.join(package, "__init__.py")
    if not os.path.isfile(init) or not os.access(init, os.R_OK):
        return "its runtime %s is incomplete (no readable __init__.py)" % package
    return None


def uninstall_command(target: Target, site_dir: str | os.PathLike[str]) -> str:
    """The ``sitewarden uninstall`` command line that removes what is in ``site_dir``."""
    return change_command("uninstall", target, site_dir)


def change_command(command: str, target: Target, site_dir: str | os.PathLike[str]) -> str:
    """The ``sitewarden install``/``uninstall`` command line for ``site_dir`` of ``target``
    (``--user``, ``--site-dir DIR`` or neither, for the default scheme's directory)."""
    where = ""
    if os.path.realpath(site_dir) == os.path.realpath(target.user_site or "/nonexistent"):
        where = " --user"
    elif os.path.realpath(site_dir) != os.path.realpath(target.purelib):
        where = " --site-dir %s" % shell_quote(str(site_dir))
    return "sitewarden %s --python %s%s" % (command, shell_quote(target.executable), where)


def find_orphans(target: Target) -> list[Orphan]:
    """Every sitewarden hook of ``target`` (``.pth``, ``.start``, sitecustomize block)
    whose runtime is missing or incomplete, with what it does and how to remove it."""
    out = []
    problems = {d: runtime_problem(d) for d in startup_dirs(target)}
    # An entry point is resolved by importing ``sitewarden`` from sys.path: a runtime-less
    # directory is no regular package, so a complete runtime anywhere else wins.
    loadable = [d for d, problem in problems.items() if problem is None]
    for d, problem in problems.items():
        site_dir = d
        for name, kind in ((PTH, "pth"), (START, "start")):
            path = os.path.join(site_dir, name)
            if problem is None or not os.path.lexists(path):
                continue
            if kind == "start" and tuple(target.version) >= START_READ_FROM and loadable:
                effect = ("harmless while %s holds a complete runtime (the entry point "
                          "sitewarden:activate resolves there), but left behind: without "
                          "that one, every start of %s prints an error"
                          % (package_dir(loadable[0]), target.executable))
            elif kind == "start" and tuple(target.version) >= START_READ_FROM:
                effect = ("every start of %s prints \"Error resolving entry point "
                          "sitewarden:activate\" and a traceback" % target.executable)
            elif kind == "start":
                effect = "ignored by Python %s (no .start files before 3.15)" % (
                    target.version_string)
            else:
                effect = "silent (its line checks that the runtime is there), but left behind"
            out.append(Orphan.make(hook=str(path), kind=kind, site_dir=str(site_dir),
                                   problem=problem, effect=effect,
                                   remove="rm %s" % shell_quote(str(path)),
                                   uninstall=uninstall_command(target, site_dir)))
    sitecustomize = target.sitecustomize
    if sitecustomize and not loadable:
        data = read_regular(sitecustomize, MAX_READ)[0]  # never a FIFO, never waiting
        if data is not None and BLOCK_BEGIN.encode() in data:
            out.append(Orphan.make(
                hook=str(os.path.realpath(sitecustomize)), kind="sitecustomize", site_dir=None,
                problem="no sitewarden runtime in any site directory of %s" % target.executable,
                effect="silent (the block ignores a missing runtime), but left behind",
                remove="sitewarden uninstall --python %s (or delete the lines between '%s' "
                "and '%s')" % (shell_quote(target.executable), BLOCK_BEGIN, BLOCK_END),
                uninstall="sitewarden uninstall --python %s" % shell_quote(target.executable)))
    return out


def _staging_leftovers(site_dir: str | os.PathLike[str]) -> list[str]:
    """Hidden ``.sitewarden-*`` entries: what killed runs left."""
    try:
        return sorted(n for n in os.listdir(site_dir) if n.startswith(STAGING_PREFIX))
    except OSError:
        return []
