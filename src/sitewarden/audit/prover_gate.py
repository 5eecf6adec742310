"""The gate of :mod:`.prover`: what a call, an import, a store or a value passed on does,
judged against :mod:`.prover_tables`; and the strings a node evaluates to statically
(literals, concatenations, ``''.join``, ``chr``, decoders, ``os.path`` of ``__file__``),
never running anything.  A mixin of the prover's reader, which holds the bindings.
Module level: ``sys`` and sitewarden's own modules.
"""

import sys

from . import prover_tables as T
from .line_checks import _ONLY_AST
from .resolve import _DECODERS, _const, _decode, _fits, _index

MAX_DEPTH = 4  # exec'd literals read as code, at most this many levels down
_EMPTY = frozenset()
_P = ("plain",)
_PLAIN = frozenset([_P])
_NONE = frozenset([("t", "none")])
_DEAD = frozenset([("dead",)])  # what a refused call returns: one reason says it
_CANON = (("posixpath", "os.path"), ("ntpath", "os.path"), ("posix", "os"), ("nt", "os"),
          ("_io.open", "builtins.open"), ("io.open", "builtins.open"),
          ("os.environb", "os.environ"), ("__builtin__", "builtins"))
IMPORT_STATE = ("sys.meta_path", "sys.path_hooks", "sys.path_importer_cache", "sys.path")
_NOWHERE = "changes where imports come from, to a place the audit cannot name: "
_FOLLOW = ": the audit cannot follow what is done with it"
_PATHS = ("os.path.join", "os.path.dirname", "os.path.basename", "os.path.normpath",
          "os.path.abspath")


def canon(name):
    """``posixpath.join`` is ``os.path.join``, ``io.open`` is ``builtins.open``."""
    for old, new in _CANON:
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return name


def judge(name):
    """None when calling the standard library's ``name`` is harmless, else ``(severity,
    text)``: for a caller discharging a ``calls`` entry that ``defines`` names an import."""
    sev, text, _ = T.judge(canon(name))
    return (sev, text) if sev else None


def _new_attribute(dotted):
    """Is ``dotted`` (``sys.swr_flag``) a name ``sys`` has on no CPython release
    (:data:`.prover_tables.SYS_NAMES`): setting it adds a name, it replaces nothing."""
    module, _, name = dotted.rpartition(".")
    return module == "sys" and not name.startswith("_") and name not in T.SYS_NAMES


