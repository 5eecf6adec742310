"""Which known template a startup file is: the whole file, exactly, and vouched for.

A template (setuptools' ``distutils-precedence.pth``, an editable install's finder line,
setuptools' namespace-package lines, virtualenv's, coverage's, sitewarden's own hook) is
code whose effect is known, so ``check`` says so instead of judging it.  Naming a file
after one, or splicing a payload into its line, must buy nothing: a file is a template
only when every line of it is the template's (whitespace runs normalised), and
:mod:`.inventory` further requires its owner to be verified and the module it imports to
be shipped, verified, by the same owner.  Imports nothing.
"""

#: The guard's hook lines (``hooks/sitewarden.pth``, ``hooks/sitewarden.start``).
SITEWARDEN_PTH = ("import os; os.access(sitedir + '/sitewarden/__init__.py', 4) and "
                  "__import__('sitewarden')")
SITEWARDEN_START = "sitewarden:activate"

_DISTUTILS = ("import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, "
              "'%s') == 'local'; enabled and __import__('_distutils_hack').add_shim();")
_NSPKG = ("import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join("
          "sys._getframe(1).f_locals['sitedir'], *%(pth)s);importlib = has_mfs and "
          "__import__('importlib.util');has_mfs and __import__('importlib.machinery');m = "
          "has_mfs and sys.modules.setdefault(%(pkg)r, importlib.util.module_from_spec("
          "importlib.machinery.PathFinder.find_spec(%(pkg)r, [os.path.dirname(p)])));m = m or "
          "%(old)ssys.modules.setdefault(%(pkg)r, types.ModuleType(%(pkg)r));mp = (m or []) and "
          "m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)%(multi)s")


def normalised(line):
    """A line with its runs of whitespace made one space, and stripped."""
    return " ".join(line.split())


def _distutils(line):
    return "_distutils_hack" if line in (normalised(_DISTUTILS % "local"),
                                         normalised(_DISTUTILS % "stdlib")) else None


def _editable(line):
    head, sep, tail = line.partition("; ")
    module = head[len("import "):] if head.startswith("import ") else ""
    ok = (sep and module.startswith("__editable___") and module.endswith("_finder")
          and module.isidentifier() and tail in (module + ".install()",
                                                 module + ".install();"))
    return module if ok else None


def _nspkg(line):
    """setuptools' namespace-package line (31+), rebuilt for the package it names."""
    start = line.find("sys.modules.setdefault('")
    if start < 0:
        return None
    pkg = line[start + len("sys.modules.setdefault('"):].partition("'")[0]
    if not all(part.isidentifier() for part in pkg.split(".")):
        return None
    parent, _, child = pkg.rpartition(".")
    multi = (";m and setattr(sys.modules[%r], %r, m)" % (parent, child)) if parent else ""
    for old in ("", "not has_mfs and "):
        if line == normalised(_NSPKG % {"pth": repr(tuple(pkg.split("."))), "pkg": pkg,
                                        "old": old, "multi": multi}):
            return ""  # it imports nothing of a distribution's
    return None


def _exact(expected, module):
    return lambda line: module if line == expected else None


#: ``(template, file name test, line test)``: the line test returns the module the line
#: imports ("" for none) when the normalised line is the template's, else None.
TEMPLATES = (
    ("setuptools distutils-precedence", lambda n: n == "distutils-precedence.pth",
     _distutils),
    ("editable install finder", lambda n: n.startswith("__editable__.") and n.endswith(".pth"),
     _editable),
    ("setuptools namespace package", lambda n: n.endswith("-nspkg.pth"), _nspkg),
    ("virtualenv", lambda n: n == "_virtualenv.pth", _exact("import _virtualenv", "_virtualenv")),
    ("coverage.py process_startup", lambda n: n.endswith(".pth") and "coverage" in n,
     _exact("import coverage; coverage.process_startup()", "coverage")),
    ("sitewarden", lambda n: n == "sitewarden.pth", _exact(SITEWARDEN_PTH, "sitewarden")),
    ("sitewarden", lambda n: n == "sitewarden.start", _exact(SITEWARDEN_START, "sitewarden")),
)


def match(name, lines):
    """``(template, [modules its lines import])`` when every non-blank line of the file
    ``name`` (its ``lines``, as read) is the template's, else None."""
    lines = [normalised(x) for x in lines if x.strip()]
    if not lines:
        return None
    for template, fits_name, fits_line in TEMPLATES:
        if not fits_name(name):
            continue
        modules = [fits_line(x) for x in lines]
        if all(m is not None for m in modules):
            return template, sorted({m for m in modules if m})
    return None
