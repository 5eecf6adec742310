"""Who vouches for each startup file ``check`` lists and each module it runs, and which
known template it is.

The owner (:mod:`.owners`: dpkg's lists, a RECORD, sitewarden's own deployment) is a
claim; it is checked against that owner's record of the file's content
(:mod:`.integrity`), the startup file's and each module's its lines run alike.  Verified
means "unchanged since its owner installed it", never "benign": a wheel writes its own
RECORD.  So a file is a known template (:mod:`.templates`) only when its content, and
that of each module it runs, is exactly the template's own (pinned per upstream version,
:mod:`.template_digests`) and its author is the tool that writes it (:data:`AUTHORS`).
Runs in ``check``'s probe; module level: ``os``, ``sys`` and sitewarden's modules.
"""

import os
import sys

from .. import _swallowed, settings
from ..facts import distinfo, distribution, integrity, owners, private_cache, reader
from ..facts.reader import site_dirs
from ..facts.startup_records import Owner
from . import line_checks, own_runtime, pinned, template_digests, templates

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
    if owner.verified and f.kind != "sitecustomize" and not own_runtime.runs_ours():
        # A deployment record is a file like any other: a wheel can ship one beside a
        # sitewarden package of its own.  Only this sitewarden's runtime, byte for byte,
        # makes the hook sitewarden's.
        owner.verified, owner.mismatch = None, own_runtime.not_ours_text()
    return owner


def _holds_block(path):
    """Does the ``sitecustomize`` at ``path`` hold the guard's block?  (Its bytes as the
    startup files' one reader read them, once per check.)"""
    data = reader.read_bytes(path)[0] if isinstance(path, str) else None
    return data is not None and SITEWARDEN_BLOCK.encode() in data


def _deployment_listing(path):
    """The site directory whose sitewarden deployment record lists ``path``, or None."""
    site = sys.modules.get("site")
    user, dirs = site_dirs(site) if site is not None else (None, [])
    for d in ([user] if user else []) + dirs:
        text = reader.read_text(os.path.join(d, integrity.DEPLOYMENT_RECORD))[0]
        if text is not None and "\n%s," % path in "\n" + text:
            return d
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
    deployment), verified; its template is :func:`vouch`'s, once its modules are known."""
    wanted = [f.path for f in files if owners.dpkg_candidate(f.path)
              or owners.dpkg_candidate(f.realpath)]
    quiet = [f.path for f in files if f.kind in ("pth", "start") and not f.executable()]
    dpkg = (owners.dpkg_owners(wanted, likely_only=quiet, index_dir=private_cache.DIRECTORY)
            if wanted else {})
    for f in files:
        if f.path in dpkg:
            f.owner = Owner("dpkg", package=dpkg[f.path])
            _verify(f, integrity.verify_dpkg, f.owner.package, f.path, f.realpath)
            continue
        f.dist = owners.record_owner(f.path)
        if f.dist is not None:
            f.owner = _dist_owner(f.dist)
            _verify(f, integrity.verify_record, f.dist, f.path)
        else:
            f.owner = _sitewarden_claim(f) or f.owner


def _dist_owner(dist):
    return Owner("distribution", distribution=dist.name, version=dist.version,
                 metadata=dist.path, installer=dist.installer)


def vouch(files, directory=None):
    """After the analysis (``line.module_files``): each module file a startup file's lines
    run, with its owner checked against that owner's record (``f.modules``), each
    ``.pth``'s and ``.start``'s known template (:func:`_template`), and the module files
    whose capabilities are excused (:data:`EXCUSED`)."""
    forms = FormMemo(directory)
    runs = [(f, sorted({p for x in f.executable() for p in x.module_files})) for f in files]
    # Bytecode in __pycache__ is no package's (Debian compiles it after installing; the
    # reader compares it with its source): searching every list for it costs ~16 ms.
    wanted = sorted({p for f, paths in runs for p in paths if _own_package(f, p) is None and (
        owners.dpkg_candidate(p) or owners.dpkg_candidate(os.path.realpath(p)))
        and os.path.basename(os.path.dirname(p)) != "__pycache__"})
    dpkg = owners.dpkg_owners(wanted) if wanted else {}  # one search for them all
    for f, paths in runs:
        f.modules = {path: _module_owner(f, path, dpkg) for path in paths}
        f.template, own = None, set()
        if f.kind in ("pth", "start"):
            f.template, own = _template(f, forms)
        EXCUSED[f.path] = own | {m for m in paths if m not in own and _pinned_tool(f, m)}
    forms.save()


