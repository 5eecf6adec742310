"""What startup code can do, read from its syntax tree, never run (``check``'s
``capabilities`` of a ``.pth`` import line, a ``.start`` entry point's module, a
``sitecustomize``/``usercustomize``; ``docs/startup-code.md`` lists what names each one):
``starts-processes``, ``network``, ``dynamic-code``, ``decodes-and-executes`` (a decoder's
result reaches ``exec``/``eval``/``compile`` or a process's argument), ``reads-credentials``,
``launches-runtime``, ``changes-import-system``.

Names are followed through aliases (``import subprocess as s``, ``from os import system as
x``, ``getattr(__import__('subprocess'), 'Popen')``, ``y = s.Popen``).  A literal a decoder
decodes (base64, hex, zlib, nested) is decoded here and read as code the same way when it
compiles, up to :data:`MAX_DEPTH` levels and :data:`MAX_DECODED` bytes; so is the literal
``exec`` gets.  The text is only compiled to a syntax tree.  A zlib literal needs ``zlib``:
the codec registry loads it (``zlib_codec``), only then.  Answers are kept per text
(:class:`Memo`).  Module level: ``os`` and ``sys``.
"""

import sys

from .. import _swallowed
from ..probe import private_cache
from . import line_checks
from .line_checks import _ONLY_AST, _walk

#: The capabilities that make startup code ``dangerous-startup-code`` (high), whoever owns it.
DANGEROUS = ("decodes-and-executes", "starts-processes", "network", "reads-credentials")
#: Every capability, the dangerous first: the order the text output shows them in.
NAMES = DANGEROUS + ("launches-runtime", "dynamic-code", "changes-import-system")

MAX_DEPTH = 4  # decoded code read as code, at most this many levels down
MAX_DECODED = 1 << 20  # bytes decoded from literals, in all, per text analysed
MAX_TEXT = 1 << 20  # a module larger than this is not read


def _words(text):
    return tuple(text.split())


_PROCESS = _words("""subprocess.Popen subprocess.run subprocess.call subprocess.check_call
subprocess.check_output subprocess.getoutput subprocess.getstatusoutput os.system os.popen
os.exec* os.spawn* os.posix_spawn* os.fork os.forkpty os.startfile pty.spawn pty.fork
asyncio.create_subprocess_* _posixsubprocess.fork_exec commands.get* popen2.* platform.popen""")
_NETWORK = _words("""socket.* _socket.* ssl.wrap_socket ssl.create_connection urllib.request.*
urllib.urlopen urllib.urlretrieve urllib2.* http.client.* httplib.* requests.* httpx.*
urllib3.* aiohttp.* ftplib.* smtplib.* telnetlib.* poplib.* imaplib.* nntplib.*
xmlrpc.client.* xmlrpclib.* asyncio.open_connection pycurl.* websocket.* websockets.*
paramiko.* dns.resolver.*""")
_NETWORK_MODULES = _words("""socket urllib.request urllib2 http.client httplib requests httpx
urllib3 aiohttp ftplib smtplib telnetlib xmlrpc.client pycurl paramiko websocket websockets""")
_EXEC = ("exec", "eval", "compile", "execfile")
_LOADS = _words("""marshal.loads marshal.load pickle.loads pickle.load cPickle.loads
_pickle.loads types.FunctionType types.CodeType runpy.run_path runpy.run_module""")
_IMPORTERS = ("__import__", "importlib.import_module", "importlib.__import__")
_DECODERS = _words("""base64.*decode* binascii.a2b_* binascii.unhexlify codecs.decode
zlib.decompress bz2.decompress lzma.decompress gzip.decompress *.fromhex codecs.escape_decode""")
_IMPORT_SYSTEM = ("sys.path", "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache")
_MUTATE = _words("""insert append extend remove pop clear __setitem__ update __delitem__
__iadd__""")
_CREDENTIALS = ("/.ssh", "~/.ssh", ".ssh/", "id_rsa", "id_ed25519", "id_ecdsa", "authorized_keys",
                ".aws/", "/.aws", "aws_secret", ".netrc", ".pypirc", ".git-credentials",
                ".docker/config.json", ".kube/config", "/etc/shadow", "/etc/gshadow",
                ".gnupg", "keyring", "keychain", "login data", "cookies.sqlite",
                "wallet.dat", ".npmrc", "gh/hosts.yml", ".config/gcloud", ".azure/",
                "secretstorage", "kwallet")
_CREDENTIAL_WORDS = _words(""".ssh .aws .netrc .pypirc .gnupg .docker .kube .azure gcloud""")
_DUMPS = _words("""dict str repr list tuple sorted json.dumps json.dump pickle.dumps
marshal.dumps urllib.parse.urlencode print base64.b64encode""")
_RUNTIMES = _words("""sh bash zsh dash ksh fish node nodejs deno bun curl wget powershell
powershell.exe pwsh cmd cmd.exe perl ruby php osascript nc ncat""")
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


