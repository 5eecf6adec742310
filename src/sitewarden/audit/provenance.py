"""Who vouches for each startup file ``check`` lists, and which known template it is.

The owner (:mod:`.owners`: dpkg's lists, a RECORD, sitewarden's own deployment) is a
claim; it is checked against that owner's record of the file's content
(:mod:`.integrity`).  A file is a known template (:mod:`.templates`) only when its whole
content is the template's, its owner is verified, and the module it imports is a file the
same owner ships, verified too.  Runs in ``check``'s probe; module level: ``os``, ``sys``
and sitewarden's modules.
"""

import os
import sys

from .. import _swallowed
from ..probe import private_cache
from . import integrity, line_checks, owners, templates
from .reader import READ_LIMIT, site_dirs
from .records import Owner

#: The sitecustomize hook's block (``cli.deployed.BLOCK_BEGIN``; detect cannot import cli).
SITEWARDEN_BLOCK = "# >>> sitewarden guard >>>"


def _sitewarden_claim(f):
    """sitewarden's own claim on ``f``, checked against its deployment record (hashes
    ``sitewarden install`` wrote, ``integrity.verify_deployment``), or None: a hook file
    beside a ``sitewarden/`` package, or a ``sitecustomize`` holding the guard's block."""
    name = os.path.basename(f.path)
    site_dir = None
    if name in ("sitewarden.pth", "sitewarden.start"):
        if os.path.isfile(os.path.join(f.site_dir or "", "sitewarden", "__init__.py")):
            site_dir = f.site_dir
    elif f.kind == "sitecustomize" and _holds_block(f.realpath):
        site_dir = _deployment_listing(f.realpath) or _deployment_listing(f.path)
        if site_dir is None:
            return Owner("sitewarden", verified=None, mismatch="no deployment record lists it")
    if site_dir is None:
        return None
    owner = Owner("sitewarden")
    try:
        owner.verify(integrity.verify_deployment(site_dir, f.realpath if f.kind ==
                                                 "sitecustomize" else f.path))
    except Exception:
        _swallowed("checking %s against sitewarden's deployment record" % (f.path,))
        owner.verify(integrity.Verdict(mismatch="could not be checked"))
    return owner


def _holds_block(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return SITEWARDEN_BLOCK in fh.read(READ_LIMIT)
    except (OSError, TypeError):
        return False


def _deployment_listing(path):
    """The site directory whose sitewarden deployment record lists ``path``, or None."""
    site = sys.modules.get("site")
    user, dirs = site_dirs(site) if site is not None else (None, [])
    for d in ([user] if user else []) + dirs:
        try:
            with open(os.path.join(d, integrity.DEPLOYMENT_RECORD), encoding="utf-8") as fh:
                if "\n%s," % path in "\n" + fh.read(READ_LIMIT):
                    return d
        except (OSError, UnicodeError):
            continue
    return None


def _verify(f, check, *args):
    """Check ``f``'s owner's claim (``integrity.verify_dpkg``/``verify_record``); one that
    cannot be checked stays unverified."""
    try:
        f.owner.verify(check(*args))
    except Exception:
        _swallowed("verifying the owner of %s" % (f.path,))
        f.owner.verify(integrity.Verdict(mismatch="could not be checked"))


def assign_owners(files):
    """Each file's :class:`Owner` (dpkg first, then a RECORD, then sitewarden's own
    deployment), verified, and its known template (:func:`_template`)."""
    wanted = [f.path for f in files if owners.dpkg_candidate(f.path)
              or owners.dpkg_candidate(f.realpath)]
    quiet = [f.path for f in files if f.kind in ("pth", "start") and not f.executable()]
    dpkg = (owners.dpkg_owners(wanted, likely_only=quiet, index_dir=private_cache.DIRECTORY)
            if wanted else {})
    for f in files:
        dist = None
        if f.path in dpkg:
            f.owner = Owner("dpkg", package=dpkg[f.path])
            _verify(f, integrity.verify_dpkg, f.owner.package, f.path, f.realpath)
        else:
            dist = owners.record_owner(f.path)
            if dist is not None:
                f.owner = Owner("distribution", distribution=dist.name, version=dist.version,
                                metadata=dist.path, installer=dist.installer)
                _verify(f, integrity.verify_record, dist, f.path)
            else:
                f.owner = _sitewarden_claim(f) or f.owner
        if f.kind in ("pth", "start"):
            f.template = _template(f, dist)


def _template(f, dist):
    """The known template ``f`` is (:mod:`.templates`): its whole content is the
    template's, its owner is verified, and each module its lines import is a file the
    same owner ships, verified; else None (``f.lookalike``: the template it reads as)."""
    try:
        found = templates.match(os.path.basename(f.path), [x.text for x in f.lines])
    except Exception:
        _swallowed("matching %s against the known templates" % (f.path,))
        return None
    if found is None:
        return None
    name, modules = found
    f.lookalike = name
    if not f.owner.trusted():
        return None
    for module in modules:
        origin = line_checks.module_origin(module)
        if not origin or _shipped(f, dist, origin) is not True:
            return None
    f.lookalike = None
    return name


def _shipped(f, dist, origin):
    """Does ``f``'s owner ship the module file ``origin``, as it is?  (True, False, None)"""
    o = f.owner
    real = os.path.realpath(origin)
    try:
        if o.kind == "dpkg":
            return integrity.verify_dpkg(o.package, origin, real).verified
        if o.kind == "distribution" and dist is not None:
            return integrity.verify_record(dist, origin).verified
        if o.kind == "sitewarden":
            return integrity.verify_deployment(f.site_dir, origin).verified
    except Exception:
        _swallowed("checking the module %s against %s" % (origin, o.text()))
    return None