#: ``{startup file: the module files its code runs whose capabilities are excused}``: a
#: template's own files (exact content, right author), and modules that are exactly a
#: known tool's pinned content (:func:`_pinned_tool`), wherever they are reached from.
EXCUSED = {}


def excused(f):
    """The module files of ``f``'s code whose capabilities are excused (:data:`EXCUSED`)."""
    return EXCUSED.get(f.path) or set()


def _own_package(f, path):
    """``f``'s Debian package when its ``md5sums`` lists the module file ``path`` too."""
    o = f.owner
    return o.package if o.kind == "dpkg" and integrity.md5sums_lists(o.package, path) \
        else None


def _module_owner(f, path, dpkg):
    """The :class:`Owner` of the module file ``path`` that ``f``'s lines run, verified:
    sitewarden's deployment (a module in its package beside its hook), ``f``'s Debian
    package when its ``md5sums`` lists it, the one whose ``.list`` names it (``dpkg``:
    ``{path: package}``), else the distribution whose RECORD lists it."""
    o, owner = f.owner, Owner()
    try:
        if o.kind == "sitewarden" and f.site_dir and _under(
                path, os.path.join(f.site_dir, "sitewarden")):
            owner = Owner("sitewarden")
            owner.verify(integrity.verify_deployment(f.site_dir, path))
            return owner
        package = _own_package(f, path) or dpkg.get(path)
        if package:
            owner = Owner("dpkg", package=package)
            owner.verify(integrity.verify_dpkg(package, path, os.path.realpath(path)))
            return owner
        dist = _module_dist(f, path)
        if dist is not None:
            owner = _dist_owner(dist)
            owner.verify(integrity.verify_record(dist, path))
    except Exception:
        _swallowed("checking the module %s against its owner's record" % (path,))
        if owner.claimed():
            owner.verify(integrity.Verdict(mismatch="could not be checked"))
    return owner


def _module_dist(f, path):
    """The distribution whose RECORD lists the module file ``path``: ``f``'s own first,
    then those named after its top-level name, then any in its site directory."""
    entries = [f.site_dir] if f.site_dir else []
    entries += sorted((d for d in sys.path if isinstance(d, str) and d), key=len, reverse=True)
    site = next((d for d in entries if _under(path, d)), None)
    if site is None:
        return None
    rel = os.path.relpath(path, site).replace(os.sep, "/")
    top = rel.partition("/")[0]
    top = top[:-len(".py")] if top.endswith(".py") else top
    dists = distinfo.distributions(site)
    own = [f.dist] if f.dist is not None and f.site_dir == site else []
    # then the directory's, those whose RECORD's text holds the path (one search of them all)
    for dist in own + distribution.named_after(dists, top.lower()) + distinfo.listing(dists, rel):
        if dist.kind == "dist-info" and dist.may_list(rel) and rel in (dist.files() or ()):
            return dist
    return None


def _under(path, directory):
    return bool(path and directory) and path.startswith(os.path.join(directory, ""))


def _template(f, forms):
    """``(template, its own files)``: the known template ``f`` is (its whole content is the
    template's, :func:`.templates.match`), when each of its OWN module files (:func:`_own`)
    is the template's pinned content and its author is the tool that writes it
    (:data:`AUTHORS`); else ``(None, set())`` (``f.lookalike``: the template it reads as,
    judged as any code is).  Modules reached beyond its own files are not the template's:
    they neither make nor unmake it, and what they do is not excused by it."""
    try:
        found = templates.match(os.path.basename(f.path), [x.text for x in f.lines])
        if found is None:
            return None, set()
        name, modules = found
        f.lookalike = name
        origins = [line_checks.module_origin(m) for m in modules]
        if not all(origins):
            return None, set()
        parents = _parents(modules, origins)
        own = _own(origins, f.modules) | parents | {
            m for m in f.modules if _cached_for(m, parents)}
        sources = sorted(m for m in own if not _cached_for(m, own))
        if not AUTHORS[name](f, sources, forms):
            return None, set()
        own = {m for m in own if m.endswith(".py") or _cached_for(m, own)
               or _pinned_binary(f, m)}  # what is not source is excused only when pinned
    except Exception:
        _swallowed("matching %s against the known templates" % (f.path,))
        return None, set()
    f.lookalike = None
    return name, own


