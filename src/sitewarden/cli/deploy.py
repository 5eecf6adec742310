"""Deploy the guard into a target interpreter's site directory, and remove it.

A deployment is the ``sitewarden/`` runtime package (with its private
``packaging``) plus the startup hook: ``sitewarden.pth`` (Python < 3.18), the
PEP 829 ``sitewarden.start`` (3.18+, where ``.pth`` import lines no longer run),
or a marked block in ``sitecustomize`` (:mod:`.sitecustomize_block`).  Never both
files by default: on 3.15-3.17 a ``.start`` file makes ``site`` import ``pkgutil``,
``re``, ``enum``... at every start (+76% instructions for ``-c pass`` on sid's
3.15.2) while the ``.pth`` line alone does the same job (see
docs/startup-hooks.md).  Every file written is listed in ``sitewarden/_deployment.json``;
``uninstall`` removes exactly those and restores what it changed, byte for byte.

Crash safety: the package is built and compiled (by the target, :mod:`.bytecode`)
in a hidden staging directory beside its destination and swapped in with one
atomic rename, hooks are written last; a kill at any point leaves the old
deployment or the new one.  The file operations that make it so are
:mod:`.fileops`'s.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import sitewarden

from ..facts.integrity import DEPLOYMENT_RECORD
from ..pathfacts import package_dir
from . import bytecode, fileops, payload, sitecustomize_block
from .deployed import (
    DPKG,
    HOOKS,
    MANIFEST,
    PACKAGE,
    PTH,
    PTH_IMPORTS_END,
    STAGING_PREFIX,
    START,
    START_READ_FROM,
    DeployError,
    Deployment,
    read_deployment,
    shell_quote,
    startup_dirs,
)
from .targets import Target

TYPE_CHECKING = False  # typing is not imported at run time: `check` starts fast
if TYPE_CHECKING:
    from typing import Any

SITECUSTOMIZE_BLOCK = "sitecustomize-block.py"
#: First version whose ``site`` ignores ``.pth`` import lines: the ``.start`` file carries
#: the guard from there on.
START_DEFAULT_FROM = PTH_IMPORTS_END
#: The startup files each hook writes into the site directory (the Debian package
#: ships the same, see packaging/build-deb).
HOOK_FILES = {"pth": (PTH,), "start": (START,), "sitecustomize": ()}


def default_hook(version: tuple[int, int]) -> str:
    """The hook for a target version: ``.pth`` while its import lines run, then ``.start``."""
    return "start" if tuple(version) >= START_DEFAULT_FROM else "pth"


# ---------------------------------------------------------------- locations


def default_site_dir(target: Target, user: bool) -> Path:
    """The target's default-scheme purelib (Debian: /usr/local/lib/python3.X/dist-packages),
    or its user site with ``--user``."""
    if user:
        if not target.user_site:
            raise DeployError("%s has no user site directory" % target.executable)
        return Path(target.user_site)
    return Path(target.purelib)


def _under(path: str, root: str) -> bool:
    """Is ``path`` ``root`` or inside it (both real paths)?"""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def distro_dirs(target: Target) -> list[str]:
    """The target's site directories that belong to the distribution: those that are
    neither its install scheme's (purelib, platlib) nor its user site (Debian's
    ``/usr/lib/python3/dist-packages`` and ``/usr/lib/python3.X/dist-packages``, Fedora's
    ``/usr/lib{,64}/python3.X/site-packages``), as ``check`` classes them ``distro``."""
    own = {os.path.realpath(d) for d in (target.purelib, target.platlib, target.user_site) if d}
    return [d for d in target.site_dirs or () if os.path.realpath(d) not in own]


def refuse_distro_site_dir(target: Target, site_dir: Path) -> None:
    """Refuse (DeployError, before anything is written) a site directory whose real path
    is, or is inside, one of the distribution's site directories or the target's
    standard library (but for the install scheme's own directories, which a pyenv or
    python.org build keeps inside it): the distribution's package manager owns those."""
    real = os.path.realpath(site_dir)
    own = [os.path.realpath(d) for d in (target.purelib, target.platlib, target.user_site) if d]
    if any(_under(real, d) for d in own):
        return
    distro = [d for d in distro_dirs(target) if _under(real, os.path.realpath(d))]
    stdlib = target.facts.get("stdlib")
    in_stdlib = bool(stdlib) and _under(real, os.path.realpath(stdlib))
    if not distro and not in_stdlib:
        return
    where = []
    if distro:
        top = os.path.realpath(distro[0])
        where.append("the distribution's site directory" if top == real
                     else "inside the distribution's site directory %s" % distro[0])
    if in_stdlib:
        where.append("the standard library of %s" % target.executable
                     if os.path.realpath(stdlib) == real
                     else "inside the standard library of %s (%s)" % (target.executable, stdlib))
    shown = str(site_dir) if real == str(site_dir) else "%s (%s)" % (site_dir, real)
    scheme = "sitewarden install --python %s (into %s)" % (
        shell_quote(target.executable), target.purelib)
    if os.path.exists("/etc/debian_version"):
        fix = ("To guard %s from there, install the Debian package: apt install sitewarden "
               "(docs/debian-package.md: it puts the guard in "
               "/usr/lib/python3/dist-packages for every python3.X, and apt keeps it up to "
               "date); or deploy into the install scheme's directory: %s"
               % (target.executable, scheme))
        owner = "dpkg's packages own it"
    else:
        fix = "Deploy into the install scheme's directory: %s" % scheme
        owner = "the distribution's packages own it"
    raise DeployError("%s is %s: %s, and sitewarden install never writes there. %s" % (
        shown, " and ".join(where), owner, fix))


