"""What each piece of startup code ``check`` lists does, read, never run.

Each import line, entry point, ``sitecustomize`` and ``usercustomize`` gets its
``capabilities`` and ``evidence`` (:mod:`.capabilities`), with those of every module it
imports, followed recursively to the file a start would run (:mod:`.modules`: the source,
or the bytecode that runs instead of it), never run; what cannot be read is its ``unread``
and an ``unread-startup-code`` finding (:func:`unread_findings`).  A line that would
change the import system when it runs is noted "not applied by check" (the emulated start
left it out).
Runs in ``check``'s probe; module level: ``os``, ``sys`` and sitewarden's modules.
"""

import os
import sys

from ..facts import private_cache
from ..facts.records import Finding
from . import capabilities, line_checks, modules, own_runtime, proof_checks, provenance, prover


def annotate(files, directory=None, lines=None):
    """Set ``capabilities`` and ``evidence`` of each startup line that runs code (an
    import line, with every module it imports, followed: :class:`_Follow`; an entry point:
    its module's) and of each ``sitecustomize`` and ``usercustomize`` (the whole module,
    and what it imports); left None when there are none.  ``module_files``: the files
    read (or that would run unread); ``unread``: what was not read, and why.  ``lines``:
    the check's :class:`.line_checks.LineMemo`."""
    memo = capabilities.Memo(directory)
    reading = _Reading(directory)
    for f in files:
        if f.file_type or f.size is not None:
            continue
        if f.kind in ("sitecustomize", "usercustomize") and f.capabilities is None:
            _customize(f, reading)
        # sitewarden's own hook, and the runtime its import loads is this sitewarden's,
        # byte for byte (never a record's word: a wheel can ship one): its code is known
        own = os.path.basename(f.path) in ("sitewarden.pth", "sitewarden.start") and \
            own_runtime.runs_ours()
        for line in f.lines:
            if line.kind not in ("import", "entry-point") or line.runs is False \
                    or line.capabilities is not None:
                continue
            state = _Follow(reading, own)
            state.added = [f.site_dir] if f.started_by and f.site_dir else []
            if line.kind == "import":
                found = memo.analyse(line.text)
                state.line(line.text, lines, f.path)
            else:
                found = ()
                state.queue(((0, line.text.partition(":")[0], (), True),), "", 0)
            LINE_FOUND[line.text] = found
            found = _merged(found, state.drain())
            line.module_files, unread = state.files, state.said()
            line.module_names = state.names
            line.capabilities = [name for name, _e in found] or None
            line.evidence = capabilities.evidence(found) or None
            line.unread = unread or None
    memo.save()
    reading.save()


def _customize(f, reading):
    """A ``sitecustomize``/``usercustomize``: the module, then what it imports."""
    path = f.realpath if (f.realpath or "").endswith(".py") else f.path
    kind = "source" if (path or "").endswith(".py") else "sourceless" \
        if (path or "").endswith(".pyc") else "loader"
    state = _Follow(reading)
    state.seen.add(f.kind)
    found = state.read(f.kind, kind, path, 0, True, named=False) + state.drain()
    f.module_files, f.module_names = state.files, state.names
    f.capabilities = [name for name, _e in found] or None
    f.evidence = capabilities.evidence(found) or None
    f.unread = state.said() or None


#: How many module files a line's reading reads at most, and how deep it follows imports:
#: reaching either is said (``unread``), never passed over.
MAX_MODULES = 64
MAX_DEPTH = 16
MAX_SAID = 12  # unread modules named one by one; the rest counted


def _line_imports(text, lines=None):
    checks = lines.checks(text) if lines is not None else line_checks.read_line(text)
    return checks if not isinstance(checks, str) else ()


class _Reading:
    """The memos one check's reading shares: modules' answers, bytecode verdicts."""

    def __init__(self, directory):
        self.modules = ModuleMemo(directory)
        self.pycs = modules.PycMemo(directory)
        self.proofs = prover.Memo(directory)

    def save(self):
        self.modules.save()
        self.pycs.save()
        self.proofs.save()


