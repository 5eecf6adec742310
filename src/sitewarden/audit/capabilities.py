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
from ..facts import private_cache
from . import line_checks
from .line_checks import _ONLY_AST, _walk
from .resolve import (
    _DECODERS,
    _IMPORTERS,
    MAX_DECODED,
    _canon,
    _const,
    _fits,
    _index,
    _Resolver,
    _words,
)

#: The capabilities that make startup code ``dangerous-startup-code`` (high), whoever owns it.
DANGEROUS = ("runs-hidden-code", "decodes-and-executes", "starts-processes", "network",
             "reads-credentials")
#: Every capability, the dangerous first: the order the text output shows them in.
NAMES = DANGEROUS + ("launches-runtime", "dynamic-code", "changes-import-system")

MAX_DEPTH = 4  # decoded code read as code, at most this many levels down
MAX_TEXT = 1 << 20  # a module larger than this is not read


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
_LOADS = ("runpy.run_module",)
#: Code that runs what it does not show: deserialisers, code built from data, a file run
#: (``runs-hidden-code``); foreign-function calls run machine code (:data:`_FOREIGN`).
_HIDDEN = _words("""marshal.loads marshal.load pickle.loads pickle.load pickle.Unpickler
cPickle.loads cPickle.load _pickle.loads _pickle.load _pickle.Unpickler shelve.open
dill.loads dill.load cloudpickle.loads cloudpickle.load types.FunctionType types.CodeType
runpy.run_path execfile""")
_FOREIGN = _words("ctypes.* _ctypes.* cffi.* _cffi_backend.*")
_RUNS = ("exec", "eval", "execfile")
_BUILTINS = ("builtins", "__builtins__", "__builtin__")
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


class _Reader(_Resolver):
    """One text's analysis: what its names and values (:class:`.resolve._Resolver`) do."""

    def __init__(self, tree, depth, budget):
        self.depth, self.found = depth, {}
        _Resolver.__init__(self, tree, budget)

    def add(self, capability, evidence):
        self.found.setdefault(capability, set()).add(evidence)

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
                if kind == "Attribute" and n.attr == "__dict__" and \
                        self.qual(n.value) in _BUILTINS:
                    self.add("runs-hidden-code", "%s.__dict__" % self.qual(n.value))
            elif kind == "Subscript":
                _builtins_item(self, n)
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
        elif _fits(module + ".", _FOREIGN):
            self.add("runs-hidden-code", "import %s (foreign functions)" % module)

    def _reference(self, q):
        if _fits(q, _PROCESS):
            self.add("starts-processes", q)
        elif _fits(q, _NETWORK):
            self.add("network", q)
        elif q in _LOADS:
            self.add("dynamic-code", q)
        elif _fits(q, _FOREIGN):
            self.add("runs-hidden-code", q)

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
        if q in _HIDDEN:  # called: a reference (an annotation) runs nothing
            self.add("runs-hidden-code", q)
        if q in _EXEC or q in _LOADS:
            literal, decoded = None, first is not None and self.decoders(first)
            if q in _EXEC and first is not None and not decoded:
                literal = self.value(first)  # decoded code is read at its decoder
                if literal is None and type(first).__name__ == "Call" and first.args and \
                        self.qual(first.func) == "compile":  # exec(compile('...', f, m))
                    literal = self.value(first.args[0])
            self.add("dynamic-code", "%s of a literal" % q if literal is not None else q)
            if q in _RUNS and first is not None and literal is None and not decoded:
                self.add("runs-hidden-code", "%s of a value check cannot read" % q)
            elif q in _LOADS and first is not None and not isinstance(self.value(first), str):
                self.add("runs-hidden-code", "%s of a computed name" % q)
            self._sink(q, args)
            if literal is not None:
                self._code(literal, "%s → " % q)
        elif q in _IMPORTERS and first is not None and not isinstance(self.value(first), str):
            self.add("dynamic-code", "%s of a computed name" % q)
            self._sink(q, args)
        elif _fits(q, _PROCESS):
            self._sink(q, args)
            self._runtime(args)
        elif q in ("getattr", "vars") and first is not None and self.qual(first) in _BUILTINS \
                and (q == "vars" or len(n.args) > 1 and not isinstance(
                    self.value(n.args[1]), str)):
            self.add("runs-hidden-code", "%s(%s, <computed name>)" % (q, self.qual(first))
                     if q == "getattr" else "vars(%s)" % self.qual(first))
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


def _builtins_item(reader, n):
    """``__builtins__[name]`` with a computed name, ``globals()['__builtins__']``:
    the builtins looked up by a name the code does not show."""
    base, key = n.value, reader.value(_index(n))
    q = reader.qual(base)
    if type(base).__name__ == "Attribute" and base.attr == "__dict__":
        q = reader.qual(base.value)
    if q in _BUILTINS and not isinstance(key, str):
        reader.add("runs-hidden-code", "%s[<computed name>]" % q)
    elif type(base).__name__ == "Call" and reader.qual(base.func) in ("globals", "vars") \
            and key in _BUILTINS:
        reader.add("runs-hidden-code", "%s()[%r]" % (reader.qual(base.func), key))


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
