"""The values of :mod:`.prover`: what an expression may evaluate to, as abstract values
(``("ref", "os.path.join")``: the interpreter's, or an imported module's, by dotted name;
``("def"|"class"|"inst", node id)``: the proved code's; ``("t", type)``: a value of a
known type; ``("plain",)``: a value of unknown type, which never holds a module nor a
callable the proof refuses; ``("unres", why)``: what cannot be resolved), names looked
up through Python's scopes, judged on the way when the prover checks.  Module level:
sitewarden's own modules.
"""

import sys

from . import prover_tables as T
from .prover_gate import _EMPTY, _NONE, _P, _PLAIN, Gate, canon
from .resolve import _index

_COMPS = {"ListComp": "list", "SetComp": "set", "DictComp": "dict", "GeneratorExp": ""}
_CONSTS = {"Str": "str", "Bytes": "bytes", "Num": "int", "Ellipsis": ""}
_PYTYPES = {"str": "str", "bytes": "bytes", "int": "int", "float": "float", "bool": "bool",
            "NoneType": "none", "complex": "complex", "tuple": "tuple"}
_IMPLICIT = {"__name__": "str", "__file__": "str", "__doc__": "str", "__package__": "str",
             "__path__": "list", "__cached__": "str", "__annotations__": "dict",
             "__debug__": "bool", "__module__": "str", "__qualname__": "str"}
#: A ``.pth`` import line runs in ``site.addpackage``'s frame: its locals are bound there
#: (``sitedir``, the ``.pth``'s directory; ``name``, its file name...), and site's globals.
_PTH_LOCALS = {"sitedir": "str", "name": "str", "fullname": "str", "line": "str",
               "n": "int", "known_paths": "set", "reset": "bool"}
_SITE_GLOBALS = {}


def _site_globals():
    """What a name of ``site``'s module namespace stands for (``makepath`` -> ``site.makepath``,
    ``os`` -> ``os``): the target's own ``site``, read once, never run again."""
    if not _SITE_GLOBALS:
        site = sys.modules.get("site")
        for key, value in (vars(site) if site is not None else {}).items():
            if key.startswith("__"):
                continue
            module = getattr(value, "__name__", None) if type(value) is type(sys) else None
            _SITE_GLOBALS[key] = module or "site." + key
        _SITE_GLOBALS.setdefault("makepath", "site.makepath")
    return _SITE_GLOBALS


_ELEMS = {"str": "str", "file": "str", "wfile": "str", "dirs": "direntry", "bytes": "int"}


def _generic(d):
    """Is subscripting the interpreter's ``d`` a generic alias (``list[str]``)?"""
    last = d.rpartition(".")[2]
    return d.startswith(("typing.", "collections.abc.", "builtins.")) or last[:1].isupper()


def children(node):
    """The syntax nodes directly under ``node``."""
    for field in getattr(node, "_fields", ()):
        value = getattr(node, field, None)
        for v in value if isinstance(value, list) else (value,):
            if hasattr(v, "_fields"):
                yield v


