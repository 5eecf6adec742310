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
~7.6 MB (~16 ms on a 2-core VM: the opens, the reads, the search in about equal parts;
what an unowned file under ``/usr/lib`` that runs code costs; for one that runs none,
``check`` reads the likely lists only).  Module level: ``os``
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
    # (needle, the same at the start of a list, at its end, path): a list is one path a line
    wanted = []
    for path in paths:
        for variant in {path, os.path.realpath(path)}:
            needle = b"\n" + os.fsencode(variant) + b"\n"
            wanted.append((needle, needle[1:], needle[:-1], path))
    if not wanted:
        return {}
    matters = any(w[3] not in likely_only for w in wanted)
    try:
        names = [n for n in os.listdir(info) if n.endswith(".list")]
    except OSError:
        return {}
    likely, rest = [], []
    for name in sorted(names):
        package = package_of(name)
        if package == guess:
            likely.insert(0, (package, name))
        else:
            (likely if package.startswith(LIKELY) else rest).append((package, name))
    out = {}
    for group in (likely, rest):
        for package, name in group:
            if not wanted or (group is rest and not matters):  # see likely_only
                return out
            data = _read_list(os.path.join(info, name))
            if data is None:
                continue  # unreadable: another package's list may still say
            hit = False
            for w in wanted:
                if w[0] in data or data.startswith(w[1]) or data.endswith(w[2]):
                    out[w[3]] = package
                    hit = True
            if hit:
                wanted = [w for w in wanted if w[3] not in out]
                matters = any(w[3] not in likely_only for w in wanted)
    return out


def _read_list(path):
    """The bytes of one ``.list`` file, or None.  Four system calls (open, fstat, read,
    close) where ``open()`` makes seven (it also asks whether the file is a terminal and
    where it stands): reading every list is most of what an unowned file costs."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        want = os.fstat(fd).st_size + 1
        chunks = []
        while True:  # a short read of a regular file is its end; one that grew is read on
            chunk = os.read(fd, want)
            chunks.append(chunk)
            if len(chunk) < want:
                return b"".join(chunks)
            want = 1 << 16
    except OSError:
        return None
    finally:
        os.close(fd)


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