class _Follow:
    """One reading: the modules queued, seen, read; the files; what was not read."""

    def __init__(self, reading, own=False):
        self.reading, self.todo, self.seen, self.read_count = reading, [], set(), 0
        self.own = own  # this sitewarden's own runtime, byte for byte: not followed
        self.files, self.unread, self.skipped = [], [], []
        self.names = {}  # module name -> the file read for it (its proof: PROOFS)
        self.ahead = []  # directories the code read puts first on sys.path (evaluated)
        self.added = []  # a site.addsitedir'ed directory: on sys.path when its .pth runs

    def drain(self):
        out = []
        while self.todo:
            name, depth, deep = self.todo.pop(0)
            if name in self.seen or not name or (self.own and line_checks._own(name)):
                continue
            self.seen.add(name)
            where = self._in(self.ahead, name) or modules.locate(name) or \
                self._in(self.added, name)
            if where is None:
                continue
            if depth > MAX_DEPTH or self.read_count >= MAX_MODULES:
                self.skipped.append((name, "imported more than %d levels deep" % MAX_DEPTH
                                     if depth > MAX_DEPTH else
                                     "past the %d modules check reads" % MAX_MODULES))
                continue
            out.extend(self.read(name, where[0], where[1], depth, deep))
        return tuple(out)

    def queue(self, imported, package, depth):
        """Queue the modules ``imported`` (:func:`_scan`'s) by a module of ``package``."""
        for level, module, attrs, top in imported:
            self.todo.extend((sub, depth, top)
                             for sub in _resolved(package, level, module, attrs, top))

    def line(self, text, lines, pth=""):
        """Queue what the import line ``text`` imports (setuptools' known line: as
        :data:`.line_checks.KNOWN_LINES` has it, no syntax tree built)."""
        if text.rstrip() in line_checks.KNOWN_LINES:
            self.queue(tuple((0, name, (), True) for name, _u, _a in _line_imports(
                text, lines)), "", 0)
            return
        _found, imported, _mapping, hidden = self.reading.modules.get(text)
        self.unread.extend("this line: %s" % h for h in hidden)
        self.queue(imported, "", 0)
        proof = PROOFS[proof_checks.line_key(text)] = self.reading.proofs.prove(text, "", pth)
        self.applied(proof)

    def applied(self, proof):
        """Apply the ``sys.path`` inserts ahead of everything that ``proof`` evaluated: the
        imports read after it resolve there first, standard-library names included."""
        for target, op, values, _line in proof.path_changes:
            if target == "sys.path" and op == "insert" and len(values) == 2 and \
                    values[0] == 0 and isinstance(values[1], str):
                self.ahead.insert(0, values[1])

    @staticmethod
    def _in(directories, name):
        """``(kind, origin)`` of the top-level module ``name`` in one of ``directories``
        (put ahead of ``sys.path`` by the code read: :meth:`applied`; or the directory a
        ``site.addsitedir`` added, whose ``.pth`` files run), or None."""
        if "." in name:
            return None
        for directory in directories:
            for origin in (os.path.join(directory, name, "__init__.py"),
                           os.path.join(directory, name + ".py")):
                if os.path.isfile(origin):
                    return "source", origin
        return None

    def said(self):
        """``unread``, the modules past a limit named up to :data:`MAX_SAID`."""
        out = list(self.unread)
        out.extend("%s: not read: %s" % item for item in self.skipped[:MAX_SAID])
        if len(self.skipped) > MAX_SAID:
            out.append("%d more modules: not read: past a limit" % (
                len(self.skipped) - MAX_SAID))
        return out

    def read(self, name, kind, origin, depth, deep, named=True):
        """Read module ``name`` (found as ``kind`` at ``origin``): what it does (the
        evidence ``named`` after it); its imports are queued (``deep``: recursively)."""
        self.read_count += 1
        if kind == "namespace":
            return ()
        if kind != "source":
            if kind in ("sourceless", "extension"):
                self.files.append(origin)
            elif kind == "zip":
                self.files.append(_archive(origin))
            HIDDEN[origin] = ("%s (%s): %s" % (name, origin, _UNREADABLE.get(kind, "not read")),)
            self.unread.extend(HIDDEN[origin])
            return ()
        text, pycs, whys = modules.read(origin, self.reading.pycs)
        self.files.append(origin)
        self.files.extend(pycs)
        self.unread.extend("%s (%s): %s" % (name, origin, why) for why in whys)
        if text is None:
            return ()
        found, imported, mapping, hidden = self.reading.modules.get(text)
        proof = PROOFS[origin] = self.reading.proofs.prove(
            text, name, origin, modules.is_package(origin))
        self.applied(proof)
        self.names[name] = origin
        MAPPINGS[origin] = dict(mapping)
        HIDDEN[origin] = tuple("%s (%s): %s" % (name, origin, h) for h in hidden)
        self.unread.extend(HIDDEN[origin])
        if deep:
            self.queue(imported, name if modules.is_package(origin)
                       else name.rpartition(".")[0], depth + 1)
        if named:
            found = tuple((cap, tuple("%s (in %s)" % (e, name) for e in evidence))
                          for cap, evidence in found)
        FOUND[origin] = found
        return found


