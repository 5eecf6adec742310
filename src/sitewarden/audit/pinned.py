"""Which module files are a known tool's pinned release, by its owner's record.

A tool whose whole package runs behind a startup line (coverage.py's, ``editables``') is
pinned per release (:mod:`.template_digests`) by the rows its verified record has for the
package's ``.py`` files: each module read was verified against that record, so only the
record is read here, never every module hashed.  pytest-cov's and future-fstrings' ``.pth``
with the modules its line runs likewise (:data:`FILES`: named files, a package's or a single
top-level module); ``_distutils_hack``'s few files are hashed (:func:`digest`).  Runs in
``check``'s probe; module level: ``os``, ``sys`` and sitewarden's modules.
"""

import os

from .. import settings
from ..facts import integrity, reader
from ..facts.reader import READ_LIMIT
from . import template_digests

#: The tools whose whole package is pinned per release (:func:`release`): the
#: distribution's canonical name -> (its Debian package or None, its package's directory,
#: the pinned releases' digests).  Only their distributions' records are read for it.
PACKAGES = {
    "coverage": ("python3-coverage", "coverage", template_digests.COVERAGE),
    "editables": (None, "editables", template_digests.EDITABLES),
}


def tool(owner):
    """The tool of :data:`PACKAGES` that ``owner`` is, verified (the distribution,
    or its Debian package), or None."""
    if not owner.trusted():
        return None
    if owner.kind == "distribution":
        name = settings.canonical(owner.distribution or "")
        return name if name in PACKAGES else None
    return next((name for name, (package, _d, _p) in PACKAGES.items()
                 if package and owner.kind == "dpkg" and owner.package == package), None)


#: Where a Debian package's modules are (the ``md5sums`` rows :func:`md5sums_digest` reads).
_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


def in_package(owner, name, path):
    """Is the module file ``path`` in the package of the tool ``name``, in the site
    directory of its owner's record (what the pinned digest covers): never another
    top-level module the same record lists."""
    site = os.path.dirname(owner.metadata.rstrip(os.sep)) if owner.kind == "distribution" \
        and owner.metadata else _DIST_PACKAGES if owner.kind == "dpkg" else None
    return bool(site) and _under(path, os.path.join(site, PACKAGES[name][1]))


_release_digests = {}  # (metadata directory or Debian package, tool) -> its digest


def release(owner, name):
    """Is ``owner`` (verified), of the tool ``name``, a pinned release (:data:`PACKAGES`):
    the sha256 over the sorted ``path hash`` rows its record has for the ``.py`` files of
    its package's directory (the distribution's RECORD, or the Debian package's
    ``md5sums``)?
    Each module read was verified against that record, so what runs is the pinned content;
    only the record is read, no module is hashed for it."""
    key = (owner.metadata if owner.kind == "distribution" else owner.package, name)
    if not key[0]:
        return False
    if key not in _release_digests:
        top = PACKAGES[name][1] + "/"
        _release_digests[key] = record_digest(owner.metadata, lambda p: p.startswith(
            top) and p.endswith(".py")) if owner.kind == "distribution" else \
            md5sums_digest(owner.package, top)
    return _release_digests[key] in PACKAGES[name][2]


def md5sums_digest(package, top):
    """As :func:`record_digest`, from the Debian ``package``'s ``md5sums`` (the rows
    under ``usr/lib/python3/dist-packages/``: ``path md5``), or None."""
    rows, base = [], "usr/lib/python3/dist-packages/"
    for name in integrity._md5sums_names(package, integrity.DPKG_INFO):
        data = integrity.read_list(name) or b""
        for line in data.decode("utf-8", "surrogateescape").splitlines():
            md5, _sep, path = line.partition("  ")
            if path.startswith(base + top) and path.endswith(".py"):
                rows.append((path[len(base):], md5))
    return _rows_digest(sorted(rows))


def record_digest(metadata, wanted):
    """sha256 (hex) over the sorted ``path sha256=...`` rows of the files whose path
    ``wanted(path)`` takes in the RECORD of ``metadata``, or None."""
    text = reader.read_text(os.path.join(metadata, "RECORD"), 4 * READ_LIMIT)[0]
    if text is None:
        return None
    return _rows_digest(sorted(
        tuple(row[:2]) for row in (line.rsplit(",", 2) for line in text.splitlines())
        if len(row) == 3 and wanted(row[0])))


def _rows_digest(rows):
    h = integrity._hasher("sha256") if rows else None
    if h is None:
        return None
    h.update("".join("%s %s\n" % (p, d) for p, d in rows).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


#: The tools whose startup file is pinned per release with the module files its line runs
#: (:func:`files_release`): the distribution's canonical name -> (those files as its RECORD
#: names them, the startup file first; the pinned releases' digests).  Only these rows
#: count: future-fstrings' one top-level module, never another its RECORD lists.
FILES = {
    "pytest-cov": (("pytest-cov.pth", "pytest_cov/__init__.py", "pytest_cov/embed.py"),
                   template_digests.PYTEST_COV),
    "future-fstrings": (("aaaaa_future_fstrings.pth", "future_fstrings.py"),
                        template_digests.FUTURE_FSTRINGS),
}


def files_release(name, metadata):
    """Are the rows the RECORD of the distribution ``metadata`` (the tool ``name`` of
    :data:`FILES`) has for that tool's files a pinned release's: the line and its modules,
    byte for byte, of one release?"""
    files, pins = FILES[name]
    return record_digest(metadata, files.__contains__) in pins


def digest(path):
    """sha256 (hex) of the module file ``path``, or None."""
    data, _why = integrity._content(path)
    h = integrity._hasher("sha256") if data is not None else None
    if h is None:
        return None
    h.update(data)
    return h.hexdigest()


def _under(path, directory):
    return bool(path and directory) and path.startswith(os.path.join(directory, ""))
