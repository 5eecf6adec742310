"""Which known template a startup file is: its exact content, written by its author.

A template (setuptools' ``distutils-precedence.pth``, an editable install's finder or
loader, setuptools' namespace-package lines, virtualenv's, coverage's, pytest-cov's,
future-fstrings', sitewarden's own hook) is code whose effect is known.  Naming a file
after one, splicing a payload into its line, or shipping it with a payload module in a
wheel whose RECORD vouches for both, must buy nothing: a RECORD proves a file is unchanged
since it was installed, never that it is benign.  So a file is a template only when every
line of it is the template's (:func:`match`, whitespace runs normalised) and every module
its lines run is the template's own content (pinned per upstream version in
:mod:`.template_digests`), and its author is the tool that writes it (:mod:`.provenance`
checks the owners).  Imports nothing.
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
LOADER = "editable install loader"
EDITABLES = "editables redirector"
PYTEST_COV = "pytest-cov subprocess support"
FUTURE_FSTRINGS = "future-fstrings codec"

#: The templates whose own modules are pinned content: matched, they excuse what their own
#: code does (coverage's: a pinned release's whole package); what runs beyond is judged.
EXACT = (DISTUTILS, EDITABLE, NSPKG, VIRTUALENV, COVERAGE, SITEWARDEN, LOADER, EDITABLES,
         PYTEST_COV, FUTURE_FSTRINGS)

_DISTUTILS = ("import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, "
              "'%s') == 'local'; enabled and __import__('_distutils_hack').add_shim();")
_NSPKG = ("import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join("
          "sys._getframe(1).f_locals['sitedir'], *%(pth)s);importlib = has_mfs and "
          "__import__('importlib.util');has_mfs and __import__('importlib.machinery');m = "
          "has_mfs and sys.modules.setdefault(%(pkg)r, importlib.util.module_from_spec("
          "importlib.machinery.PathFinder.find_spec(%(pkg)r, [os.path.dirname(p)])));m = m or "
          "%(old)ssys.modules.setdefault(%(pkg)r, types.ModuleType(%(pkg)r));mp = (m or []) and "
          "m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)%(multi)s")

#: pytest-cov's ``pytest-cov.pth`` lines (2.0.0 to 2.3.1, 2.4.0, 2.5.0 to 6.3.0; 7.0 ships
#: none): ``exec`` of a literal that imports ``pytest_cov.embed`` and calls its ``init()``
#: when ``COV_CORE_SOURCE`` is set.  Each release's, byte for byte with its modules:
#: :data:`.template_digests.PYTEST_COV`.
_PYTEST_COV_HEAD = (r"import os, sys;exec('if \'COV_CORE_SOURCE\' in os.environ:\n try:\n  "
                    r"from pytest_cov.embed import init\n  init()\n except ")
_PYTEST_COV_OLD = (r':\n  sys.stderr.write(\n   "Failed to setup coverage."\n   "Sources: '
                   r'{[COV_CORE_SOURCE]!r}"\n   "Config: {[COV_CORE_CONFIG]!r}"\n   '
                   r'"Exception: {!r}\\n".format(os.environ, exc))\n' + "')")
PYTEST_COV_LINES = (
    _PYTEST_COV_HEAD + "ImportError" + _PYTEST_COV_OLD,
    _PYTEST_COV_HEAD + "ImportError as exc" + _PYTEST_COV_OLD,
    _PYTEST_COV_HEAD + r'Exception as exc:\n  sys.stderr.write(\n   "pytest-cov: Failed to '
    r'setup subprocess coverage. "\n   "Environ: {0!r} "\n   "Exception: {1!r}\\n".format('
    r"\n    dict((k, v) for k, v in os.environ.items() if k.startswith(\'COV_CORE\')),\n    "
    r"exc\n   )\n  )\n')")


#: future-fstrings' ``aaaaa_future_fstrings.pth`` line (every release, 0.1.0 to 1.2.0: its
#: ``setup.py`` writes it): ``exec`` of a literal that imports ``future_fstrings`` and
#: registers its codec (``codecs.register``) when it imports.  Each release's, byte for byte
#: with its module: :data:`.template_digests.FUTURE_FSTRINGS`.
FUTURE_FSTRINGS_LINE = (r"import sys; exec('try:\n    import future_fstrings\nexcept "
                        r"ImportError:\n    pass\nelse:\n    future_fstrings.register()\n')")


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


def _pytest_cov(line):
    return "pytest_cov.embed" if line in _PYTEST_COV_NORMALISED else None


_PYTEST_COV_NORMALISED = frozenset(normalised(x) for x in PYTEST_COV_LINES)


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


def _imports(test):
    """A ``.pth`` line test: ``import M`` (``M`` passing ``test``) gives ``M``; a path line
    (no code: site adds a directory) gives ""."""
    def fits(line):
        if not line.startswith("import "):
            return ""
        module = line[len("import "):]
        return module if module.isidentifier() and test(module) else None
    return fits


def _meson_line(line):
    """meson-python's line: ``import M; M.init()`` (0.22+), ``import M`` before."""
    head, sep, tail = line.partition("; ")
    module = head[len("import "):] if head.startswith("import ") else ""
    ok = module.isidentifier() and module.startswith("_") and module.endswith(
        "_editable_loader") and (not sep or tail in (module + ".init()", module + ".init();"))
    return module if ok else None


def _entry(suffix, test):
    """A ``.start`` line test: ``M:suffix`` (``M`` passing ``test``) gives ``M``."""
    def fits(line):
        module, sep, func = line.partition(":")
        return module if sep and func == suffix and module.isidentifier() and test(
            module) else None
    return fits