def _own(origins, modules):
    """A template's own files: the modules its lines import (``origins``) and, for a
    package, every module file of that package its code runs (``_distutils_hack``'s
    ``override.py``), with the bytecode the reader found to be their sources'."""
    own = set(origins)
    for origin in origins:
        if os.path.basename(origin) == "__init__.py":
            own.update(m for m in modules if _under(m, os.path.dirname(origin)))
        own.update(m for m in modules if _cached_for(m, {origin}))
    return own


def _parents(names, origins):
    """The ``__init__.py`` of each package holding a dotted module the lines import
    (``pytest_cov``'s, of ``pytest_cov.embed``): importing the module runs them, whether
    the reading followed them or not, so they are the template's own files too."""
    out = set()
    for name, origin in zip(names, origins):
        directory = os.path.dirname(origin)
        for _ in range(name.count(".")):
            out.add(os.path.join(directory, "__init__.py"))
            directory = os.path.dirname(directory)
    return out


def _cached_for(path, sources):
    """Is ``path`` the ``__pycache__`` bytecode of one of ``sources``?  The reader keeps
    such a file only when it is its source's compiled code (:func:`.modules.read`)."""
    head, name = os.path.split(path)
    if os.path.basename(head) != "__pycache__" or not name.endswith(".pyc"):
        return False
    source = os.path.join(os.path.dirname(head), name.partition(".")[0] + ".py")
    return source in sources


def _pinned_tool(f, path):
    """Is the module file ``path`` (run by ``f``'s code, beyond any template's own files)
    exactly a known tool's pinned content, with that tool as its verified owner: a module in
    the package of a pinned release of a tool of :data:`.pinned.PACKAGES` (coverage.py,
    ``editables``: :func:`.pinned.release`), setuptools' pinned ``_distutils_hack``?  Its
    capabilities are then that tool's, excused."""
    o = f.modules.get(path)
    if o is None or not o.trusted():
        return False
    tool = pinned.tool(o)
    if tool is not None:
        return pinned.in_package(o, tool, path) and pinned.release(o, tool) and (
            path.endswith(".py") or _cached_for(path, f.modules) or _pinned_binary(f, path))
    return _setuptools(o) and os.path.basename(os.path.dirname(path)) == "_distutils_hack" \
        and pinned.digest(path) in template_digests.DISTUTILS_HACK  # no other module is hashed


def _pinned_binary(f, path):
    """Is the module file ``path`` (not source: an extension) one a known tool ships, by
    its verified owner's record of it: coverage.py's C tracer, pinned per release and
    wheel (:data:`.template_digests.COVERAGE_TRACER`)?"""
    o = f.modules.get(path)
    return o is not None and o.trusted() and _coverages(o) and \
        o.expected in template_digests.COVERAGE_TRACER


def _same_owner(f, module_owner):
    """Is ``module_owner`` (a module's, verified) the owner of ``f`` (verified) too?"""
    o = f.owner
    return o.trusted() and module_owner is not None and module_owner.trusted() and (
        module_owner.kind, module_owner.package, module_owner.distribution) == (
            o.kind, o.package, o.distribution)


def _setuptools(owner):
    return (owner.kind == "dpkg" and owner.package == "python3-setuptools") or (
        owner.kind == "distribution" and settings.canonical(owner.distribution) == "setuptools")


def _distutils(f, files, forms):
    """setuptools' (Debian's python3-setuptools, or the distribution setuptools), its
    modules each one of ``_distutils_hack``'s pinned files, shipped by the same owner."""
    return _setuptools(f.owner) and all(
        pinned.digest(m) in template_digests.DISTUTILS_HACK and _same_owner(f, f.modules.get(m))
        for m in files)


def _editable(f, files, forms):
    """A finder setuptools generated (its form, data masked, is a pinned one) in a wheel
    setuptools built (``WHEEL``'s ``Generator``: ``setuptools``, or before 70.1 the
    ``bdist_wheel`` of ``wheel`` it ran), installed with its ``.pth``: one RECORD lists and
    verifies both."""
    return f.owner.trusted() and f.owner.kind == "distribution" and \
        _generator(f.dist).startswith(("setuptools", "bdist_wheel")) and all(
            _forms(forms, m)[0] in template_digests.EDITABLE_FINDER
            and _same_owner(f, f.modules.get(m)) for m in files)


