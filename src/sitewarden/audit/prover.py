"""Startup code proved harmless, or not: an allow-list, never a list of bad spellings.

:func:`prove` reads one text's syntax tree (never runs it) and calls it ``proved`` only
when every statement is in a small grammar of harmless operations; anything else is a
reason, ``medium`` (a change of behaviour, or not known to be harmless) or ``high``.

- Statements: imports of evaluable names, assignments (names, tuples, attributes and
  items of values and of proved classes and instances), expressions, ``if``/``for``/
  ``while``/``try``/``with`` (a proved call as context), ``def``/``class``/``lambda``
  (bodies, decorators, defaults, bases, metaclass proved too), ``return``, ``raise``,
  ``assert``, ``del``, ``global``, ``nonlocal``, ``pass``/``break``/``continue``.  Other
  kinds (``match``...) are medium, and what they hold is still read.
- Values: constants, containers, comprehensions, f-strings, operators; never the
  interpreter's internals (``__dict__``, ``__globals__``, frames, ``globals()``,
  ``vars()``, ``builtins``, ``sys.modules`` but a lookup by a literal name...: high).
- Calls, the gate (:mod:`.prover_gate`; values: :mod:`.prover_values`): each callee is
  resolved through the module's bindings (every binding of a name, in any order, on any
  path): a function or class of the proved code; an attribute of an imported module
  that is not the standard library's (``calls``, for the caller to discharge); a
  harmless callable (:mod:`.prover_tables`); a known effect (medium, in ``effects``);
  ``exec``/``eval`` of a literal, read as code here.  Anything else is high: what cannot
  be resolved, code from data, processes, the network, foreign functions, and a module
  or a refused callable passed anywhere as a value (so a value of unknown type never
  holds one).
- ``sys.path`` and ``site.addsitedir`` changes whose arguments evaluate to literal
  strings are ``path_changes``; any other change of where imports come from is high.

Answers are kept per text (:class:`Memo`).  Module level: ``sys`` and sitewarden's own.
"""

import sys

from .. import _swallowed, pathfacts
from ..facts import private_cache
from . import prover_tables as T
from .line_checks import _ONLY_AST
from .prover_gate import _EMPTY, _NONE, _P, _PLAIN, MAX_DEPTH, judge
from .prover_values import Values, children
from .resolve import MAX_DECODED

__all__ = ("MAX_DEPTH", "Memo", "Proof", "judge", "prove")

MAX_REASONS = 20
VERDICTS = ("proved", "unproven", "high")
_ROUNDS = 24
_STMTS = T.words("""FunctionDef AsyncFunctionDef ClassDef Return Delete Assign AugAssign
AnnAssign For AsyncFor While If With AsyncWith Raise Try TryStar Assert Import ImportFrom
Global Nonlocal Expr Pass Break Continue Match TypeAlias""")
_EXPRS = T.words("""BoolOp NamedExpr BinOp UnaryOp Lambda IfExp Dict Set ListComp SetComp
DictComp GeneratorExp Await Yield YieldFrom Compare Call FormattedValue JoinedStr Constant
Attribute Subscript Starred Name List Tuple Slice Index ExtSlice Num Str Bytes NameConstant
Ellipsis TemplateStr Interpolation""")
_ENTERS = ("file", "wfile", "dirs", "lock")


class Proof:
    """What :func:`prove` found (every field JSON-able: tuples, strings, integers).

    ``verdict``: ``proved``, ``unproven`` (a medium reason) or ``high``; ``reasons``:
    ``(severity, line, text)``; ``imports``: ``(level, module, names)`` to follow;
    ``calls``: ``(module, attr, line)``, ``attr`` dotted (``Finder.install``): its first
    part must be a ``def``/``class`` of ``module``'s ``defines`` (an ``import`` there:
    judge ``origin`` + the rest again, :func:`judge` for the standard library's; else a
    submodule ``module.first``), or the call is high; ``defines``: ``(name, kind,
    origin)``; ``path_changes``: ``(target, op, values, line)``, ``values`` a tuple
    (``insert``: ``(index, path)``); ``effects``: ``(line, text)``."""

    __slots__ = ("verdict", "reasons", "imports", "calls", "defines", "path_changes", "effects")

    def __init__(self, verdict, reasons=(), imports=(), calls=(), defines=(),
                 path_changes=(), effects=()):
        self.verdict, self.reasons, self.imports, self.calls = verdict, reasons, imports, calls
        self.defines, self.path_changes, self.effects = defines, path_changes, effects

    def as_tuple(self):
        return tuple(getattr(self, f) for f in self.__slots__)

    def __repr__(self):
        return "Proof(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f in self.__slots__)