def _const(node):
    kind = type(node).__name__
    value = getattr(node, "value" if kind == "Constant" else "s", None)
    return value if kind in ("Constant", "Str", "Bytes") and isinstance(value, (str, bytes)) \
        else None  # Str, Bytes: before 3.8


class _Reader:
    """One text's analysis: its syntax tree's aliases, decoded values, capabilities."""

    def __init__(self, tree, depth, budget):
        self.depth, self.budget, self.found = depth, budget, {}
        self.alias, self.values, self.tainted = {}, {}, {}
        self.nodes = list(_walk(tree))
        self.bound, self.cache = False, {}
        self._bind()
        self.bound = True

    def add(self, capability, evidence):
        self.found.setdefault(capability, set()).add(evidence)

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
            key = _const(getattr(node.slice, "value", node.slice))
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

    # ---------------------------------------------------------------- reading

    def read(self):
        for n in self.nodes:
            kind = type(n).__name__
            if kind == "Call":
                self._call(n)
                q = self.qual(n)  # getattr(__import__('subprocess'), 'Popen')
                if q:
                    self._reference(q)
            elif kind in ("Attribute", "Name"):
                q = self.qual(n)
                if q:
                    self._reference(q)
            elif kind == "ImportFrom" and not n.level and n.module:
                for a in n.names:
                    self._reference(_canon(n.module + "." + a.name))
                self._imports(n.module)
            elif kind == "Import":
                for a in n.names:
                    self._imports(a.name)
            elif kind in ("Assign", "AugAssign", "AnnAssign", "Delete"):
                targets = n.targets if kind in ("Assign", "Delete") else [n.target]
                for t in targets:
                    self._target(t)
            elif kind == "Dict" and any(k is None for k in n.keys):
                for k, v in zip(n.keys, n.values):
                    if k is None and self.qual(v) in ("os.environ", "os.environb"):
                        self.add("reads-credentials", "{**os.environ}")
            c = _const(n)
            if isinstance(c, (str, bytes)):
                self._literal(c)
        return self.found

    def _imports(self, module):
        if _canon(module) in _NETWORK_MODULES:
            self.add("network", "import " + module)

    def _reference(self, q):
        if _fits(q, _PROCESS):
            self.add("starts-processes", q)
        elif _fits(q, _NETWORK):
            self.add("network", q)
        elif q in _LOADS:
            self.add("dynamic-code", q)

    def _target(self, t):
        kind = type(t).__name__
        base = t.value if kind in ("Attribute", "Subscript") else t
        q = self.qual(base) if kind in ("Attribute", "Subscript") else None
        if kind == "Attribute":
            full = self.qual(t)
            if full in _IMPORT_SYSTEM:
                self.add("changes-import-system", full + " assigned")
            elif q in ("builtins", "__builtins__") or (q and q.partition(".")[0] == "builtins"):
                self.add("changes-import-system", "builtins.%s assigned" % t.attr)
        elif kind == "Subscript" and q in _IMPORT_SYSTEM + ("builtins", "__builtins__"):
            self.add("changes-import-system", "%s[...] assigned" % q)

    def _call(self, n):
        q = self.qual(n.func)
        if not q:
            return
        args = list(n.args) + [k.value for k in n.keywords]
        first = n.args[0] if n.args else None
        self._reference(q)
        if q in _EXEC or q in _LOADS:
            literal = None
            if q in _EXEC and first is not None and not self.decoders(first):
                literal = self.value(first)  # decoded code is read at its decoder
            self.add("dynamic-code", "%s of a literal" % q if literal is not None else q)
            self._sink(q, args)
            if literal is not None:
                self._code(literal, "%s → " % q)
        elif q in _IMPORTERS and first is not None and not isinstance(self.value(first), str):
            self.add("dynamic-code", "%s of a computed name" % q)
            self._sink(q, args)
        elif _fits(q, _PROCESS):
            self._sink(q, args)
            self._runtime(args)
        elif q == "setattr" and first is not None and self.qual(first) in (
                "builtins", "__builtins__", "sys"):
            self.add("changes-import-system", "setattr(%s, ...)" % self.qual(first))
        elif q in ("site.addsitedir",):
            self.add("changes-import-system", q)
        elif q in _DUMPS and any(self.qual(a) in ("os.environ", "os.environb") for a in args):
            self.add("reads-credentials", "%s(os.environ)" % q)
        head, _, method = q.rpartition(".")
        if head in _IMPORT_SYSTEM and method in _MUTATE:
            self.add("changes-import-system", q)
        elif head in ("os.environ", "os.environb") and method in (
                "copy", "__repr__", "__str__"):  # .items(): a filter may follow
            self.add("reads-credentials", q + "()")
        if _fits(q, _DECODERS) or (type(n.func).__name__ == "Attribute"
                                   and n.func.attr == "decode"):
            v = self.value(n)
            if v is not None:
                self._code(v, "decoded by %s: " % q)

    def _sink(self, q, args):
        for a in args:
            for d in self.decoders(a):
                self.add("decodes-and-executes", "%s → %s" % (d, q))

    def _runtime(self, args):
        names, texts = set(), []
        for a in args:
            for n in _walk(a):
                if self.qual(n) == "sys.executable":
                    names.add("sys.executable")
                v = self.value(n)
                if isinstance(v, bytes):
                    v = v.decode("latin-1")
                if isinstance(v, str):
                    texts.append(v)
                    for word in v.replace("|", " ").replace(";", " ").split()[:64]:
                        base = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
                        if base == "-c":
                            names.add("-c")
                        elif base in _RUNTIMES or (base.startswith("python") and (
                                base[6:].replace(".", "").isdigit() or base[6:] in ("", ".exe"))):
                            names.add(base)
        if "-c" in names and (names & {"sys.executable"} or any(
                n.startswith("python") for n in names)):
            for text in texts:  # the code ``-c`` runs: read as code (a word reads as a name)
                self._code(text, "run by -c: ")
        if "sys.executable" in names:
            self.add("launches-runtime", "sys.executable -c" if "-c" in names
                     else "sys.executable")
        for name in sorted(names - {"sys.executable", "-c"}):
            self.add("launches-runtime", name)

    def _literal(self, text):
        low = text.lower() if isinstance(text, str) else text.decode("latin-1").lower()
        if len(low) > 4096:
            low = low[:4096]
        if low.strip() in _CREDENTIAL_WORDS:
            self.add("reads-credentials", repr(text if len(text) < 40 else text[:37] + "..."))
            return
        for marker in _CREDENTIALS:
            if marker in low:
                self.add("reads-credentials", marker)

    def _code(self, value, how):
        """Read the decoded or literal ``value`` as code, one level down."""
        if self.depth >= MAX_DEPTH:
            self.add("dynamic-code", how + "nested deeper than %d levels: not read" % MAX_DEPTH)
            return
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeError:
                return
        found = _read(value, self.depth + 1, self.budget)
        for capability, evidence in (found or {}).items():
            for e in evidence:
                self.add(capability, how + e if how.startswith(("decoded", "run")) else e)


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