def _generator(dist):
    """The ``Generator`` of a distribution's ``WHEEL`` file (what built the wheel), or ""."""
    try:
        text = dist._member("WHEEL") if dist is not None and dist.kind == "dist-info" else None
    except (OSError, ValueError):
        text = None
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == "generator":
            return value.strip()
    return ""


def _nspkg(f, files, forms):
    """setuptools' namespace-package lines run no module; shipped by a package or a
    distribution, verified."""
    return not files and f.owner.trusted() and f.owner.kind in ("dpkg", "distribution")


def _virtualenv(f, files, forms):
    """virtualenv's patch: no package claims the ``.pth``, it sits in the site directory of
    a virtual environment whose ``pyvenv.cfg`` names its author (virtualenv, or uv, which
    writes its own copy), and its module is that author's pinned ``_virtualenv.py``."""
    author = None if f.owner.claimed() or not f.site_dir else _venv_author(f.site_dir)
    pins = {"virtualenv": template_digests.VIRTUALENV,
            "uv": template_digests.UV_VIRTUALENV}.get(author)
    return pins is not None and all(
        os.path.dirname(m) == f.site_dir and pinned.digest(m) in pins for m in files)


#: The build backends that generate each editable loader: ``(its module name's test, the
#: WHEEL ``Generator`` it writes)``.
_LOADER_AUTHORS = ((lambda m: m.endswith("_editable_loader"), ("meson",)),
                   (lambda m: not m.endswith("_editable_loader"), ("scikit-build-core",)))


def _loader(f, files, forms):
    """An editable loader scikit-build-core or meson-python generated (its form, data
    masked, a pinned one: :data:`.template_digests.EDITABLE_LOADER`) in a wheel that
    backend built (``WHEEL``'s ``Generator``), installed with its ``.pth``/``.start``: one
    RECORD lists and verifies both."""
    return bool(files) and _built_by(f, files, lambda m: next(
        g for test, g in _LOADER_AUTHORS if test(m))) and all(
            _forms(forms, m)[1] in template_digests.EDITABLE_LOADER for m in files)


def _editables(f, files, forms):
    """The bootstrap module ``editables`` writes (:func:`.templates.editables_bootstrap`)
    in a wheel hatchling or pdm-backend built, with its ``.pth``: one RECORD for both.
    ``editables`` itself is code beyond it: excused when it is a pinned release's
    (:func:`_pinned_tool`), else judged as any code is."""
    return bool(files) and _built_by(f, files, lambda m: ("hatchling", "pdm-backend")) and \
        all(_forms(forms, m)[1] == "editables" for m in files)


def _built_by(f, files, generators):
    """Are ``f`` and its module ``files`` one verified distribution's, whose ``WHEEL``
    names as its ``Generator`` what ``generators(module name)`` gives?"""
    generator = _generator(f.dist)
    return f.owner.trusted() and f.owner.kind == "distribution" and all(
        generator.startswith(generators(os.path.basename(m)[:-len(".py")]))
        and _same_owner(f, f.modules.get(m)) for m in files)


def _forms(forms, path):
    """``(setuptools' finder form, a loader's form)`` of the module ``path``
    (:class:`FormMemo`)."""
    got = (forms.get(_text(path)) or "").split(" ")
    return (got + [""])[:2]


def _venv_author(site_dir):
    """``virtualenv`` or ``uv``: the key the ``pyvenv.cfg`` of the environment ``site_dir``
    is the site directory of (``<prefix>/lib/pythonX.Y/site-packages``,
    ``<prefix>/Lib/site-packages``) has for the tool that made it; else None."""
    prefix = site_dir
    for _ in range(3):
        prefix = os.path.dirname(prefix)
        text = reader.read_text(os.path.join(prefix, "pyvenv.cfg"))[0]
        if text is None:
            continue
        keys = {line.partition("=")[0].strip().lower() for line in text.splitlines()
                if "=" in line}
        return next((k for k in ("virtualenv", "uv") if k in keys), None)
    return None


def _coverage(f, files, forms):
    """coverage's documented line (its author: whoever follows coverage's documentation),
    its own files those of a pinned coverage.py release, each verified against coverage's
    record (:func:`_coverage_pinned`)."""
    return bool(files) and all(_coverages(f.modules.get(m) or Owner()) and _coverage_pinned(
        f.modules[m]) for m in files)