def validate_site_dir(target: Target, site_dir: Path) -> None:
    """``--site-dir`` must be a directory whose ``.pth`` files the target reads.  (A
    distribution's one passes here, so that ``uninstall`` can remove what an older
    sitewarden deployed there; :func:`install` refuses it.)"""
    real = os.path.realpath(site_dir)
    if real not in {os.path.realpath(d) for d in startup_dirs(target)}:
        refuse_distro_site_dir(target, site_dir)  # the standard library: say whose it is
        raise DeployError(
            "%s is not a site directory of %s: its .pth files are never read. "
            "Site directories: %s" % (site_dir, target.executable, ", ".join(startup_dirs(target)))
        )


# ---------------------------------------------------------------- install


def install(target: Target, site_dir: Path, hook: str | None = None) -> Deployment:
    """Deploy (or upgrade in place) the guard into ``site_dir`` of ``target``; ``hook``
    None: :func:`default_hook` for its version."""
    if hook is None:
        hook = default_hook(target.version)
    if hook not in HOOKS:
        raise DeployError("unknown hook %r (choose pth, start or sitecustomize)" % hook)
    if hook == "start" and tuple(target.version) < START_READ_FROM:
        raise DeployError(
            "Python %s does not read .start files (PEP 829, Python 3.15+); use the default "
            ".pth hook" % target.version_string)
    hook_texts = _hook_texts(hook)  # before anything is written: a broken CLI writes nothing
    site_dir = Path(os.path.abspath(site_dir))
    refuse_distro_site_dir(target, site_dir)
    created_dirs: list[str] = []
    if not site_dir.exists():
        created_dirs = fileops.make_dirs(site_dir)
    if not site_dir.is_dir():
        raise DeployError("%s is not a directory" % site_dir)
    if not os.access(site_dir, os.W_OK | os.X_OK):
        raise DeployError(
            "%s is not writable by this user; run as its owner (e.g. with sudo) "
            "or use --user" % site_dir
        )
    try:
        with fileops.locked(site_dir):
            return _install_locked(target, site_dir, hook, created_dirs, hook_texts)
    except DeployError:
        fileops.undo_created_dirs(created_dirs)
        raise
    except OSError as exc:
        fileops.undo_created_dirs(created_dirs)
        raise DeployError(
            "cannot write to %s: %s" % (exc.filename or site_dir, exc.strerror or exc)
        ) from None


def _hook_texts(hook: str) -> dict[str, str]:
    """The startup files ``hook`` installs, read from this CLI's installation; a
    DeployError naming the fix when they cannot be (a partial copy of sitewarden)."""
    names = HOOK_FILES[hook] + ((SITECUSTOMIZE_BLOCK,) if hook == "sitecustomize" else ())
    try:
        return {name: payload.hook_text(name) for name in names}
    except OSError as exc:
        raise DeployError(
            "this sitewarden installation is incomplete (%s): nothing was deployed; "
            "reinstall sitewarden (pip install --force-reinstall sitewarden, or "
            "apt install --reinstall sitewarden)" % (exc.strerror or exc)) from None