def _skbuild(module):
    return module.startswith("_editable_skbc_") or (
        module.startswith("_") and module.endswith("_editable"))


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
    (PYTEST_COV, lambda n: n == "pytest-cov.pth", _pytest_cov),
    (FUTURE_FSTRINGS, lambda n: n == "aaaaa_future_fstrings.pth",
     _exact(normalised(FUTURE_FSTRINGS_LINE), "future_fstrings")),
    (LOADER, lambda n: n.endswith(".pth") and _skbuild(n[:-4]), _imports(_skbuild)),
    (LOADER, lambda n: n.endswith(".start") and _skbuild(n[:-6]),
     _entry("entrypoint", _skbuild)),
    (LOADER, lambda n: n.endswith("-editable.pth"), _meson_line),
    (LOADER, lambda n: n.endswith("-editable.start"),
     _entry("init", lambda m: m.startswith("_") and m.endswith("_editable_loader"))),
    (EDITABLES, lambda n: n.startswith("_") and n.endswith(".pth"),
     _imports(lambda m: m.startswith("_"))),
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


def _form(node, out, calls=()):
    """Append the syntax tree ``node``'s form to ``out``: kinds and fields, not positions,
    the same from one Python version to the next (empty, zero and false fields left out,
    3.8's ``Index`` unwrapped, old constant kinds named ``Constant``); a call of a name in
    ``calls`` whose arguments are data only has them masked (a generator's data)."""
    kind = type(node).__name__
    if kind == "Index":
        return _form(node.value, out, calls)
    if kind in _CONSTANTS:
        out.append("Constant(%r)" % (getattr(node, _CONSTANTS[kind]),))
        return None
    if kind == "Call" and getattr(node.func, "id", None) in calls and all(
            _literal(a) for a in node.args) and all(_literal(k.value) for k in node.keywords):
        out.append("Call(%s:<data>)" % node.func.id)
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
                _form(item, out, calls) if hasattr(item, "_fields") else out.append(repr(item))
                out.append(",")
            out.append("]")
        elif hasattr(value, "_fields"):
            _form(value, out, calls)
        else:
            out.append(repr(value))
        out.append(",")
    out.append(")")
    return None


def masked_form(tree, calls=()):
    """The form of a module's syntax ``tree`` with its data masked: each top-level
    assignment to a name of a value that is data only (:func:`_literal`) keeps its target
    and annotation, its value becomes ``<data>``; so do the arguments of a call of a name
    in ``calls`` when they are data only.  setuptools generates an editable install's
    finder so (``calls``: none); scikit-build-core and meson-python their loaders
    (:data:`LOADER_CALLS`): the generator's code, and only such data varies."""
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
            _form(node, out, calls)
        out.append("\n")
    return "".join(out)


#: The calls that carry a generated loader's data: scikit-build-core's ``install(...)``
#: (at the end of its ``_editable_redirect.py``, or in ``entrypoint()``), meson-python's
#: ``MesonpyMetaFinder(...)`` (in ``init()``).
LOADER_CALLS = ("install", "MesonpyMetaFinder")


def editables_bootstrap(tree):
    """Is the module ``tree`` the bootstrap ``editables`` writes (hatchling's, pdm-backend's
    editable installs): ``from editables.redirector import RedirectingFinder as F``,
    ``F.install()``, then only ``F.map_module('name', 'path')`` with string literals?"""
    body = list(getattr(tree, "body", ()))
    if len(body) < 2 or type(body[0]).__name__ != "ImportFrom" or body[0].module != \
            "editables.redirector" or body[0].level or [(a.name, a.asname) for a in
                                                          body[0].names] != [
                                                              ("RedirectingFinder", "F")]:
        return False
    calls = [getattr(n, "value", None) for n in body[1:]]
    if not all(type(n).__name__ == "Expr" for n in body[1:]) or not all(
            type(c).__name__ == "Call" and type(c.func).__name__ == "Attribute"
            and getattr(c.func.value, "id", None) == "F" and not c.keywords for c in calls):
        return False
    first, rest = calls[0], calls[1:]
    return first.func.attr == "install" and not first.args and all(
        c.func.attr == "map_module" and len(c.args) == 2 and all(
            type(a).__name__ in ("Constant", "Str") and isinstance(
                getattr(a, "value", getattr(a, "s", None)), str) for a in c.args)
        for c in rest)


_BUILDERS = ("ninja", "ninja.exe", "samu", "meson", "meson.exe", "meson.py")


def meson_command_ok(tree):
    """In a meson-python loader (the module defines ``MesonpyMetaFinder``), does each
    ``install(...)``/``MesonpyMetaFinder(...)`` rebuild with meson or ninja?  Its build
    command is data meson-python generates and it runs at each import: each list of
    strings among the arguments names a builder first (:data:`_BUILDERS`), or is module
    names only (the top-level modules)."""
    body = getattr(tree, "body", ())
    if not any(type(n).__name__ == "ClassDef" and n.name == "MesonpyMetaFinder" for n in body):
        return True
    todo = list(body)
    while todo:
        node = todo.pop()
        if type(node).__name__ == "Call" and getattr(node.func, "id", None) in LOADER_CALLS:
            for arg in node.args:
                items = [getattr(e, "value", getattr(e, "s", None)) for e in getattr(
                    arg, "elts", ())] if type(arg).__name__ == "List" else []
                if items and not _command_ok(items):
                    return False
        for field in getattr(node, "_fields", ()):
            value = getattr(node, field, None)
            todo.extend(v for v in (value if isinstance(value, list) else [value])
                        if hasattr(v, "_fields"))
    return True


def _command_ok(items):
    if not all(isinstance(i, str) for i in items):
        return True  # not a command: data the form masks
    if items[0].replace("\\", "/").rpartition("/")[2] in _BUILDERS:
        return True
    return all(all(p.isidentifier() for p in i.split(".")) for i in items)
