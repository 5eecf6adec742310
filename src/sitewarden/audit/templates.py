"""Which known template a startup file is: its exact content, written by its author.

A template (setuptools' ``distutils-precedence.pth``, an editable install's finder,
setuptools' namespace-package lines, virtualenv's, coverage's, sitewarden's own hook) is
code whose effect is known.  Naming a file after one, splicing a payload into its line,
or shipping it with a payload module in a wheel whose RECORD vouches for both, must buy
nothing: a RECORD proves a file is unchanged since it was installed, never that it is
benign.  So a file is a template only when every line of it is the template's (:func:`match`,
whitespace runs normalised) and every module its lines run is the template's own content
(pinned per upstream version in :mod:`.template_digests`), and its author is the tool that
writes it (:mod:`.provenance` checks the owners).  Imports nothing.
"""

#: The guard's hook lines (``hooks/sitewarden.pth``, ``hooks/sitewarden.start``).
SITEWARDEN_PTH = ("import os; os.access(sitedir + '/sitewarden/__init__.py', 4) and "
                  "__import__('sitewarden')")
SITEWARDEN_START = "sitewarden:activate"

DISTUTILS = "setuptools distutils-precedence"
EDITABLE = "editable install finder"
NSPKG = "setuptools namespace package"
VIRTUALENV = "virtualenv"
COVERAGE = "coverage.py process_startup"
SITEWARDEN = "sitewarden"

#: The templates whose own modules are pinned content: matched, they excuse what their own
#: code does (coverage's: a pinned release's whole package); what runs beyond is judged.
EXACT = (DISTUTILS, EDITABLE, NSPKG, VIRTUALENV, COVERAGE, SITEWARDEN)

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
    (DISTUTILS, lambda n: n == "distutils-precedence.pth", _distutils),
    (EDITABLE, lambda n: n.startswith("__editable__.") and n.endswith(".pth"), _editable),
    (NSPKG, lambda n: n.endswith("-nspkg.pth"), _nspkg),
    (VIRTUALENV, lambda n: n == "_virtualenv.pth", _exact("import _virtualenv", "_virtualenv")),
    (COVERAGE, lambda n: n.endswith(".pth") and "coverage" in n,
     _exact("import coverage; coverage.process_startup()", "coverage")),
    (SITEWARDEN, lambda n: n == "sitewarden.pth", _exact(SITEWARDEN_PTH, "sitewarden")),
    (SITEWARDEN, lambda n: n == "sitewarden.start", _exact(SITEWARDEN_START, "sitewarden")),
)


def match(name, lines):
    """``(template, [modules its lines import])`` when every non-blank line of the file
    ``name`` (its ``lines``, as read) is the template's, else None: what the file reads
    as, before its modules and its author are checked."""
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


# ------------------------------------------------------- generated modules' fixed forms

#: Old syntax-tree node kinds that later versions call ``Constant`` (3.7's ``ast``).
_CONSTANTS = {"Str": "s", "Bytes": "s", "Num": "n", "NameConstant": "value",
              "Constant": "value"}


def _literal(node):
    """Is the syntax tree ``node`` data only: constants in dicts, lists, tuples, sets,
    joined by ``+`` (an editable finder's ``MAPPING``, ``NAMESPACES``,
    ``PATH_PLACEHOLDER``)?"""
    kind = type(node).__name__
    if kind in _CONSTANTS:
        return True
    if kind == "Dict":
        return all(k is not None and _literal(k) for k in node.keys) and \
            all(_literal(v) for v in node.values)
    if kind in ("List", "Tuple", "Set"):
        return all(_literal(e) for e in node.elts)
    if kind == "BinOp":
        return type(node.op).__name__ == "Add" and _literal(node.left) and \
            _literal(node.right)
    return False


def _form(node, out):
    """Append the syntax tree ``node``'s form to ``out``: kinds and fields, not positions,
    the same from one Python version to the next (empty, zero and false fields left out,
    3.8's ``Index`` unwrapped, old constant kinds named ``Constant``)."""
    kind = type(node).__name__
    if kind == "Index":
        return _form(node.value, out)
    if kind in _CONSTANTS:
        out.append("Constant(%r)" % (getattr(node, _CONSTANTS[kind]),))
        return None
    out.append(kind + "(")
    for field in getattr(node, "_fields", ()):
        if field in ("kind", "type_comment"):
            continue
        value = getattr(node, field, None)
        if value is None or value == [] or (type(value) in (int, bool) and not value):
            continue  # absent, or a later version's default (3.15's ``is_lazy=0``)
        out.append(field + "=")
        if isinstance(value, list):
            out.append("[")
            for item in value:
                _form(item, out) if hasattr(item, "_fields") else out.append(repr(item))
                out.append(",")
            out.append("]")
        elif hasattr(value, "_fields"):
            _form(value, out)
        else:
            out.append(repr(value))
        out.append(",")
    out.append(")")
    return None


def masked_form(tree):
    """The form of a module's syntax ``tree`` with its data masked: each top-level
    assignment to a name of a value that is data only (:func:`_literal`) keeps its target
    and annotation, its value becomes ``<data>``.  setuptools generates an editable
    install's finder so: the generator's code, and only such data varies."""
    out = []
    for node in getattr(tree, "body", ()):
        kind = type(node).__name__
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        value = getattr(node, "value", None)
        if kind in ("Assign", "AnnAssign") and value is not None and \
                all(type(t).__name__ == "Name" for t in targets) and _literal(value):
            out.append("%s(%s:" % (kind, ",".join(t.id for t in targets)))
            if getattr(node, "annotation", None) is not None:
                _form(node.annotation, out)
            out.append("=<data>)")
        else:
            _form(node, out)
        out.append("\n")
    return "".join(out)