def _install_locked(
    target: Target, site_dir: Path, hook: str, created_dirs: list[str],
    hook_texts: dict[str, str],
) -> Deployment:
    package = Path(package_dir(site_dir))
    previous = _previous_deployment(site_dir, package)
    old_sc = None
    if previous is not None and previous.manifest is not None:
        created_dirs = previous.manifest.get("created_dirs", []) + created_dirs
        old_sc = previous.manifest.get("sitecustomize")
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=site_dir))
    try:
        new_package = Path(package_dir(staging))
        payload.write_tree(staging, payload.runtime_files())
        bytecode.compile_runtime(target, new_package, package)
        fileops.chmod_tree(new_package)
        hook_files = list(HOOK_FILES[hook])
        sitecustomize = None
        if hook == "sitecustomize":
            sitecustomize = sitecustomize_block.add_block(target, site_dir, old_sc,
                                                          hook_texts[SITECUSTOMIZE_BLOCK])
        elif old_sc is not None:
            sitecustomize_block.remove_block(old_sc, target.executable)
        runtime = fileops.files_under(new_package, PACKAGE + "/")
        files = runtime + [MANIFEST, DEPLOYMENT_RECORD] + hook_files
        _write_record(staging, runtime, {name: hook_texts[name].encode("utf-8")
                                         for name in hook_files}, sitecustomize)
        _write_manifest(new_package / "_deployment.json", {
            "version": sitewarden.__version__,
            "hook": hook,
            "python": target.executable,
            "python_version": target.version_string,
            "site_dir": str(site_dir),
            "files": sorted(set(files)),
            "created_dirs": created_dirs,
            "sitecustomize": sitecustomize,
            "written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        })
        _swap_in(new_package, package, staging / "old")
        _write_hooks(site_dir, hook_files, hook_texts)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    dep = read_deployment(site_dir)
    assert dep is not None
    return dep


def _previous_deployment(site_dir: Path, package: Path) -> Deployment | None:
    """What ``site_dir`` holds, after refusing what an install must not replace: the Debian
    package's files, symlinks at our names, a ``sitewarden`` package we did not deploy."""
    previous = read_deployment(site_dir)
    if previous is not None and previous.installer == DPKG:
        raise DeployError(
            "%s holds the Debian package sitewarden (dpkg owns its files): upgrade it with "
            "apt, or deploy elsewhere with --user or --site-dir" % site_dir)
    fileops.clean_stale_staging(site_dir)
    for path in (package, site_dir / PTH, site_dir / START):
        fileops.refuse_symlink(path)
    previous = read_deployment(site_dir)
    if package.exists() and (previous is None or previous.manifest is None):
        raise DeployError(
            "%s already holds a 'sitewarden' package that sitewarden did not deploy "
            "(installed by pip?); deploy elsewhere with --user or --site-dir, or remove it first"
            % site_dir
        )
    return previous


def _record_row(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (name, digest.decode("ascii"), len(data))


def _write_record(staging: Path, runtime: list[str], hooks: dict[str, bytes],
                  sitecustomize: dict[str, Any] | None) -> None:
    """The deployment record (``facts.integrity.DEPLOYMENT_RECORD``): each file written,
    with its sha256 as a RECORD gives it, so that ``check`` recognises sitewarden's own
    hook by its content, not its name.  The runtime's paths and the hooks' are relative to
    the site directory; a ``sitecustomize`` holding the block is absolute."""
    rows = [_record_row(name, (staging / name).read_bytes()) for name in runtime]
    rows += [_record_row(name, data) for name, data in sorted(hooks.items())]
    if sitecustomize is not None:
        rows.append(_record_row(sitecustomize["path"], Path(sitecustomize["path"]).read_bytes()))
    rows.append("%s,," % DEPLOYMENT_RECORD)
    record = staging / DEPLOYMENT_RECORD
    record.write_text("\n".join(rows) + "\n", encoding="utf-8")
    os.chmod(record, 0o644)  # whatever the umask: as chmod_tree left the rest


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.chmod(path, 0o644)


def _swap_in(new_package: Path, package: Path, old: Path) -> None:
    """Put the staged package in place, atomically where the kernel can exchange."""
    if package.exists():
        if not fileops.exchange(new_package, package):
            os.rename(package, old)
            os.rename(new_package, package)
    else:
        os.rename(new_package, package)


def _write_hooks(site_dir: Path, hook_files: list[str], texts: dict[str, str]) -> None:
    """Hooks last: a kill before this point leaves an inert or the old hook.  The new one
    is written before the other kind is removed (e.g. the .start an older sitewarden wrote
    beside its .pth), so a start always finds one of them."""
    for name in hook_files:
        fileops.atomic_write(site_dir / name, texts[name].encode("utf-8"))
    for name in (PTH, START):
        if name not in hook_files:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(site_dir / name)


# ---------------------------------------------------------------- uninstall


class Removal:
    """What ``uninstall`` removed, and what it could not."""

    def __init__(self, site_dir: Path, removed: list[str], problems: list[str],
                 created_dirs: list[str] | None = None) -> None:
        self.site_dir = site_dir
        self.removed = removed
        self.problems = problems
        self.created_dirs = created_dirs or []


def uninstall(site_dir: Path) -> Removal:
    """Remove the deployment in ``site_dir``: exactly its manifest's files, the
    bytecode interpreters wrote for them, and the sitecustomize block."""
    site_dir = Path(os.path.abspath(site_dir))
    if not site_dir.is_dir():
        raise DeployError("%s does not exist" % site_dir)
    if not os.access(site_dir, os.W_OK | os.X_OK):
        raise DeployError("%s is not writable by this user; run as its owner" % site_dir)
    try:
        with fileops.locked(site_dir):
            removal = _uninstall_locked(site_dir)
    except OSError as exc:
        raise DeployError("cannot remove from %s: %s" % (site_dir, exc.strerror or exc)) from None
    # Directories the install created (e.g. a new user site), if now empty.
    fileops.undo_created_dirs(removal.created_dirs)
    return removal


def _uninstall_locked(site_dir: Path) -> Removal:
    dep = read_deployment(site_dir)
    if dep is not None and dep.installer == DPKG:
        raise DeployError(
            "%s holds the Debian package sitewarden (dpkg owns its files): remove it with "
            "apt remove sitewarden" % site_dir)
    leftovers = fileops.clean_stale_staging(site_dir)
    dep = read_deployment(site_dir)
    if dep is None:
        if leftovers:  # a killed first install: what it left was all there was
            return Removal(site_dir, leftovers, [])
        raise DeployError("no sitewarden deployment in %s" % site_dir)
    removed: list[str] = []
    problems: list[str] = []
    manifest = dep.manifest or {}
    # Hooks first, so no new process loads a half-removed runtime.
    for name in (PTH, START):
        path = site_dir / name
        if os.path.lexists(path):
            os.unlink(path)
            removed.append(name)
    if manifest.get("sitecustomize"):
        problem = sitecustomize_block.remove_block(manifest["sitecustomize"],
                                                   manifest.get("python"))
        if problem:
            problems.append(problem)
        removed.append(manifest["sitecustomize"]["path"])
    package = Path(package_dir(site_dir))
    if package.is_symlink():
        problems.append("%s is a symbolic link; left it alone" % package)
    elif package.is_dir():
        listed = set(manifest.get("files", []))
        foreign = [
            f for f in fileops.files_under(package, PACKAGE + "/")
            if f not in listed and not (f.endswith(".pyc") and "/__pycache__/" in f)
        ]
        if foreign and dep.manifest is not None:
            problems.append(
                "kept files in %s that sitewarden did not write: %s" % (package, ", ".join(foreign))
            )
            for f in sorted(listed):
                if f.startswith(PACKAGE + "/"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(site_dir / f)
        else:
            # Move aside first: a kill mid-way leaves a hidden directory, not half a package.
            aside = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=site_dir))
            os.rename(package, package_dir(aside))
            shutil.rmtree(aside)
        removed.append(PACKAGE + "/")
    return Removal(site_dir, removed, problems, manifest.get("created_dirs", []))
