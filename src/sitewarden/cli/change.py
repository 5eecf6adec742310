"""``install`` and ``uninstall``: the commands that change an interpreter, loaded by
:mod:`.main` only for them (``check`` and ``status`` never import ``deploy``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import __version__
from ..facts.marker import in_virtualenv
from . import deploy, deployed, sitecustomize_block, targets
from .errors import UsageError
from .render import Style


def _target_for_change(args: argparse.Namespace) -> targets.Target:
    """The install/uninstall target; refuses to guess when the CLI runs in a venv."""
    if args.python is None and in_virtualenv():
        base = targets.base_interpreter_hint() or "/usr/bin/python3"
        raise UsageError(
            "sitewarden runs in a virtual environment (%s); the guard belongs in a base "
            "interpreter, e.g.: sitewarden %s --python %s"
            % (sys.prefix, args.command, base)
        )
    target = targets.probe_target(args.python)
    venv = targets.venv_of(target)
    if venv is not None:
        base = targets.venv_base(venv) or "/usr/bin/python3"
        raise UsageError(
            "%s is the interpreter of the virtual environment %s; the guard belongs in a "
            "base interpreter (deploying here would change the base's site directories "
            "or guard nothing), e.g.: sitewarden %s --python %s"
            % (target.executable, venv, args.command, base))
    return target


def _site_dir(args: argparse.Namespace, target: targets.Target) -> Path:
    if args.site_dir is not None:
        site_dir = Path(os.path.abspath(args.site_dir))
        deploy.validate_site_dir(target, site_dir)
        return site_dir
    return deploy.default_site_dir(target, args.user)


def install(args: argparse.Namespace, style: Style) -> int:
    target = _target_for_change(args)
    if args.hook == "sitecustomize" and args.user:
        raise UsageError("--hook sitecustomize guards the whole interpreter; "
                         "with --user use the default .pth hook")
    site_dir = _site_dir(args, target)
    # The Debian package's copy guards this target only where its .pth hook runs (< 3.18).
    packaged = [d for d in deployed.find_deployments(target) if d.installer == deployed.DPKG
                and deployed.hook_loads(d.hook, target.version)]
    if packaged and args.site_dir is None and not args.user and \
            deployed.read_deployment(site_dir) is None:
        print("%s %s is guarded by the Debian package sitewarden %s (%s); nothing deployed."
              % (style.good("already guarded:"), target.executable, packaged[0].version,
                 packaged[0].site_dir))
        print("  apt keeps that copy up to date. A copy in %s would come first on sys.path "
              "and be the one loaded instead; to deploy one anyway: sitewarden install "
              "--python %s --site-dir %s" % (site_dir, target.executable, site_dir))
        return 0
    dep = deploy.install(target, site_dir, args.hook)
    how = "sitecustomize block in %s" % dep.manifest["sitecustomize"]["path"] \
        if dep.hook == "sitecustomize" else ", ".join(deploy.HOOK_FILES[dep.hook])
    print("%s sitewarden %s into %s" % (style.good("deployed"), __version__, site_dir))
    print("  target: %s" % target.label)
    print("  loaded by: %s" % how)
    # Whether every start loads it, read as check reads it: nothing of the target runs.
    status = targets.PendingCheck(target.executable, "status").result()[2]
    if status.active:
        print("  active: %s (every start of %s loads it)"
              % (style.good("yes"), target.executable))
    else:
        print("  active: %s: a start of %s would not load it%s"
              % (style.warn("no"), target.executable,
                 " (user site disabled)" if args.user and not target.user_site_enabled else ""))
    if packaged:
        print("  %s the Debian package sitewarden %s (%s) guards %s too; one guard runs: "
              "the copy first on sys.path (%s), the other stays silent. "
              "`sitewarden uninstall` returns to the package's copy."
              % (style.warn("note:"), packaged[0].version, packaged[0].site_dir,
                 target.executable, status.module_file or "none loaded"))
    # The exit-status rule (main.EXAMPLES): deployed but not loaded is not guarded.
    return 0 if status.active else 1


def uninstall(args: argparse.Namespace, style: Style) -> int:
    target = _target_for_change(args)
    site_dir = _site_dir(args, target)
    # A sitecustomize block left without any runtime (no manifest records it) goes too.
    blocks = [o.hook for o in deployed.find_orphans(target) if o.kind == "sitecustomize"]
    if deployed.read_deployment(site_dir) is None:
        if blocks and sitecustomize_block.remove_orphaned_block(blocks[0]):
            print("%s the orphaned sitewarden block from %s" % (style.good("removed"), blocks[0]))
            return 0
        elsewhere = ["%s%s" % (d.site_dir, " (the Debian package: apt remove sitewarden)"
                               if d.installer == deployed.DPKG else "")
                     for d in deployed.find_deployments(target)]
        hint = ("; deployed in: %s (use --site-dir or --user)" % ", ".join(elsewhere)
                if elsewhere else "")
        raise UsageError("no sitewarden deployment in %s%s" % (site_dir, hint))
    deployed_hook = deployed.read_deployment(site_dir).hook
    removal = deploy.uninstall(site_dir)
    print("%s sitewarden from %s" % (style.good("removed"), site_dir))
    if args.hook is not None and deployed_hook and args.hook != deployed_hook:
        print("  %s it was deployed with --hook %s, not %s; removed all the same"
              % (style.warn("note:"), deployed_hook, args.hook))
    for problem in removal.problems:
        print("  %s %s" % (style.warn("note:"), problem))
    if blocks and sitecustomize_block.remove_orphaned_block(blocks[0]):
        print("%s the orphaned sitewarden block from %s" % (style.good("removed"), blocks[0]))
    return 0


COMMANDS = {"install": install, "uninstall": uninstall}