_UNREADABLE = {
    "sourceless": "a sourceless module (bytecode only): not read",
    "extension": "a compiled extension module: cannot be read",
    "zip": "a member of a zip archive: not read",
    "loader": "loaded by a loader check does not read"}


def _archive(origin):
    """The zip archive holding the member ``origin`` (``/a/b.zip/m.py``)."""
    path = origin
    while path and not os.path.isfile(path):
        parent = os.path.dirname(path)
        if parent == path:
            return origin
        path = parent
    return path or origin


def _resolved(package, level, module, attrs, parents):
    """The absolute names an import makes: each parent package, the module, and ``from m
    import x``'s ``m.x`` (a submodule, when one is found; else an attribute: nothing).
    Without ``parents`` (an import inside a function): the module and ``m.x`` only."""
    if level:
        parts = package.split(".") if package else []
        if level - 1 >= len(parts):
            return []
        base = ".".join(parts[:len(parts) - (level - 1)])
        module = base + "." + module if module else base
    parts = module.split(".")
    first = 1 if parents else len(parts)
    return [".".join(parts[:i]) for i in range(first, len(parts) + 1)] + [
        module + "." + a for a in attrs]


#: The ``MAPPING`` of each module file a line's analysis read (an editable install's finder).
MAPPINGS = {}
#: What each module file read does (its own ``analyse`` answer, named), and each import
#: line's own text: the parts of a line's capabilities, so a template's own files and
#: pinned tools' modules can be told from the rest (:func:`.provenance.excused`).
FOUND = {}
LINE_FOUND = {}
#: What hides imports in each module file read, or what it is when it cannot be read
#: (``unread``'s items): pinned content's are known (:func:`unread_findings`).
HIDDEN = {}
#: The proof of each module file read and of each import line (``proof_checks.line_key``):
#: a :class:`.prover.Proof` (its calls into other modules: :func:`.proof_checks.reasons`).
PROOFS = {}


