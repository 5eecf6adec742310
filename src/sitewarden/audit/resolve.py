"""Name resolution and decoding for :mod:`.capabilities`: what a name in startup code
stands for (aliases, ``getattr(__import__('x'), 'y')``, ``sys.modules['x']``), and the
str or bytes a node evaluates to when built from literals and decoders (base64, hex,
zlib, rot13), decoded here without running anything, within a byte budget
(:data:`MAX_DECODED`).  A zlib literal needs ``zlib``: the codec registry loads it
(``zlib_codec``), only then.  Module level: ``sys``.
"""

import sys

from .line_checks import _walk

MAX_DECODED = 1 << 20  # bytes decoded from literals, in all, per text analysed


def _words(text):
    return tuple(text.split())


_IMPORTERS = ("__import__", "importlib.import_module", "importlib.__import__")
_DECODERS = _words("""base64.*decode* binascii.a2b_* binascii.unhexlify codecs.decode
zlib.decompress bz2.decompress lzma.decompress gzip.decompress *.fromhex codecs.escape_decode""")
_TEXT = ("utf8", "ascii", "latin1", "utf", "u8", "8859", "iso88591")
_B64 = {c: i for i, c in enumerate(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_B64.update({ord("-"): 62, ord("_"): 63})


def _fits(name, patterns):
    """Does the dotted ``name`` fit one of ``patterns`` (``*`` anywhere: any text)?"""
    for p in patterns:
        if "*" not in p:
            if name == p:
                return p
            continue
        head, _, tail = p.partition("*")
        rest = name[len(head):] if name.startswith(head) else None
        if rest is None:
            continue
        tail = tail.replace("*", "")
        if (not tail and rest) or (tail and tail in rest):
            return p
    return None


def _canon(name):
    """``posix.system`` is ``os.system``; ``builtins.exec`` is ``exec``."""
    head, dot, rest = (name or "").partition(".")
    if dot and head in ("posix", "nt", "builtins", "__builtins__", "__builtin__"):
        return "os." + rest if head in ("posix", "nt") else rest
    return name


def _index(node):
    """The key node of the subscript ``node`` (before 3.9: inside an ``Index``)."""
    key = node.slice
    return key.value if type(key).__name__ == "Index" else key


def _const(node):
    kind = type(node).__name__
    value = getattr(node, "value" if kind == "Constant" else "s", None)
    return value if kind in ("Constant", "Str", "Bytes") and isinstance(value, (str, bytes)) \
        else None  # Str, Bytes: before 3.8


class _Resolver:
    """One text's names and values: its syntax tree's aliases, constants, decoded values."""

    def __init__(self, tree, budget):
        self.budget = budget
        self.alias, self.values, self.tainted = {}, {}, {}
        self.nodes = list(_walk(tree))
        self.bound, self.cache = False, {}
        self._bind()
        self.bound = True

    # ---------------------------------------------------------------- names

    def qual(self, node, hops=0):
        """The dotted name ``node`` stands for (``subprocess.Popen``), or None."""
        if hops > 50:
            return None
        kind = type(node).__name__
        if kind == "Name":
            return _canon(self.alias.get(node.id, node.id))
        if kind == "Attribute":
            base = self.qual(node.value, hops + 1)
            return _canon(base + "." + node.attr) if base else None
        if kind == "Subscript":  # sys.modules['os'], __builtins__['exec']
            key = _const(_index(node))
            base = self.qual(node.value, hops + 1)
            if isinstance(key, str) and base == "sys.modules":
                return _canon(key)
            if isinstance(key, str) and base in ("builtins", "__builtins__"):
                return key
            return None
        if kind != "Call":
            return None
        func = self.qual(node.func, hops + 1)
        args = node.args
        if func in _IMPORTERS and args and isinstance(self.value(args[0]), str):
            name = self.value(args[0])
            if func == "__import__" and len(args) < 4 and not node.keywords:
                name = name.partition(".")[0]
            return _canon(name)
        if func == "getattr" and len(args) >= 2 and isinstance(self.value(args[1]), str):
            base = self.qual(args[0], hops + 1)
            return _canon(base + "." + self.value(args[1])) if base else None
        if func == "sys.modules.get" and args and isinstance(self.value(args[0]), str):
            return _canon(self.value(args[0]))
        return None

    def _bind(self):
        """Aliases (imports, ``x = s.Popen``), constant values, decoded names: twice, so
        that an order of assignments does not hide one."""
        for _ in range(3):
            for n in self.nodes:
                kind = type(n).__name__
                if kind == "Import":
                    for a in n.names:
                        if a.asname:
                            self.alias[a.asname] = a.name
                elif kind == "ImportFrom" and not n.level and n.module:
                    for a in n.names:
                        if a.name != "*":
                            self.alias[a.asname or a.name] = n.module + "." + a.name
                elif kind in ("Assign", "NamedExpr", "AnnAssign") and n.value is not None:
                    targets = n.targets if kind == "Assign" else [n.target]
                    names = [t.id for t in targets if type(t).__name__ == "Name"]
                    if not names:
                        continue
                    q = self.qual(n.value)
                    v = self.value(n.value)
                    d = self.decoders(n.value)
                    for name in names:
                        if q:
                            self.alias[name] = q
                        if v is not None:
                            self.values[name] = v
                        if d:
                            self.tainted[name] = d

    # ---------------------------------------------------------------- values

    def value(self, node, hops=0):
        """The str or bytes ``node`` evaluates to when it is built from literals and
        decoders (never running anything), else None.  Once the names are bound, each
        node is evaluated once (a decoder's result counts once against the budget)."""
        if hops > 50 or node is None:
            return None
        if self.bound:
            key = id(node)
            if key not in self.cache:
                self.cache[key] = self._value(node, hops)
            return self.cache[key]
        return self._value(node, hops)

    def _value(self, node, hops):
        kind = type(node).__name__
        c = _const(node)
        if c is not None:
            return c
        if kind == "Name":
            return self.values.get(node.id)
        if kind == "BinOp" and type(node.op).__name__ == "Add":
            left, right = self.value(node.left, hops + 1), self.value(node.right, hops + 1)
            return left + right if type(left) is type(right) and left is not None else None
        if kind == "Subscript" and type(node.slice).__name__ == "Slice":
            v, step = self.value(node.value, hops + 1), node.slice.step
            if v is not None and type(step).__name__ == "UnaryOp" and node.slice.lower is None \
                    and getattr(step.operand, "value", None) == 1 and node.slice.upper is None:
                return v[::-1]  # "...."[::-1]
            return None
        if kind != "Call":
            return None
        func = node.func
        if type(func).__name__ == "Attribute" and func.attr in ("decode", "encode") \
                and not node.keywords:
            v = self.value(func.value, hops + 1)
            codec = self.value(node.args[0], hops + 1) if node.args else "utf-8"
            if v is None or not isinstance(codec, str):
                return None
            plain = codec.lower().replace("-", "").replace("_", "")
            try:
                if func.attr == "encode":
                    return v.encode("utf-8") if isinstance(v, str) and plain in _TEXT else None
                if plain in _TEXT:
                    return v.decode("utf-8") if isinstance(v, bytes) else None
            except UnicodeError:
                return None
            return _decode("." + "decode", v, codec, self)
        q = self.qual(func)
        if not q or not _fits(q, _DECODERS) or not node.args:
            return None
        v = self.value(node.args[0], hops + 1)
        extra = self.value(node.args[1], hops + 1) if len(node.args) > 1 else None
        for k in node.keywords:
            if k.arg in ("encoding", "altchars"):
                extra = self.value(k.value, hops + 1)
        return _decode(q, v, extra, self) if v is not None else None

    def decoders(self, node):
        """The decoders whose result ``node`` holds (``base64.b64decode``), or ()."""
        out = []
        for n in _walk(node):
            kind = type(n).__name__
            if kind == "Name" and n.id in self.tainted:
                out.extend(self.tainted[n.id])
            elif kind == "Call":
                q = self.qual(n.func)
                if q and _fits(q, _DECODERS):
                    out.append(q)
                elif type(n.func).__name__ == "Attribute" and n.func.attr == "decode" \
                        and n.args and isinstance(self.value(n.args[0]), str) and \
                        self.value(n.args[0]).lower().replace("-", "").replace("_", "") in (
                            "base64", "hex", "zlib", "rot13", "bz2", "hexcodec"):
                    out.append("." + "decode(%r)" % self.value(n.args[0]))
        return tuple(sorted(set(out)))


def _b64(data, extra):
    if isinstance(data, str):
        data = data.encode("latin-1", "replace")
    if isinstance(extra, str):
        extra = extra.encode("latin-1", "replace")
    table = _B64
    if isinstance(extra, bytes) and len(extra) == 2:
        table = dict(_B64)
        table[extra[0]], table[extra[1]] = 62, 63
    out, acc, bits = bytearray(), 0, 0
    for c in data:
        if c == 61:  # '='
            break
        v = table.get(c)
        if v is None:
            continue
        acc, bits = (acc << 6 | v) & 0xffffff, bits + 6
        if bits >= 8:
            bits -= 8
            out.append(acc >> bits & 0xff)
    return bytes(out)


def _hex(data):
    if isinstance(data, bytes):
        data = data.decode("latin-1")
    try:
        return bytes.fromhex("".join(data.split()))
    except ValueError:
        return None


def _zlib(data, budget):
    z = sys.modules.get("zlib")
    if z is None:  # loaded by the codec registry (encodings.zlib_codec), not here
        try:
            sys.modules["codecs"].lookup("zlib_codec")
        except LookupError:
            return None
        z = sys.modules.get("zlib")
    if z is None or not isinstance(data, bytes):
        return None
    for wbits in (47, -15):
        try:
            return z.decompressobj(wbits).decompress(data, max(budget, 1))
        except z.error:
            continue
    return None


def _decode(q, data, extra, reader):
    """What the decoder ``q`` returns for the literal ``data``, or None (unknown decoder,
    invalid data, or the size budget spent)."""
    if reader.budget[0] <= 0 or len(data) > MAX_DECODED:
        return None
    name = q.rpartition(".")[2].lower()
    codec = extra.lower().replace("-", "").replace("_", "") if isinstance(extra, str) else ""
    if q == "codecs.decode" or q.startswith("."):
        name = {"base64": "b64decode", "base64codec": "b64decode", "hex": "unhexlify",
                "hexcodec": "unhexlify", "zlib": "decompress", "zlibcodec": "decompress",
                "rot13": "rot13"}.get(codec, "")
        if not name and codec in ("", "utf8", "ascii") and isinstance(data, bytes):
            try:
                return data.decode("utf-8")
            except UnicodeError:
                return None
    if name in ("b64decode", "standard_b64decode", "urlsafe_b64decode", "decodebytes",
                "decodestring", "a2b_base64"):
        out = _b64(data, b"-_" if name.startswith("urlsafe") else extra)
    elif name in ("b16decode", "unhexlify", "a2b_hex", "fromhex"):
        out = _hex(data)
    elif name == "decompress" and q.startswith(("zlib", "codecs", ".")):
        out = _zlib(data, reader.budget[0])
    elif name == "rot13" and isinstance(data, str):
        out = data.translate({c: (c - base + 13) % 26 + base for base in (65, 97)
                              for c in range(base, base + 26)})
    else:
        out = None
    if out is not None:
        reader.budget[0] -= len(out)
    return out