def _read(text, depth, budget):
    """The capabilities of ``text`` (``{capability: {evidence}}``), or None: it does not
    compile."""
    try:
        tree = compile(text, "<startup code>", "exec", _ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
        return None
    return _Reader(tree, depth, budget).read()


def analyse(text):
    """The capabilities of the startup code ``text``, as ``((capability, (evidence,
    ...)), ...)`` in :data:`NAMES` order, never running it; ``()`` for none (or for code
    that does not compile: its error is reported elsewhere)."""
    found = KNOWN.get(text.rstrip(), _SEEN.get(text))
    if found is not None:
        return found
    try:
        caps = _read(text, 0, [MAX_DECODED]) or {}
    except RecursionError:  # a syntax tree too deep to walk: say so rather than nothing
        caps = {"dynamic-code": {"code nested too deeply to read"}}
    except Exception:
        _swallowed("reading the capabilities of startup code %r" % (text[:80],))
        caps = {}
    found = tuple((name, tuple(sorted(caps[name]))) for name in NAMES if caps.get(name))
    _SEEN[text] = found
    return found


_SEEN = {}

#: What :func:`analyse` answers for setuptools' ``distutils-precedence.pth`` line, which
#: stock Debian systems run (``line_checks.KNOWN_LINES``): no ``compile()`` for it.
#: ``tests/test_startup_capabilities.py`` holds the table to :func:`analyse`.
KNOWN = {line: () for line in line_checks.KNOWN_LINES}


def dangerous(found):
    """The capabilities of ``found`` (:func:`analyse`) that make code dangerous."""
    return [name for name, _evidence in found if name in DANGEROUS]


def evidence(found):
    """``found`` as JSON's ``evidence`` list: ``"capability: what"``."""
    return ["%s: %s" % (name, e) for name, evidence in found for e in evidence]


def from_evidence(items):
    """:func:`evidence`'s list read back as :func:`analyse`'s answer."""
    found = {}
    for item in items or ():
        name, _, what = item.partition(": ")
        found.setdefault(name, []).append(what)
    return tuple((name, tuple(found[name])) for name in NAMES if name in found)


class Memo(private_cache.Memo):
    """:func:`analyse`'s answers kept from one check to the next in the probe's private
    cache (:class:`.private_cache.Memo`, as :class:`.line_checks.LineMemo` keeps line
    verdicts: a process's first ``compile()`` is costly)."""

    FORMAT = 1
    NAME = "startup-capabilities-%d-%s-%x" % (FORMAT, sys.implementation.cache_tag,
                                              sys.hexversion)
    answer = staticmethod(analyse)

    @staticmethod
    def valid(found):
        return type(found) is tuple and all(
            type(c) is tuple and len(c) == 2 and c[0] in NAMES and type(c[1]) is tuple
            and all(type(e) is str for e in c[1]) for c in found)

    analyse = private_cache.Memo.get