class Gate:
    """Calls, imports, stores and values passed on, for :class:`.prover._Prover`."""

    # ---------------------------------------------------------------- calls

    def call(self, n, sc):
        f = n.func
        if type(f).__name__ == "Name" and f.id == "__import__" and self.where(sc, f.id) is None:
            for a in n.args[:1] + n.args[3:] + [k.value for k in n.keywords]:
                self.ev(a, sc)  # globals(), locals(): __import__ reads only __name__ there
            return self.dyn_import("builtins.__import__", n, sc)
        if type(f).__name__ == "Attribute" and f.attr == "__class__":
            self.reason("high", "reaches into interpreter internals: calls %s" % self.seg(f), n)
        fv = self.ev(f, sc, type(f).__name__ == "Attribute" and f.attr == "get")
        which = self.runs_code(n, sc, fv)
        if which:
            got = self.run_code(which, n, sc)
            fv = frozenset(v for v in fv if v[1:] not in (("builtins.exec",), ("builtins.eval",)))
            if not fv:
                return got
        args, kws = [self.ev(a, sc) for a in n.args], {}
        for kw in n.keywords:
            kws[kw.arg or "**%d" % len(kws)] = self.ev(kw.value, sc)
            if kw.arg in T.INTERNAL_ATTRS:
                self.reason("high", "reaches into interpreter internals: %s=" % kw.arg, kw.value)
        return self.invoke(fv, args, kws, n, sc, f)

    def invoke(self, fv, args, kws, n, sc, f=None):
        """What calling any of ``fv`` with ``args``/``kws`` returns; judged on the way."""
        if not fv and not self.emit:
            return _EMPTY
        out, what = set(), self.seg(f) if f is not None else "it"
        for v in fv or [("unres", what)]:
            k = v[0]
            if k == "ref":
                out |= self.call_ref(v[1], args, kws, n, sc)
            elif k in ("def", "class", "inst"):
                self.pass_on(args, kws, "passes %%s to %s" % what, n)
                if k == "inst":
                    out |= self.invoke(self.cattr(v[1], "__call__", True), args, kws, n, sc, f)
                elif k == "class":
                    out.add(("inst", v[1]))
                else:  # what its returns return (values no proof loses sight of)
                    out |= _PLAIN if v[1] in self.generators else self.env.get(("r", v[1]), (
                        _PLAIN if self.emit else _EMPTY))
            elif k == "meth":
                out |= self.call_meth(v[1], v[2], args, kws, n)
            elif k == "t" and v[1] in ("deco", "cls"):
                out |= args[0] if v[1] == "deco" and args else _PLAIN
            elif k == "pmeth" and v[1] in T.PLAIN_METHODS:
                self.pass_on(args, kws, "passes %%s to %s" % what, n)
                out.add(_P)
            elif k in ("pmeth", "plain", "unres", "super", "dead"):
                method = getattr(f, "attr", None) or "?"
                sev, hint, _ = T.judge("." + method)  # .exec_module(), .load_module()...
                if sev == "high" and not hint.startswith("calls "):
                    self.reason("high", hint, n or f)
                elif k == "dead":
                    out.add(v)
                else:
                    self.reason("high", "calls %s: the audit cannot resolve what it calls" % (
                        what if k != "unres" else v[1] if v[1].startswith(what) else
                        "%s (%s)" % (what, v[1])), n or f)
        return frozenset(out) or _PLAIN

    def call_ref(self, d, args, kws, n, sc):
        d = canon(d)
        if not self.is_stdlib(d):
            if self.emit:
                self.calls.append((d, self.lineof(n)))
            self.pass_on(args, kws, "passes %%s to %s" % d, n)
            return _PLAIN
        special = _SPECIAL.get(d) or ("path" if d.rpartition(".")[0] in IMPORT_STATE or
                                      d == "site.addsitedir" else None)
        if special and (n is not None or special in ("effect", "type")):
            return getattr(self, "sp_" + special)(d, args, kws, n, sc)
        sev, text, result = T.judge(d)
        self.reason(sev, text, n) if sev else None
        self.check_args(d, args, kws, n)
        if sev == "high":
            return _DEAD
        if result == "same":
            return args[0] if args else frozenset([("t", "deco")])
        made = self.made_of(frozenset().union(*args)) if d in T.INSPECT and args else _EMPTY
        return made or (frozenset([("t", result)]) if result else _PLAIN)

    def check_args(self, d, args, kws, n):
        short = d[9:] if d.startswith("builtins.") else d
        for i, vals in list(enumerate(args)) + list(kws.items()):
            if i in T.CALLED_ARGS.get(d, ()):
                self.callable_ok(vals, short, n)
            elif d not in T.INSPECT or not isinstance(i, int):
                self.escape(vals, "passes %%s to %s" % short, n)

    def call_meth(self, t, name, args, kws, n):
        if t in ("str", "bytes"):
            return frozenset([("t", T.STR_RESULTS.get(name, t) if t == "str" else
                               "str" if name == "decode" else "list" if "split" in name else t)])
        if t in T.DATA_TYPES:
            self.pass_on([a for i, a in enumerate(args)], {k: v for k, v in kws.items()
                                                           if k != "key"}, "passes %%s to .%s()"
                         % name, n)
            self.callable_ok(kws.get("key", _NONE), "." + name + "()", n)
            return _PLAIN
        if name not in T.METHODS.get(t, ()):
            self.reason("high", "calls .%s() of a %s value, not known to be harmless"
                        % (name, t), n)
            return _PLAIN
        self.pass_on(args, kws, "passes %%s to .%s()" % name, n)
        if t == "prop":
            self.callable_ok(args[0] if args else _NONE, "a property", n)
            return frozenset([("t", "prop")])
        if t == "pattern" and name in ("match", "search", "fullmatch"):
            return frozenset([("t", "match"), ("t", "none")])
        return frozenset([("t", t)]) if name in ("__enter__", "__iter__") else _PLAIN

    def pass_on(self, args, kws, what, n):
        for vals in list(args) + list(kws.values()):
            self.escape(vals, what, n)

    # ---------------------------------------------------------------- values passed on

    def sensitive(self, d):
        """Must a value never carry the interpreter's ``d`` off (a module, a callable not
        harmless whatever it is given, the import system's or the environment's state)?"""
        last = d.rpartition(".")[2]
        if d in T.DATA or "." in d and last.isupper() and not d.startswith("builtins."):
            return False  # a constant (signal.SIGTERM, stat.S_IRUSR, errno.ENOENT)
        return (T.judge(d)[0] is not None or d in T.CALLED_ARGS or d in _SPECIAL or
                "." not in d or d in self.modules or
                d.rpartition(".")[0] in IMPORT_STATE + ("os.environ",))

    def escape(self, vals, what, n):
        """``vals`` go where the proof cannot follow them (``what``: how): never a module,
        nor a callable or an object of the interpreter that is not harmless."""
        if not self.emit:
            return
        for v in vals:
            if v[0] == "unres":
                self.reason("high", what % v[1] + ": the audit cannot resolve it", n)
            elif v[0] != "ref":
                continue  # a value of the proved code, of a known type, or refused already
            elif not self.is_stdlib(v[1]):
                if v[1] in self.modules:
                    self.reason("high", what % ("the module " + v[1]) + _FOLLOW, n)
                else:
                    self.calls.append((v[1], self.lineof(n)))
            elif self.sensitive(v[1]):
                sev, text, _ = T.judge(v[1])
                short = v[1][9:] if v[1].startswith("builtins.") else v[1]
                self.reason("high", "%s (%s)" % (text, what % short) if sev == "high" and
                            not text.startswith("calls ") else what % short + _FOLLOW, n)

    def callable_ok(self, vals, what, n, allowed=()):
        """Every value in ``vals`` is a callable a proof covers (``what`` will call it)."""
        for v in vals:
            if v[0] == "ref" and v[1] in allowed or v[0] == "dead":
                continue
            if v[0] in ("def", "class", "inst", "meth", "ref") or v in (
                    ("t", "none"), ("t", "deco"), ("t", "cls")):
                self.escape(frozenset([v]), "passes %%s to %s" % what, n)
            else:
                self.reason("high", "passes a callable the audit cannot resolve to %s" % what, n)

    def base_ok(self, vals, n):
        for v in vals:
            if v[0] == "ref" and not self.is_stdlib(v[1]):
                self.calls.append((v[1], self.lineof(n))) if self.emit else None
            elif not (v[0] == "class" or v == ("t", "cls") or v[0] == "ref" and (
                    v[1] in T.BASES or v[1].startswith("builtins.") and
                    T.is_exception(v[1][9:]))):
                self.reason("high", "derives a class from %s, not known to be harmless"
                            % self.seg(n), n)

    # ---------------------------------------------------------------- code run from strings

    def runs_code(self, n, sc, fv=None):
        fv = self.ev(n.func, sc) if fv is None else fv
        for which in ("exec", "eval"):
            if ("ref", "builtins." + which) in fv and n.args:
                return which
        return None

    def source(self, n, sc):
        a = n.args[0]
        if type(a).__name__ == "Call" and a.args and ("ref", "builtins.compile") in self.ev(
                a.func, sc):
            return a.args[0]  # exec(compile('...', f, 'exec'))
        return a

    def inline(self, n, sc, depth):
        """Read the literal that the ``exec``/``eval`` call ``n`` runs as code, in place
        (binding pass); False when there is none (or no new one)."""
        which = self.runs_code(n, sc)
        if not which or id(n) in self.inlined:
            return False
        src = self.sval(self.source(n, sc), sc)
        if isinstance(src, bytes):
            try:
                src = src.decode("utf-8")
            except UnicodeError:
                src = None
        if src is None:
            return False
        if depth >= MAX_DEPTH:
            self.inlined[id(n)] = "is nested deeper than %d levels" % MAX_DEPTH
            return False
        try:
            tree = compile(src, "<%s>" % which, which, _ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as e:
            self.inlined[id(n)] = "does not compile (%s)" % type(e).__name__
            return False
        own = len(n.args) > 1 or any(k.arg == "globals" for k in n.keywords)
        target = self.new_scope("module", None) if own and which == "exec" else sc if (
            sc.kind == "module" or which == "eval") else self.new_scope("function", sc)
        self.keep.append(tree)
        self.inlined[id(n)] = (tree, target, src.split("\n"))
        saved, self.depth, self.collecting = self.depth, depth + 1, True
        try:
            self.body(tree.body, target) if which == "exec" else self.e(tree.body, target)
        finally:
            self.depth, self.collecting = saved, False
        return True

    def run_code(self, which, n, sc):
        src = self.source(n, sc)
        for a in n.args[1:] + [k.value for k in n.keywords] + (
                n.args[0].args[1:] if src is not n.args[0] else []):
            self.ev(a, sc)
        got = self.inlined.get(id(n))
        if not isinstance(got, tuple):
            self.ev(src, sc)
            self.reason("high", "runs a string as code: %s(%s)" % (
                which, "<computed>" if got is None else "a literal that " + got), n)
            return _DEAD
        tree, target, lines = got
        if not self.emit and which == "exec":
            return _NONE
        saved = self.lines, self.outer, self.prefix, self.line
        self.lines, self.outer = lines, self.outer or self.lineof(n)
        self.prefix = saved[2] or "in the code %s(...) runs: " % which
        try:
            if which == "exec":
                self.body(tree.body, target)
                return _NONE
            return self.ev(tree.body, target)
        finally:
            self.lines, self.outer, self.prefix, self.line = saved

    # ---------------------------------------------------------------- special callables

    def sp_getattr(self, d, args, kws, n, sc):
        name, verb = self.sval(n.args[1], sc) if len(n.args) > 1 else None, d[9:]
        if verb == "hasattr" and name not in T.INTERNAL_ATTRS:
            return frozenset([("t", "bool")])
        if name is None or name in T.INTERNAL_ATTRS:
            self.reason("high", "calls %s(%s, <computed name>): the audit cannot resolve "
                        "what it calls" % (verb, self.seg(n.args[0]) if n.args else "")
                        if name is None else "reaches into interpreter internals: " + name, n)
            return _PLAIN
        recv = args[0] if args else _EMPTY
        if verb == "getattr":
            return self.attr(recv, name) | (args[2] if len(args) > 2 else _EMPTY)
        if self.emit:
            self.store(recv, name, args[2] if len(args) > 2 else _NONE, n,
                       "sets" if verb == "setattr" else "deletes")
        return _NONE

    def sp_open(self, d, args, kws, n, sc):
        node = n.args[1] if len(n.args) > 1 else next(
            (k.value for k in n.keywords if k.arg == "mode"), None)
        mode = "r" if node is None else self.sval(node, sc)
        self.callable_ok(kws.get("opener", _EMPTY), "open", n)
        if isinstance(mode, str) and not set(mode) & set("wax+"):
            return frozenset([("t", "file")])
        where = self.sval(n.args[0], sc) if n.args else None
        self.effect("writes a file" if not isinstance(where, str) else "writes the file "
                    + where, n)
        if mode is None:
            self.reason("medium", "opens a file in a mode the audit cannot evaluate", n)
        return frozenset([("t", "wfile")])

    def sp_type(self, d, args, kws, n, sc):
        if len(args) != 1:
            self.pass_on(args, kws, "passes %s to type()", n)
            return _PLAIN
        return frozenset(("class", v[1]) if v[0] == "inst" else ("ref", "builtins." + v[1])
                         if v[0] == "t" and v[1] in T.DATA_TYPES - {"none"} else _P
                         for v in args[0]) or _PLAIN

    def sp_iter(self, d, args, kws, n, sc):
        if len(args) > 1:
            self.callable_ok(args[0], "iter", n)  # iter(f, sentinel) calls f
        return _PLAIN

    def sp_super(self, d, args, kws, n, sc):
        cid = self.enclosing_class(sc)
        if args:
            cid = next((v[1] for v in args[0] if v[0] == "class"), None)
        return frozenset([("super", cid)]) if cid else _PLAIN

    def sp_modules(self, d, args, kws, n, sc):
        name = self.sval(n.args[0], sc) if n.args else None
        if not isinstance(name, str):
            self.reason("high", "reaches into interpreter internals: looks sys.modules up by"
                        " a computed name", n)
            return _PLAIN
        self.modules.add(name)
        return frozenset([("ref", name), ("t", "none")])

    def sp_effect(self, d, args, kws, n, sc):
        key = self.sval(n.args[0], sc) if n is not None and n.args else None
        text = T.EFFECTS[d]
        if isinstance(key, str) and d != "os.environ.update":
            text = text.replace("an environment variable", "environment variable " + key)
        self.effect(text, n)
        self.check_args(d, args, kws, n)
        return args[0] if d == "atexit.register" and args else _NONE

    def sp_import(self, d, args, kws, n, sc):
        return self.dyn_import(d, n, sc)

    def sp_path(self, d, args, kws, n, sc):
        self.path_change(d, n.args, n, sc)
        return _NONE

    def path_change(self, d, argn, n, sc):
        target, _, op = d.rpartition(".")
        value = None
        if target == "sys.path" and op in ("index", "count", "copy", "__contains__"):
            return
        if target == "sys.path" and op == "insert" and len(argn) == 2:
            i, p = self.ival(argn[0], sc), self.sval(argn[1], sc)
            value = (i, p) if type(i) is int and isinstance(p, str) else None
        elif (target == "sys.path" and op in ("append", "remove") or op == "addsitedir") and argn:
            p = self.sval(argn[0], sc)
            value = (p,) if isinstance(p, str) else None
        elif target == "sys.path" and op == "extend" and len(argn) == 1:
            value = self.strs(argn[0], sc)
        elif target == "sys.path_importer_cache" and op == "clear" and not argn:
            value = ()
        if value is None:
            self.reason("high", _NOWHERE + self.seg(n), n)
        elif self.emit:
            self.paths.append((target, op, tuple(value), self.lineof(n)))

    # ---------------------------------------------------------------- stores

    def store(self, recv, name, vals, n, verb="sets"):
        """``recv.name = vals`` (or ``del``): judged for every value of ``recv``."""
        for r in recv:
            d = r[1] + "." + name if r[0] == "ref" else None
            if r[0] == "unres":
                self.reason("high", "%s an attribute of %s" % (verb, r[1]), n)
            elif r[0] == "dead":
                continue
            elif d is None:
                self.escape(vals, "stores %s in an attribute", n)
            elif r[1] == self.name and self.name:
                self.escape(vals, "stores %s in the module", n)
            elif canon(d) in T.STORES:
                note = T.STORE_NOTES.get(d)
                self.effect("%s %s" % (verb, d) + (": " + note if note else ""), n)
                if d.endswith("hook"):
                    self.callable_ok(vals, d, n)
                else:
                    self.escape(vals, "stores %%s as %s" % d, n)
            elif d in IMPORT_STATE:
                self.reason("high", _NOWHERE + self.seg(n), n)
            elif not self.is_stdlib(d):
                self.effect("%s %s of another module" % (verb, d), n)
                self.escape(vals, "stores %s in another module", n)
            elif verb == "sets" and _new_attribute(d):
                self.effect("adds %s to the interpreter" % d, n)
                self.escape(vals, "stores %s in the interpreter", n)
            else:
                self.reason("high", "%s %s of the interpreter" % (
                    "replaces" if verb == "sets" else verb, d), n)

    def setitem(self, recv, t, vals, sc, verb="sets"):
        for r in recv:
            if r[0] == "ref" and r[1] == "os.environ":
                key = self.sval(_index(t), sc)
                self.effect("%s environment variable %s" % (
                    verb, key if isinstance(key, str) else "<computed>"), t)
            elif r[0] == "ref" and r[1] == "sys.argv":
                self.effect("changes sys.argv", t)
            elif r[0] == "ref" and r[1] in IMPORT_STATE:
                self.reason("high", _NOWHERE + self.seg(t), t)
            elif r[0] == "unres" or r[0] == "ref" and self.is_stdlib(r[1]):
                self.reason("high", "changes an item of %s" % r[1], t)
            elif r[0] == "ref":
                self.effect("changes an item of %s" % r[1], t)
        self.escape(vals, "puts %s in a container", t)

    # ---------------------------------------------------------------- static strings

    def sval(self, n, sc, hops=0):
        """The str (or bytes) ``n`` evaluates to, statically, else None."""
        saved, self.emit = self.emit, False
        try:
            return self._sval(n, sc, hops)
        finally:
            self.emit = saved

    def _sval(self, n, sc, hops):
        self.work -= 1
        if n is None or hops > 40 or self.work < 0 or sc is None:
            return None
        k, c = type(n).__name__, _const(n)
        if c is not None:
            return c
        if k == "Name":
            s = self.where(sc, n.id)
            if s is None:
                if self.pth and n.id == "sitedir":
                    return sys.modules["os"].path.dirname(self.path)
                return {"__file__": self.path, "__name__": self.name}.get(n.id) or None
            got = {self._sval(en[1], en[2], hops + 1) if en[0] == "v" else None
                   for en in s.names[n.id]}
            return got.pop() if len(got) == 1 else None
        if k == "BinOp" and type(n.op).__name__ == "Add":
            a, b = self._sval(n.left, sc, hops + 1), self._sval(n.right, sc, hops + 1)
            return a + b if a is not None and type(a) is type(b) else None
        if k == "JoinedStr":
            parts = [_const(v) if _const(v) is not None else self._sval(
                v.value, sc, hops + 1) if type(v).__name__ == "FormattedValue" and
                v.conversion == -1 and v.format_spec is None else None for v in n.values]
            return "".join(parts) if all(isinstance(p, str) for p in parts) else None
        if k == "Subscript" and type(n.value).__name__ == "Call" and self.ival(
                _index(n), sc) == 0:  # site.makepath(...)[0]: the joined, absolute path
            f = {v[1] for v in self.ev(n.value.func, sc) if v[0] == "ref"}
            argv = [self._sval(a, sc, hops + 1) for a in n.value.args]
            if f == {"site.makepath"} and argv and all(isinstance(a, str) for a in argv):
                return sys.modules["os"].path.abspath(sys.modules["os"].path.join(*argv))
            return None
        if k == "Subscript" and type(n.slice).__name__ == "Slice":
            v = self._sval(n.value, sc, hops + 1)
            bounds = [self.ival(b, sc) if b is not None else None
                      for b in (n.slice.lower, n.slice.upper, n.slice.step)]
            return v[slice(*bounds)] if v is not None and False not in bounds else None
        return self._scall(n, sc, hops) if k == "Call" else None

    def _scall(self, n, sc, hops):
        f, argv = n.func, [self._sval(a, sc, hops + 1) for a in n.args]
        recv = self._sval(f.value, sc, hops + 1) if type(f).__name__ == "Attribute" and \
            f.attr in ("join", "decode", "encode", "lower", "upper", "strip", "replace") else None
        if recv is not None:
            if n.keywords:
                return None
            if f.attr == "join" and n.args:
                items = self.strs(n.args[0], sc)
                return recv.join(items) if items is not None and all(
                    type(i) is type(recv) for i in items) else None
            if f.attr in ("decode", "encode") and len(argv) < 2:
                codec = argv[0] if argv else "utf-8"
                if not isinstance(codec, str):
                    return None
                if codec.lower().replace("-", "").replace("_", "") in ("utf8", "ascii", "latin1"):
                    try:
                        return getattr(recv, f.attr)(codec)
                    except (UnicodeError, LookupError, AttributeError):
                        return None
                return _decode(".decode", recv, codec, self) if isinstance(
                    recv, bytes) and f.attr == "decode" else None
            if isinstance(recv, str) and all(isinstance(a, str) for a in argv) and (
                    len(argv) == 2 if f.attr == "replace" else not argv):
                return getattr(recv, f.attr)(*argv)
            return None
        refs = {v[1] for v in self.ev(f, sc) if v[0] == "ref"}
        q = canon(refs.pop()) if len(refs) == 1 else ""
        if q == "builtins.chr" and len(n.args) == 1:
            i = self.ival(n.args[0], sc)
            return chr(i) if type(i) is int and 0 <= i < 0x110000 else None
        if q in ("builtins.str", "builtins.compile") and argv and isinstance(argv[0], str):
            return argv[0]
        if q in _PATHS and argv and all(isinstance(a, str) for a in argv) and \
                not n.keywords and (q != "os.path.abspath" or argv[0].startswith("/")):
            return getattr(sys.modules["os"].path, q[8:])(*argv)
        if q and _fits(q, _DECODERS) and argv and argv[0] is not None:
            return _decode(q, argv[0], argv[1] if len(argv) > 1 else None, self)
        return None

    def ival(self, n, sc):
        """The int ``n`` is (a literal), else False."""
        k = type(n).__name__
        if k == "UnaryOp" and type(n.op).__name__ == "USub":
            v = self.ival(n.operand, sc)
            return -v if type(v) is int else False
        v = getattr(n, "value", getattr(n, "n", None)) if k in ("Constant", "Num") else False
        return v if type(v) is int else False

    def strs(self, n, sc):
        """The strings of a literal list or tuple ``n`` (None: not evaluable)."""
        k = type(n).__name__
        if k in ("Constant", "NameConstant") and n.value is None:
            return ()
        s = self.where(sc, n.id) if k == "Name" else None
        if s is not None:
            got = s.names[n.id]
            return self.strs(got[0][1], got[0][2]) if len(got) == 1 and got[0][0] == "v" \
                else None
        if k not in ("List", "Tuple"):
            return None
        items = tuple(self.sval(el, sc) for el in n.elts)
        return items if all(isinstance(i, str) for i in items) else None

    def is_stdlib(self, d):
        root = d.partition(".")[0]
        return root in self.stdlib or root in ("builtins", "__builtin__")

    # ---------------------------------------------------------------- findings

    def lineof(self, n):
        return self.outer or getattr(n, "lineno", None) or self.line

    def seg(self, n):
        """The source text of ``n``, shortened."""
        try:
            rows = [r.encode("utf-8") for r in self.lines[n.lineno - 1:n.end_lineno]]
            rows[-1] = rows[-1][:n.end_col_offset]
            rows[0] = rows[0][n.col_offset:]
            text = " ".join(b" ".join(rows).decode("utf-8", "replace").split())
        except (AttributeError, IndexError, TypeError):
            return "<expression>"
        return text if len(text) <= 60 else text[:57] + "..."

    def reason(self, severity, text, n=None):
        if self.emit:
            self.reasons.append((severity, self.lineof(n), self.prefix + text))

    def effect(self, text, n):
        if self.emit:
            self.reason("medium", text, n)
            self.effects.append((self.lineof(n), self.prefix + text))


_SPECIAL = {"builtins.getattr": "getattr", "builtins.setattr": "getattr",
            "builtins.delattr": "getattr", "builtins.hasattr": "getattr",
            "builtins.open": "open", "codecs.open": "open", "builtins.type": "type",
            "builtins.iter": "iter", "builtins.super": "super", "sys.modules.get": "modules",
            "importlib.import_module": "import", "builtins.__import__": "import"}
_SPECIAL.update((d, "effect") for d in T.EFFECTS)