class ModuleMemo(private_cache.Memo):
    """A module's ``(capabilities.analyse, its imports (:func:`_scan`), its MAPPING
    literal's items, what hides its imports)``, kept from one check to the next
    (:class:`.private_cache.Memo`): each needs its syntax tree, and a process's first
    ``compile()`` is costly."""

    FORMAT = 3
    NAME = "startup-modules-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)

    @staticmethod
    def answer(text):
        try:
            tree = compile(text, "<module>", "exec", line_checks._ONLY_AST,
                           dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            tree = None
        imports, hidden = _scan(tree)
        return (capabilities.analyse(text), imports, tuple(sorted(_mapping(tree).items())),
                hidden)

    @staticmethod
    def valid(value):
        return type(value) is tuple and len(value) == 4 and capabilities.Memo.valid(
            value[0]) and type(value[1]) is tuple and all(
                type(i) is tuple and len(i) == 4 and type(i[0]) is int and type(i[1]) is str
                and type(i[2]) is tuple and type(i[3]) is bool for i in value[1]) \
            and type(value[2]) is tuple and all(
                type(i) is tuple and len(i) == 2 and type(i[0]) is str and type(i[1]) is str
                for i in value[2]) and type(value[3]) is tuple and all(
                    type(h) is str for h in value[3])


_FUNCTIONS = ("FunctionDef", "AsyncFunctionDef", "Lambda")
_PATH_CHANGES = ("append", "extend", "insert", "__setitem__", "__iadd__", "remove", "clear")


def _scan(tree):
    """``(imports, hidden)`` of a module's syntax ``tree``: each import as ``(level,
    module, names from it, at module level)`` (``import``, ``from``, and
    ``__import__``/``importlib.import_module`` of a literal name), and what hides what
    it imports (a computed import name, a ``__path__`` change), by line."""
    if tree is None:
        return (), ()
    imports, hidden, todo = [], [], [(tree, False)]
    while todo:
        node, inner = todo.pop()
        kind = type(node).__name__
        if kind == "Import":
            imports.extend((0, a.name, (), not inner) for a in node.names)
        elif kind == "ImportFrom":
            imports.append((node.level or 0, node.module or "", tuple(
                a.name for a in node.names if a.name != "*"), not inner))
        elif kind == "Call" and getattr(node.func, "id", None) == "exec":
            more, why = _scan(_literal_code(node))  # the code exec runs: one step
            imports.extend((level, module, names, False) for level, module, names, _t in more)
            hidden.extend("in its exec literal: " + w for w in why)
        elif kind == "Call" and _importer(node.func):
            arg = node.args[0] if node.args else None
            name = getattr(arg, "value", None) if type(arg).__name__ == "Constant" else None
            if isinstance(name, str) and name.strip("."):
                level = len(name) - len(name.lstrip(".")) \
                    if _importer(node.func) != "__import__" else 0
                imports.append((level, name.lstrip("."), (), not inner))
            else:
                hidden.append("imports a computed name (%s(...), line %d): not followed"
                              % (_importer(node.func), node.lineno))
        elif _changes_path(node, kind):
            hidden.append("changes its __path__ (line %d): its submodules may load from "
                          "anywhere" % node.lineno)
        inner = inner or kind in _FUNCTIONS
        for field in getattr(node, "_fields", ()):
            value = getattr(node, field, None)
            for v in value if isinstance(value, list) else [value]:
                if hasattr(v, "_fields"):
                    todo.append((v, inner))
    return tuple(sorted(set(imports))), tuple(sorted(set(hidden)))


def _literal_code(node):
    """The syntax tree of the literal code ``exec('...')`` runs (pytest-cov's ``.pth``),
    or None."""
    arg = node.args[0] if node.args else None
    if type(arg).__name__ != "Constant" or not isinstance(arg.value, str):
        return None
    try:
        return compile(arg.value, "<exec>", "exec", line_checks._ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _importer(func):
    kind = type(func).__name__
    if kind == "Name" and func.id in ("__import__", "import_module"):
        return func.id if func.id == "__import__" else "importlib.import_module"
    if kind == "Attribute" and func.attr in ("import_module", "__import__") and \
            getattr(func.value, "id", None) in ("importlib", "builtins"):
        return "%s.%s" % (func.value.id, func.attr)
    return None


def _changes_path(node, kind):
    """Does ``node`` assign or change a package's ``__path__``?"""
    if kind in ("Assign", "AugAssign", "AnnAssign"):
        targets = node.targets if kind == "Assign" else [node.target]
        return any(getattr(t, "id", None) == "__path__" or getattr(
            getattr(t, "value", None), "id", None) == "__path__" for t in targets)
    if kind == "Call" and type(node.func).__name__ == "Attribute":
        return node.func.attr in _PATH_CHANGES and getattr(
            node.func.value, "id", None) == "__path__"
    return False


def unread_findings(files, euid):
    """``unread-startup-code``: code a start runs that ``check`` did not read completely
    (``unread`` of a line or a ``sitecustomize``: a compiled extension, a sourceless
    module, bytecode that is not its source's, a zip member, a limit reached, a computed
    import name, a ``__path__`` change).  What is not read is never a pass: medium, high
    unless a verified Debian package or sitewarden's deployment vouches for the startup
    file; what runs while check read something else is high always (bytecode that is
    not its source's, a FIFO in its place, a source the compiler decodes otherwise:
    :data:`.modules.NOT_WHAT_RUNS`).  What hides imports inside a
    template's own files or a known tool's pinned content (:func:`.provenance.excused`) is
    that content's, known.  ``euid``: unused (the findings' common signature)."""
    out = []
    for f in files:
        known = {h for m in provenance.excused(f) for h in HIDDEN.get(m, ())}
        places = [(x.number, x.text, [u for u in x.unread if u not in known])
                  for x in f.executable() if x.unread]
        places = [p for p in places if p[2]]
        if f.unread:
            places.insert(0, (None, None, f.unread))
        if not places:
            continue
        items = [u for _n, _t, unread in places for u in unread]
        vouched = f.owner.kind in ("dpkg", "sitewarden") and f.owner.verified is True
        differs = any(m in u for u in items for m in modules.NOT_WHAT_RUNS)
        number, text = places[0][:2]
        where = "(line %d: %s)" % (number, text if len(text) < 60 else text[:57] + "...") \
            if number else "(the whole module)"
        out.append(Finding(
            "unread-startup-code", "high" if differs or not vouched else "medium",
            "%s (%s) runs code at every start of this interpreter %s that check did not read: "
            "%s; what is not read is not judged: find out what it is and whether it should "
            "run" % (f.path, f.owner.text(), where, "; ".join(items[:6]) + (
                "; ..." if len(items) > 6 else "")),
            file=f.path, lines=[n for n, _t, _u in places if n], unread=items,
            owner=f.owner.finding_json()))
    return out


def _merged(*founds):
    """``analyse`` answers merged, in :data:`capabilities.NAMES` order."""
    merged = {}
    for found in founds:
        for name, evidence in found:
            merged.setdefault(name, []).extend(e for e in evidence
                                               if e not in merged.get(name, ()))
    return tuple((n, tuple(merged[n])) for n in capabilities.NAMES if n in merged)


def not_applied(files):
    """Note each line that would change the import system when it runs: the emulated start
    ``check`` describes (:mod:`..probe.static_check`) leaves it out.  An editable install's finder
    line names the mapping its finder module holds (read from its syntax tree)."""
    for f in files:
        for line in f.executable():
            what = None
            if f.template == "editable install finder":
                module = line.text[len("import "):].partition(";")[0].strip()
                mapping = MAPPINGS.get(line_checks.module_origin(module)) or {}
                what = "installs a finder for %s" % (", ".join(
                    "%s -> %s" % item for item in sorted(mapping.items())) or "its modules")
            else:
                shown = [e for e in line.evidence or () if e.startswith("changes-import-system")]
                if shown:
                    text = " ".join(shown)
                    what = "changes %s" % ("sys.meta_path" if "meta_path" in text else
                                           "sys.path" if "path" in text or "addsitedir" in text
                                           else "the import system")
            if what:
                said = "%s when it runs: not applied by check" % what
                line.note = said if not line.note else "%s; %s" % (line.note, said)


def _mapping(tree):
    """The ``MAPPING`` literal of a module's syntax ``tree`` (setuptools' editable finder
    ``__editable___*_finder.py``): ``{name: directory}``, {} when it holds none."""
    for node in getattr(tree, "body", ()):
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        value = getattr(node, "value", None)
        if any(getattr(t, "id", None) == "MAPPING" for t in targets) and \
                type(value).__name__ == "Dict":
            items = [(getattr(k, "value", None), getattr(v, "value", None))
                     for k, v in zip(value.keys, value.values)]
            return {k: v for k, v in items if isinstance(k, str) and isinstance(v, str)}
    return {}