class Values(Gate):
    """Expressions and names, for :class:`.prover._Prover` (its bindings in ``env``)."""

    def e(self, n, sc, lookup=False):
        """Check (or, in the binding pass, scan) the expression ``n``."""
        if not self.collecting:
            return self.ev(n, sc, lookup)
        k = type(n).__name__
        if k == "Lambda":
            self.function(n, sc)
        elif k in _COMPS:
            self.comp(n, sc)
        elif k == "NamedExpr":
            self.e(n.value, sc)
            t = sc
            while t.kind == "comp":
                t = t.parent
            self.assign(n.target, ("v", n.value, sc), _EMPTY, t)
        else:
            if k == "Call":
                self.candidates.append((n, sc, self.depth))
            elif k in ("Yield", "YieldFrom") and sc.fid is not None:
                self.generators.add(sc.fid)
            for child in children(n):
                self.e(child, sc)
        return _EMPTY

    def ev(self, n, sc, lookup=False):
        """The values ``n`` may have; judged on the way when checking."""
        k = type(n).__name__
        if k in ("Constant", "NameConstant"):
            return frozenset([("t", _PYTYPES.get(type(n.value).__name__, ""))])
        if k in _CONSTS:
            return frozenset([("t", _CONSTS[k])])
        if k == "Name":
            return self.named(n, sc, lookup)
        if k == "Attribute":
            if n.attr in T.INTERNAL_ATTRS:
                self.reason("high", "reaches into interpreter internals: %s" % self.seg(n), n)
            vals = self.attr(self.ev(n.value, sc, n.attr in ("get", "__contains__")), n.attr)
            return self.modules_use(vals, lookup, n)
        if k == "Call":
            return self.call(n, sc)
        if k == "Subscript":
            return self.item(n, sc)
        if k in ("List", "Tuple", "Set", "Dict"):
            for el in (n.keys + n.values if k == "Dict" else n.elts):
                if el is not None:
                    self.escape(self.ev(el, sc), "puts %s in a container", el)
            return frozenset([("t", k.lower())])
        if k in _COMPS:
            return self.comp(n, sc)
        if k == "BinOp":
            left, right = self.ev(n.left, sc), self.ev(n.right, sc)
            return frozenset(v if v[0] == "t" and v[1] in ("str", "bytes", "list", "tuple",
                                                            "int", "float") else _P for v in left
                             ) | self.made_of(left | right)
        if k == "UnaryOp":
            vals = self.ev(n.operand, sc)
            return frozenset([("t", "bool")]) if type(n.op).__name__ == "Not" else vals
        if k == "Compare":
            ins = any(type(o).__name__ in ("In", "NotIn") for o in n.ops)
            for o in [n.left] + n.comparators:
                self.ev(o, sc, ins)
            return frozenset([("t", "bool")])
        if k in ("BoolOp", "IfExp"):
            if k == "IfExp":
                self.ev(n.test, sc)
            return frozenset().union(*[self.ev(v, sc) for v in (
                n.values if k == "BoolOp" else (n.body, n.orelse))])
        if k == "Lambda":
            return self.function(n, sc)
        if k == "NamedExpr":
            vals = self.ev(n.value, sc)
            self.assign(n.target, None, vals, sc)
            return vals
        if k in ("Starred", "Index", "Yield", "YieldFrom", "Await", "FormattedValue",
                 "Interpolation"):
            vals = self.ev(n.value, sc) if n.value is not None else _NONE
            if k in ("Yield", "YieldFrom"):
                self.escape(vals, "yields %s", n)
            if getattr(n, "format_spec", None) is not None:
                self.ev(n.format_spec, sc)
            return vals if k in ("Starred", "Index") else _PLAIN
        if k in ("Slice", "ExtSlice", "JoinedStr", "TemplateStr"):
            for child in children(n):
                self.ev(child, sc)
            return frozenset([("t", "str")]) if k == "JoinedStr" else _PLAIN
        self.reason("medium", "uses a %s expression, which is not in the audit's grammar" % k, n)
        self.generic(n, sc)
        return _PLAIN

    def comp(self, n, sc):
        inner = self.scope(n, "comp", sc)
        for i, g in enumerate(n.generators):
            where = sc if i == 0 else inner
            vals = self.e(g.iter, where)
            self.assign(g.target, ("it", g.iter, where), self.elems(vals), inner)
            for c in g.ifs:
                self.e(c, inner)
        for el in (n.key, n.value) if type(n).__name__ == "DictComp" else (n.elt,):
            self.escape(self.e(el, inner), "puts %s in a container", el)
        kind = _COMPS[type(n).__name__]
        return frozenset([("t", kind)]) if kind else _PLAIN

    def where(self, sc, name):
        """The scope whose binding of ``name`` a read in ``sc`` sees (None: unbound)."""
        s, first = sc, True
        while s is not None:
            decl = s.decl.get(name)
            if decl == "Global":
                return s.root if name in s.root.names else None
            if decl != "Nonlocal" and (first or s.kind != "class") and name in s.names:
                return s
            first, s = False, s.parent
        return None

    def named(self, n, sc, lookup=False):
        s = self.where(sc, n.id)
        if s is not None:
            vals = self.env.get((id(s), n.id), _EMPTY) | (
                self.env.get(("m", n.id), _EMPTY) if s is self.root else _EMPTY)
            if not vals and self.emit:
                vals = frozenset([("unres", "%s, whose value the audit cannot follow" % n.id)])
        elif self.pth and n.id in _PTH_LOCALS:
            vals = frozenset([("t", _PTH_LOCALS[n.id])])
        elif self.pth and n.id in _site_globals():
            vals = frozenset([("ref", _site_globals()[n.id])])
        elif n.id in _IMPLICIT and (n.id != "__path__" or self.is_package):
            vals = frozenset([("t", _IMPLICIT[n.id])])
        elif n.id == "__class__" and self.enclosing_class(sc):
            vals = frozenset([("class", self.enclosing_class(sc))])
        else:
            found = set()
            for m in sc.root.stars:
                found.add(("ref", m + "." + n.id) if self.is_stdlib(m) else (
                    "unres", "%s (it may come from `from %s import *`)" % (n.id, m)))
            if n.id in self.builtins:
                found.add(("ref", "builtins." + n.id))
            elif not found:
                found.add(("unres", "%s, which the code never defines" % n.id))
            vals = frozenset(found)
            if n.id in T.INTERNAL_NAMES:
                self.reason("high", "reaches into interpreter internals: %s" % n.id, n)
        return self.modules_use(vals, lookup, n)

    def enclosing_class(self, sc):
        while sc is not None and sc.kind != "module":
            if sc.parent is not None and sc.parent.kind == "class" and sc.kind == "function":
                return sc.parent.cls
            sc = sc.parent
        return None

    def modules_use(self, vals, lookup, n):
        if not lookup and ("ref", "sys.modules") in vals:
            self.reason("high", "reaches into interpreter internals: uses sys.modules other "
                        "than to look a module up by a literal name", n)
        return vals

    def attr(self, vals, name):
        out = set()
        for v in vals:
            k = v[0]
            if k == "ref":
                d = canon(v[1] + "." + name)
                if v[1] == self.name and self.name:
                    out |= self.env.get((id(self.root), name), _EMPTY) | self.env.get(
                        ("m", name), _EMPTY) or _PLAIN
                else:
                    out.add(("t", T.DATA[d]) if T.DATA.get(d) else ("ref", d))
            elif k in ("class", "inst"):
                out |= self.cattr(v[1], name, k == "inst")
            elif k == "super":
                for b in self.env.get(("b", v[1]), _EMPTY) or [("ref", "builtins.object")]:
                    out |= self.attr(frozenset([b]), name)
            elif k == "t" and v[1] != "cls":
                out.add(("meth", v[1], name))
            elif k in ("unres", "dead"):
                out.add(v)
            else:
                out.add(("pmeth", name) if k != "def" else _P)
        return frozenset(out)

    def cattr(self, cid, name, inst, depth=0):
        """The values of attribute ``name`` of the proved class ``cid`` (or an instance)."""
        vals = self.env.get((id(self.scopes[cid]), name), _EMPTY) | self.env.get(
            ("a", cid, name), _EMPTY)
        if vals:
            return frozenset(_P if inst and v == ("t", "prop") else v for v in vals)
        out = set()
        for b in self.env.get(("b", cid), _EMPTY) if depth < 20 else ():
            out |= self.cattr(b[1], name, inst, depth + 1) if b[0] == "class" else \
                {("ref", b[1] + "." + name)} if b[0] == "ref" else {_P}
        return frozenset(out) or (_PLAIN if self.emit else _EMPTY)

    def item(self, n, sc):
        base, key = self.ev(n.value, sc, True), _index(n)
        self.ev(key, sc)
        out = set()
        for v in base:
            if v == ("ref", "sys.modules"):
                name = self.sval(key, sc)
                if not isinstance(name, str):
                    self.reason("high", "reaches into interpreter internals: looks sys.modules"
                                " up by a computed name", n)
                    out.add(_P)
                else:
                    self.modules.add(name)
                    out.add(("ref", name))
            elif v[0] == "ref" and v[1] in T.STR_CONTAINERS:
                out.add(("t", "str"))
            elif v[0] == "ref" and self.is_stdlib(v[1]) and not _generic(v[1]):
                out.add(("unres", "an item of " + v[1]))
            elif v[0] == "ref" and _generic(v[1]) or v[0] == "class":
                out.add(v)  # list[str], typing.Optional[str], os.PathLike[str]: an alias
            elif v[0] == "t" and v[1] in ("str", "bytes"):
                out.add(v if type(key).__name__ == "Slice" else ("t", _ELEMS[v[1]]))
            elif v[0] in ("dead", "unres"):
                out.add(v)
            else:
                out.add(_P)
        return frozenset(out)

    def elems(self, vals):
        return frozenset(("t", _ELEMS[v[1]]) if v[0] == "t" and v[1] in _ELEMS else ("t", "str")
                         if v[0] == "ref" and v[1] in T.STR_CONTAINERS else
                         ("unres", "an element of " + v[1]) if v[0] == "ref" and
                         self.is_stdlib(v[1]) else v if v[0] in ("unres", "dead") else _P
                         for v in vals)

    def made_of(self, vals):
        """What a value computed from ``vals`` may hold of the interpreter's objects (a
        copy or a union of one: ``dict(sys.modules)``, ``sys.modules | {}``)."""
        return frozenset(("unres", "a value made of " + v[1]) for v in vals if v[0] == "ref" and
                         self.is_stdlib(v[1]) and v[1] not in T.STR_CONTAINERS and
                         self.sensitive(v[1]))