def _coverages(owner):
    """Is ``owner`` coverage.py, verified: the distribution coverage, or Debian's package?"""
    return pinned.tool(owner) == "coverage"


def _coverage_pinned(owner):
    """Is the coverage.py ``owner`` (verified) a pinned release (:func:`.pinned.release`)?"""
    return pinned.release(owner, "coverage")


def _released(name):
    """The author test of a tool of :data:`.pinned.FILES`: its startup file installed by
    the distribution ``name`` with what its line runs (pytest-cov's ``pytest_cov/embed.py``
    and its package's ``__init__.py``; future-fstrings' one module ``future_fstrings.py``),
    each where that RECORD has it, each verified against it (read or not:
    :func:`_verified_by`), and the RECORD's rows for them a pinned release's
    (:func:`.pinned.files_release`): the line and its modules, byte for byte, of one
    release.  What they reach beyond (pytest-cov's coverage) is judged as its own."""
    def released(f, files, forms):
        o = f.owner
        if not (o.trusted() and o.kind == "distribution" and f.dist is not None and
                o.metadata and settings.canonical(o.distribution or "") == name):
            return False
        site = os.path.dirname(o.metadata.rstrip(os.sep))
        own = [os.path.join(site, *p.split("/")) for p in pinned.FILES[name][0]]
        return f.path == own[0] and sorted(files) == sorted(own[1:]) and all(
            _verified_by(f, m) for m in files) and pinned.files_release(name, o.metadata)
    return released


def _verified_by(f, path):
    """Is the module file ``path`` verified against ``f``'s own RECORD: read (its owner
    checked then, :func:`_module_owner`), else checked now (a package's ``__init__.py``
    that importing its module runs, which the reading did not follow)?"""
    if path in f.modules:
        return _same_owner(f, f.modules[path])
    try:
        return integrity.verify_record(f.dist, path).verified is True
    except Exception:
        _swallowed("checking %s against its RECORD" % (path,))
        return False


def _sitewarden(f, files, forms):
    """sitewarden's hook, deployed (its deployment record verifies it, or the Debian package
    sitewarden's ``md5sums``), and the runtime its import loads byte for byte this
    sitewarden's own (:func:`.own_runtime.runs_ours`: the running code's package, what ``sitewarden
    install`` deploys), each module it names (``files``) in that runtime."""
    o = f.owner
    if not (o.trusted() and f.site_dir and (o.kind == "sitewarden" or (
            o.kind == "dpkg" and o.package == "sitewarden")) and own_runtime.runs_ours()):
        return False
    found = own_runtime.runtime_found()
    return all(_under(m, found) for m in files)


#: Each template's test of its modules' content and its author: ``(f, the module files
#: its lines run, a FormMemo)``.
AUTHORS = {templates.DISTUTILS: _distutils, templates.EDITABLE: _editable,
           templates.NSPKG: _nspkg, templates.VIRTUALENV: _virtualenv,
           templates.COVERAGE: _coverage, templates.SITEWARDEN: _sitewarden,
           templates.LOADER: _loader, templates.EDITABLES: _editables,
           templates.PYTEST_COV: _released("pytest-cov"),
           templates.FUTURE_FSTRINGS: _released("future-fstrings")}


def _text(path):
    data, _why = integrity._content(path)
    return data.decode("utf-8", "replace") if data is not None else ""


class FormMemo(private_cache.Memo):
    """A module's forms, by its text: ``"<setuptools' finder form> <a loader's form>"``
    (sha256 of :func:`.templates.masked_form`, without and with
    :data:`.templates.LOADER_CALLS`; the loader's is ``editables`` for ``editables``'
    bootstrap, empty for a meson-python loader whose build command is not meson's),
    kept from one check to the next (a process's first ``compile()`` is costly)."""

    FORMAT = 3
    NAME = "template-forms-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)

    @staticmethod
    def answer(text):
        try:
            tree = compile(text, "<module>", "exec", line_checks._ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return ""
        if integrity._hasher("sha256") is None:
            return ""
        finder = _sha(templates.masked_form(tree))
        loader = "editables" if templates.editables_bootstrap(tree) else _sha(
            templates.masked_form(tree, templates.LOADER_CALLS)) \
            if templates.meson_command_ok(tree) else ""
        return "%s %s" % (finder, loader)

    @staticmethod
    def valid(value):
        return type(value) is str


def _sha(text):
    h = integrity._hasher("sha256")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()
