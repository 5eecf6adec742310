"""Who put a file there: dpkg's database, a distribution's RECORD, sitewarden, a template.

Runs inside a target (``check``'s startup inventory) and in the pip guard (the Debian
package that owns a distribution pip was asked to uninstall).  dpkg is never spawned:
``/var/lib/dpkg/info/<package>[:<arch>].list`` holds each package's paths, and a file's
owner is the package whose list names it (``dpkg -S`` reads the same lists, all of
them, after starting a process).  The lists of the packages most likely to own a
Python file (``python*``, ``libpython*``, ``pypy*``, ``sitewarden``, and the caller's
guess) are read first; the rest only while a path is still unowned, and only for paths
where a package may put files (not ``/usr/local``, a home or a virtual environment).
On Debian 12 with 855 packages: the first group is ~50 lists (~0.5 ms), all of them
~7.6 MB (~36 ms: what an unowned file under ``/usr/lib`` that runs code costs; for one
that runs none, ``check`` reads the likely lists only).  Module level: ``os``
and sitewarden's own modules.
"""

import os

from .. import _swallowed
from . import distinfo

#: dpkg's database: ``<package>[:<arch>].list`` holds the paths of the package's files.
DPKG_INFO = "/var/lib/dpkg/info"
#: Package name prefixes read first: those that ship Python files.
LIKELY = ("python", "libpython", "pypy", "sitewarden")
#: Where Debian packages put Python's startup files; ``/usr/local`` is the administrator's
#: (Debian policy 9.1.2), homes, virtual environments and checkouts are nobody's.
DPKG_DIRS = ("/usr/", "/etc/", "/lib/", "/lib64/", "/var/lib/")


def package_of(list_name):
    """``python3-six`` of ``python3-six.list``, ``libpython3.11-minimal`` of
    ``libpython3.11-minimal:amd64.list``."""
    return list_name[:-len(".list")].split(":")[0]


def dpkg_candidate(path):
    """May a Debian package own ``path``?  (Under ``/usr``, ``/etc``... not ``/usr/local``.)"""
    return path.startswith(DPKG_DIRS) and not path.startswith("/usr/local/")


def dpkg_owners(paths, guess=None, info=DPKG_INFO, likely_only=()):
    """``{path: Debian package}`` for those of ``paths`` (absolute) that a package's
    ``.list`` names (as written, or resolved through symbolic links).  Reads the
    likely lists first (``guess``'s before all) and stops as soon as every path is
    found; the others only for a path not in ``likely_only`` (whose owner matters less
    than the time: ``check``'s startup files that run no code).  ``{}`` without dpkg."""
    needles = {}
    for path in paths:
        for variant in (path, os.path.realpath(path)):
            needles[b"\n" + os.fsencode(variant) + b"\n"] = path
    if not needles:
        return {}
    try:
        names = [n for n in os.listdir(info) if n.endswith(".list")]
    except OSError:
        return {}

    def rank(name):
        package = package_of(name)
        return (package != guess, not package.startswith(LIKELY), name)

    out = {}
    for name in sorted(names, key=rank):
        try:
            with open(os.path.join(info, name), "rb") as f:
                data = f.read()  # searched as is: a copy of 7.6 MB costs more than the test
        except OSError:
            continue  # unreadable: another package's list may still say
        for needle, path in list(needles.items()):
            if path in out:
                del needles[needle]
            elif needle in data or data.startswith(needle[1:]) or data.endswith(needle[:-1]):
                out[path] = package_of(name)
                del needles[needle]
        if not needles or all(p in out for p in needles.values()):
            break
        if not (package_of(name) == guess or package_of(name).startswith(LIKELY)) \
                and all(p in out or p in likely_only for p in needles.values()):
            break
    return out


def record_owner(path):
    """The distribution whose RECORD (or ``installed-files.txt``) in the same directory
    lists the file ``path`` (a ``.pth``, ``.start`` or ``sitecustomize.py`` at the top of
    a site directory), or None."""
    return distinfo.pth_owner(path)


# ---------------------------------------------------------------- templates


def _distutils_hack(line):
    return (line.startswith("import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = ")
            and line.rstrip().rstrip(";").endswith(
                "enabled and __import__('_distutils_hack').add_shim()"))


def _editable(line):
    head, sep, tail = line.partition("; ")
    module = head[len("import "):]
    return (sep and module.startswith("__editable__") and module.endswith("_finder")
            and module.isidentifier() and tail.strip() in (
                module + ".install()", "%s.install()" % module))


def _nspkg(line):
    return (line.startswith("import sys, types, os;")
            and "f_locals['sitedir']" in line and "exec(" not in line)


def _coverage(line):
    return (line.startswith("import coverage") and "process_startup()" in line
            and "exec(" not in line and "eval(" not in line)


def _sitewarden(line):
    line = line.strip()
    return line.startswith("sitewarden:") or (
        line.startswith("import os; os.access(sitedir + '/sitewarden/__init__.py'")
        and line.endswith("__import__('sitewarden')"))


def _virtualenv(line):
    return line.strip() == "import _virtualenv"


#: ``(template, file name test, import line test)``: a file is a known template when its
#: name fits and every import line it has is the template's (a payload named after one
#: is not).
TEMPLATES = (
    ("setuptools distutils-precedence", lambda n: n == "distutils-precedence.pth",
     _distutils_hack),
    ("editable install finder", lambda n: n.startswith("__editable__") and n.endswith(".pth"),
     _editable),
    ("setuptools namespace package", lambda n: n.endswith("-nspkg.pth"), _nspkg),
    ("virtualenv", lambda n: n == "_virtualenv.pth", _virtualenv),
    ("coverage.py process_startup", lambda n: n.endswith(".pth") and "coverage" in n,
     _coverage),
    ("sitewarden", lambda n: n in ("sitewarden.pth", "sitewarden.start"), _sitewarden),
)


def template_of(name, import_lines):
    """The known template the startup file ``name`` (with these import lines) is, or None."""
    try:
        for template, fits_name, fits_line in TEMPLATES:
            if fits_name(name) and all(fits_line(line) for line in import_lines):
                return template
    except Exception:
        _swallowed("matching %s against the known templates" % (name,))
    return None