class _Scope:
    __slots__ = ("kind", "parent", "root", "names", "decl", "cls", "stars", "fid")

    def __init__(self, kind, parent, cls=None, fid=None):
        self.kind, self.parent, self.cls, self.fid = kind, parent, cls, fid
        self.root = parent.root if parent is not None and kind != "module" else self
        self.names, self.decl, self.stars = {}, {}, []


def prove(text, name="", path="", is_package=False, stdlib=None):
    """The :class:`Proof` of the startup code ``text`` (a module named ``name`` read
    from ``path``; a ``.pth`` import line when ``name`` is empty), never running it."""
    try:
        tree = compile(text, path or "<startup code>", "exec", _ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as e:
        return Proof("high", (("high", getattr(e, "lineno", 0) or 0,
                               "cannot be read: %s: %s" % (type(e).__name__, e)),))
    p = _Prover(text, name, path, is_package, stdlib or frozenset(pathfacts.stdlib_names()))
    try:
        p.run(tree)
    except RecursionError:
        p.reasons.append(("high", p.line, "code nested too deeply to read"))
    except Exception:
        _swallowed("proving startup code %r" % (text[:80],))
        p.reasons.append(("high", p.line, "the audit failed to read it"))
    return p.proof()


class _Prover(Values):
    """One text's proof.  Three walks of one syntax tree: the binding pass records what
    each name may be bound to (``collecting``); a fixpoint computes every name's values
    (:meth:`solve`, abstract values: ``("ref", dotted)``, ``("def"|"class"|"inst",
    node id)``, ``("t", type)``, ``("plain",)``, ``("unres", why)``...); the check
    (``emit``) judges every statement once with them."""

    def __init__(self, text, name, path, is_package, stdlib):
        self.name, self.path, self.is_package, self.stdlib = name, path, is_package, stdlib
        self.pth = not name and path.endswith(".pth")  # runs in site.addpackage's frame
        self.lines, self.line, self.outer, self.prefix, self.depth = text.split("\n"), 0, 0, "", 0
        self.scopes, self.env, self.entries, self.stores, self.nonlocal_ = {}, {}, [], [], []
        self.candidates, self.inlined, self.keep, self.modules = [], {}, [], set()
        self.generators = set()  # functions whose call makes a generator or coroutine
        self.reasons, self.imports, self.calls, self.paths, self.effects = [], [], [], [], []
        self.collecting, self.emit, self.budget, self.work = True, False, [MAX_DECODED], 50000
        self.builtins = frozenset(vars(sys.modules["builtins"]))

    def run(self, tree):
        root = self.root = _Scope("module", None)
        self.body(tree.body, root)
        done, tangled = 0, False
        while True:
            for sc, n, entry in self.nonlocal_:
                s = sc.parent
                while s is not None and (s.kind != "function" or n not in s.names):
                    s = s.parent
                self.bind(s or sc.root, n, entry)
            self.nonlocal_, self.collecting = [], False
            tangled = not self.solve() or tangled
            batch, done = self.candidates[done:], len(self.candidates)
            if not any([self.inline(*c) for c in batch]):
                break
        self.collecting, self.emit = False, True
        if tangled:
            self.reason("high", "binds names too intricately for the audit to follow")
        self.body(tree.body, root)

    def solve(self):
        """Every name's values, each round recomputed from the last (in statement order)
        until none changes: a value seen early (an attribute not stored yet) does not
        outlive what it stood for.  False: no fixpoint within the rounds."""
        groups = {}
        for key, entry in self.entries:
            groups.setdefault(key, []).append(entry)
        for _ in range(_ROUNDS):
            before = dict(self.env)
            for key, entries in groups.items():
                self.env[key] = frozenset().union(*[self.values(e) for e in entries])
            stored = {}
            for recv, attr, entry, sc in self.stores:
                name = attr if isinstance(attr, str) else self.sval(attr, sc)
                for r in self.ev(recv, sc) if isinstance(name, str) else ():
                    key = ("a", r[1], name) if r[0] in ("inst", "class") else \
                        ("m", name) if r == ("ref", self.name) and self.name else None
                    if key:
                        stored[key] = stored.get(key, _EMPTY) | self.values(entry)
            for key in [k for k in self.env if k[0] in ("a", "m")]:
                del self.env[key]
            self.env.update(stored)
            if self.env == before:
                return True
        return False

    def values(self, entry):
        kind = entry[0]
        if kind == "set":
            return entry[1]
        if kind == "dec":
            vals = frozenset([("class" if type(entry[1]).__name__ == "ClassDef" else "def",
                               id(entry[1]))])
            for d in reversed(entry[1].decorator_list):
                vals = self.invoke(self.ev(d, entry[2]), [vals], {}, None, entry[2])
            return vals
        vals = self.ev(entry[1], entry[2])
        if kind == "it":
            return self.elems(vals)
        if kind == "with":
            return frozenset(v if v[0] == "t" and v[1] in _ENTERS else _P for v in vals)
        return vals

    # ---------------------------------------------------------------- statements

    def body(self, stmts, sc):
        for st in stmts:
            self.line = self.outer or getattr(st, "lineno", self.line)
            self.stmt(st, sc)

    def stmt(self, st, sc):
        k, e = type(st).__name__, self.e
        if k in ("FunctionDef", "AsyncFunctionDef", "ClassDef"):
            self.define(st, sc, k)
        elif k in ("Assign", "AnnAssign", "AugAssign"):
            if k == "AnnAssign":
                e(st.annotation, sc)
            if st.value is None:
                return
            vals = e(st.value, sc)
            for t in st.targets if k == "Assign" else [st.target]:
                if k == "AugAssign" and self.emit and ("ref", "sys.path") in self.ev(t, sc):
                    self.path_change("sys.path.extend", [st.value], st, sc)
                else:
                    self.assign(t, ("v", st.value, sc), vals, sc, st.value)
        elif k == "Expr":
            e(st.value, sc)
        elif k in ("Import", "ImportFrom"):
            self.imp(st, sc)
        elif k in ("If", "While"):
            if not self.never(st.test, sc):
                e(st.test, sc)
                self.body(st.body, sc)
            self.body(st.orelse, sc)
        elif k in ("For", "AsyncFor"):
            vals = e(st.iter, sc)
            self.assign(st.target, ("it", st.iter, sc), self.elems(vals), sc)
            self.body(st.body, sc)
            self.body(st.orelse, sc)
        elif k in ("With", "AsyncWith"):
            for item in st.items:
                cm = item.context_expr
                vals = e(cm, sc)
                if self.emit and type(cm).__name__ != "Call" and any(
                        v[0] != "inst" and not (v[0] == "t" and v[1] in _ENTERS) for v in vals):
                    self.reason("high", "enters a context the audit cannot resolve: %s"
                                % self.seg(cm), cm)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, ("with", cm, sc), _PLAIN, sc)
            self.body(st.body, sc)
        elif k in ("Try", "TryStar"):
            self.body(st.body, sc)
            for h in st.handlers:
                if h.type is not None:
                    e(h.type, sc)
                if h.name:
                    self.bind(sc, h.name, ("set", _PLAIN))
                self.body(h.body, sc)
            self.body(st.orelse, sc)
            self.body(st.finalbody, sc)
        elif k in ("Return", "Raise", "Assert"):
            for field in ("value", "exc", "cause", "test", "msg"):
                node = getattr(st, field, None)
                if node is not None:
                    vals = e(node, sc)
                    if k == "Return":
                        self.escape(vals, "returns %s", node)
                        self.returns(sc, ("v", node, sc))
                    elif field == "exc" and self.emit and {("ref", "builtins.SystemExit"), (
                            "ref", "builtins.KeyboardInterrupt")} & self.ev(getattr(
                                node, "func", node), sc):
                        self.effect("exits the interpreter (raises %s)" % self.seg(node), node)
        elif k == "Delete":
            for t in st.targets:
                self.delete(t, sc)
        elif k in ("Global", "Nonlocal"):
            for n in st.names:
                sc.decl[n] = k
        elif k not in ("Pass", "Break", "Continue"):
            self.reason("medium", "uses a %s statement, which is not in the audit's grammar"
                        % k, st)
            self.generic(st, sc)

    def generic(self, node, sc):
        """What a node outside the grammar holds, still read."""
        for child in children(node):
            kind = type(child).__name__
            if kind in _STMTS:
                self.body([child], sc)
            elif kind in _EXPRS:
                self.e(child, sc)
            else:
                self.generic(child, sc)

    def never(self, test, sc):
        """Is ``test`` false whenever the code runs (``if TYPE_CHECKING:``, ``if 0:``)?"""
        k = type(test).__name__
        if k in ("Constant", "NameConstant", "Num"):
            return not getattr(test, "value", getattr(test, "n", 1))
        base = self.ev(test.value, sc) if k == "Attribute" else _EMPTY
        return k == "Name" and self.ev(test, sc) == {("ref", "typing.TYPE_CHECKING")} or \
            k == "Attribute" and test.attr == "TYPE_CHECKING" and base == {("ref", "typing")}

    def define(self, st, sc, k):
        for d in st.decorator_list:
            vals = self.e(d, sc)
            if self.emit:
                self.line = self.outer or d.lineno
                self.invoke(vals, [frozenset([("class" if k == "ClassDef" else "def", id(st))])],
                            {}, None, sc, d)
        self.line = self.outer or st.lineno
        if k == "ClassDef":
            inner = self.scope(st, "class", sc, id(st))
            for b in st.bases:
                vals = self.e(b, sc)
                if self.collecting:
                    self.entries.append((("b", id(st)), ("v", b, sc)))
                self.base_ok(vals, b) if self.emit else None
            for kw in st.keywords:
                vals = self.e(kw.value, sc)
                if kw.arg == "metaclass":
                    self.callable_ok(vals, "the metaclass of " + st.name, kw.value, T.BASES)
                else:
                    self.escape(vals, "passes %s to a class keyword", kw.value)
            self.body(st.body, inner)
        else:
            self.function(st, sc)
        self.bind(sc, st.name, ("dec", st, sc))

    def function(self, n, sc):
        a, e = n.args, self.e
        for d in a.defaults + [d for d in a.kw_defaults if d is not None]:
            self.escape(e(d, sc), "keeps %s as a default value", d)
        params = getattr(a, "posonlyargs", []) + a.args + [a.vararg] + a.kwonlyargs + [a.kwarg]
        for node in [getattr(p, "annotation", None) for p in params] + [
                getattr(n, "returns", None)]:
            if node is not None:
                e(node, sc)
        inner = self.scope(n, "function", sc)
        lam = type(n).__name__ == "Lambda"
        self.returns(inner, ("v", n.body, inner) if lam else ("set", _NONE))
        if type(n).__name__ == "AsyncFunctionDef" and self.collecting:
            self.generators.add(id(n))  # calling it makes a coroutine
        decos = [getattr(d, "id", "") for d in getattr(n, "decorator_list", ())]
        for i, p in enumerate(params):
            if p is None:
                continue
            me = sc.kind == "class" and i == 0 and p in a.args and "staticmethod" not in decos
            cls = me and ("classmethod" in decos or n.name in ("__new__", "__init_subclass__"))
            self.bind(inner, p.arg, ("set", frozenset([("class" if cls else "inst", sc.cls)])
                                     if me else _PLAIN))
        if lam:
            self.escape(e(n.body, inner), "returns %s", n.body)
        else:
            self.body(n.body, inner)
        return frozenset([("def", id(n))])

    def scope(self, node, kind, parent, cls=None):
        s = self.scopes.get(id(node))
        if s is None:
            s = self.scopes[id(node)] = self.new_scope(kind, parent, cls)
            s.fid = id(node) if kind == "function" else None
            self.keep.append(node)
        return s

    def new_scope(self, kind, parent, cls=None):
        return _Scope(kind, parent, cls)

    def returns(self, sc, entry):
        """What calling the function whose scope is ``sc`` may return (binding pass)."""
        if self.collecting and sc.fid is not None:
            self.entries.append((("r", sc.fid), entry))

    def bind(self, sc, name, entry):
        if not self.collecting:
            return
        decl = sc.decl.get(name)
        if decl == "Nonlocal":
            self.nonlocal_.append((sc, name, entry))
            return
        sc = sc.root if decl == "Global" else sc
        sc.names.setdefault(name, []).append(entry)
        self.entries.append(((id(sc), name), entry))

    def assign(self, t, entry, vals, sc, value=None):
        k = type(t).__name__
        if k == "Name":
            self.bind(sc, t.id, entry)
            self.kept(sc, t.id, vals, t)
        elif k in ("Tuple", "List"):
            pair = type(value).__name__ in ("Tuple", "List") and len(value.elts) == len(t.elts)
            for i, el in enumerate(t.elts):
                if pair and type(el).__name__ != "Starred":
                    self.assign(el, ("v", value.elts[i], entry[2]), vals, sc, value.elts[i])
                else:
                    self.assign(el, ("it",) + entry[1:] if entry and entry[0] == "v" else (
                        "set", _PLAIN), vals, sc)
        elif k == "Starred":
            self.assign(t.value, entry, vals, sc)
        elif k == "Attribute":
            recv = self.e(t.value, sc)
            if self.emit:
                self.store(recv, t.attr, vals, t)
                self.internal(t)
            elif self.collecting and entry:
                self.stores.append((t.value, t.attr, entry, sc))
        elif k == "Subscript":
            recv = self.e(t.value, sc, True)
            self.e(t.slice, sc)
            if self.emit:
                self.setitem(recv, t, vals, sc)

    def delete(self, t, sc):
        k = type(t).__name__
        if k in ("Tuple", "List"):
            for el in t.elts:
                self.delete(el, sc)
        elif k in ("Attribute", "Subscript"):
            recv = self.e(t.value, sc, k == "Subscript")
            if k == "Subscript":
                self.e(t.slice, sc)
            if self.emit and k == "Attribute":
                self.store(recv, t.attr, _NONE, t, "deletes")
                self.internal(t)
            elif self.emit:
                self.setitem(recv, t, _NONE, sc, "unsets")

    def kept(self, sc, name, vals, n):
        """A binding the interpreter reads by itself: a class attribute or a module's
        dunder (``__class_getitem__``, ``__getattr__``) may be called without a call in
        sight, and a module's ``__builtins__`` gives its functions their builtins."""
        if not self.emit:
            return
        sc = sc.root if sc.decl.get(name) == "Global" else sc
        if sc.kind == "module" and name == "__builtins__":
            self.reason("high", "reaches into interpreter internals: binds __builtins__", n)
        if sc.kind == "class" or sc.kind == "module" and name[:2] == name[-2:] == "__":
            self.escape(vals, "keeps %%s as %s, which the interpreter may call" % name, n)

    def internal(self, t):
        if t.attr in T.INTERNAL_ATTRS:
            self.reason("high", "reaches into interpreter internals: %s" % self.seg(t), t)

    # ---------------------------------------------------------------- imports

    def imp(self, st, sc):
        if type(st).__name__ == "Import":
            for a in st.names:
                self.imported(0, a.name, (), st)
                top = a.asname or a.name.partition(".")[0]
                vals = frozenset([("ref", a.name if a.asname else top)])
                self.bind(sc, top, ("set", vals))
                self.kept(sc, top, vals, st)
        elif st.module != "__future__":
            base = self.imported(st.level, st.module or "", tuple(a.name for a in st.names), st)
            for a in st.names:
                if a.name == "*":
                    sc.root.stars.append(base) if self.collecting else None
                else:
                    vals = frozenset([("ref", base + ("" if base.endswith(".") else ".") + a.name)])
                    self.bind(sc, a.asname or a.name, ("set", vals))
                    self.kept(sc, a.asname or a.name, vals, st)

    def absolute(self, level, module):
        if not level:
            return module
        base = self.name if self.is_package else self.name.rpartition(".")[0]
        for _ in range(level - 1):
            base = base.rpartition(".")[0]
        return (base + "." + module if module else base) if base else None

    def imported(self, level, module, names, node):
        """Record an import; the dotted name it binds from (``.x`` when relative to a
        package the text does not name)."""
        full = self.absolute(level, module)
        label = full if full is not None else "." * level + module
        self.modules.add(label)
        if not self.emit:
            return label
        self.imports.append((level, module, names))
        for m in [label] + [label + "." + n for n in names]:
            if m.partition(".")[0] in ("builtins", "__builtin__"):
                self.reason("high", "reaches into interpreter internals: imports %s" % m, node)
            elif self.is_stdlib(m) and (T.IMPORT_RUNS.get(m) or m.endswith(".__main__")):
                self.reason("high", "imports %s, which %s" % (
                    m, T.IMPORT_RUNS.get(m) or "runs a program's main code"), node)
        return label

    def dyn_import(self, d, n, sc):
        """``__import__('x', ...)``, ``importlib.import_module('.x', 'p')``: evaluated."""
        def arg(i, kw):
            return n.args[i] if len(n.args) > i else next(
                (k.value for k in n.keywords if k.arg == kw), None)
        name, level, fromlist, package = self.sval(arg(0, "name"), sc), 0, (), None
        if d == "builtins.__import__":
            fl, lv = arg(3, "fromlist"), arg(4, "level")
            fromlist = self.strs(fl, sc) if fl is not None else ()
            level = self.ival(lv, sc) if lv is not None else 0
        elif isinstance(name, str) and name.startswith("."):
            package = self.sval(arg(1, "package"), sc)
            level = len(name) - len(name.lstrip("."))
            name = name.lstrip(".")
        if not (isinstance(name, str) and fromlist is not None and type(level) is int and (
                not level or isinstance(package, str) or d == "builtins.__import__")):
            self.reason("high", "imports a module whose name the audit cannot evaluate: %s"
                        % self.seg(n), n)
            return _PLAIN
        if package is not None:
            for _ in range(level - 1):
                package = package.rpartition(".")[0]
            name, level = (package + "." + name if name else package), 0
        full = self.imported(level, name, tuple(fromlist), n)
        if d == "builtins.__import__" and not fromlist and not level:
            full = full.partition(".")[0]
        return frozenset([("ref", full)])

    # ---------------------------------------------------------------- the proof

    def proof(self):
        reasons = sorted(set(self.reasons), key=lambda r: (r[1], r[0] != "high", r[2]))
        verdict = "high" if any(r[0] == "high" for r in reasons) else \
            "unproven" if reasons else "proved"
        if len(reasons) > MAX_REASONS:
            rest = reasons[MAX_REASONS - 1:]
            reasons = reasons[:MAX_REASONS - 1] + [(
                "high" if any(r[0] == "high" for r in rest) else "medium", rest[0][1],
                "... %d more" % len(rest))]
        calls = []
        for d, line in self.calls:
            mods = [m for m in self.modules if d.startswith(m + ".")]
            m = max(mods, key=len) if mods else d.rpartition(".")[0] or d
            calls.append((m, d[len(m) + 1:], line))
        defines = set()
        for name in getattr(self, "root", _Scope("module", None)).names:
            for v in self.env.get((id(self.root), name), _EMPTY) | self.env.get(("m", name),
                                                                                  _EMPTY):
                kind = {"def": "def", "class": "class", "ref": "import"}.get(v[0], "value")
                defines.add((name, kind, v[1] if kind == "import" else ""))
        return Proof(verdict, tuple(reasons), tuple(dict.fromkeys(self.imports)),
                     tuple(dict.fromkeys(calls)), tuple(sorted(defines)),
                     tuple(dict.fromkeys(self.paths)), tuple(dict.fromkeys(self.effects)))


class Memo(private_cache.Memo):
    """:func:`prove`'s answers kept from one check to the next in the probe's private cache
    (:class:`.private_cache.Memo`, as :class:`.capabilities.Memo` keeps capabilities)."""

    FORMAT = 1
    NAME = "startup-proofs-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag, sys.hexversion)

    @staticmethod
    def answer(key):
        name, path, package, text = key.split("\0", 3)
        return prove(text, name, path, package == "1").as_tuple()

    @staticmethod
    def valid(found):
        return type(found) is tuple and len(found) == 7 and found[0] in VERDICTS and all(
            type(f) is tuple for f in found[1:]) and all(
            type(r) is tuple and len(r) == 3 and r[0] in ("high", "medium") and
            type(r[1]) is int and type(r[2]) is str for r in found[1])

    def prove(self, text, name="", path="", is_package=False):
        """:func:`prove`, kept (the default standard library's names)."""
        return Proof(*self.get("\0".join((name, path, "1" if is_package else "0", text))))
