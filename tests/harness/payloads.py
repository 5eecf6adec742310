"""Startup payloads for the differential oracle (``tests/test_startup_oracle.py``).

:func:`generate` composes, from a seed (``random.Random``; :data:`SEED`, or the
environment's ``SITEWARDEN_ORACLE_SEED``), several hundred cases: startup files that each
end in one harmless *sink* (start ``true``, exec a string, write a canary file, connect to
127.0.0.1's closed port 1, call ``system`` through ``ctypes``), reached through a chain of
*mutation operators*, and benign *controls* with the severity ``check`` may give them at
most.  Every operator is a small function with a one-line docstring, registered under its
name in :data:`OPERATORS`; a case records the operators that made it (``Case.operators``),
so a disagreement names them.  The operators, by family:

* ``sink:*`` what the payload does;
* ``reach:*`` how the sink's callable is reached: aliases and rebinding (``import x as``,
  ``from x import y as``, assignments, tuples, ``globals()`` writes, default arguments),
  indirection (``vars()``, ``__dict__``, ``getattr`` of a computed name,
  ``operator.attrgetter``, ``functools.reduce``, builtins by a computed key,
  ``pkgutil.resolve_name``, ``eval`` of a name);
* ``call:*`` how it is called (``functools.partial``, ``operator.call``/``methodcaller``,
  ``map``, ``atexit.register``/``threading.Thread`` of the callable itself, a
  ``logging.config.dictConfig`` ``'()'`` factory, a ``pickle`` reduce);
* ``str:*`` how its literals are spelled (concatenation, ``join``, ``chr``, slices,
  ``bytes.fromhex``, base64, zlib, rot13, ``%``, ``format``, f-strings, escapes);
* ``run:*`` the standard library's code runners around the whole payload (``exec``,
  ``eval``/``compile``, ``types.FunctionType``, ``code.InteractiveInterpreter``,
  ``timeit``, ``cProfile``, ``runpy``, ``importlib``'s ``exec_module``,
  ``pkgutil.resolve_name``, a ``dictConfig`` factory, ``marshal``, ``pickle``,
  ``ctypes.pythonapi.PyRun_SimpleString``);
* ``when:*`` deferred execution (``atexit``, a meta path finder, a path hook, an except
  hook, an unraisable hook, ``__del__``, a thread, a codec search function triggered by a
  later module's coding cookie, a module ``__getattr__``);
* ``where:*`` the startup file and modules that hold it (a ``.pth`` line, modules,
  packages, chains, ``sitecustomize``, ``usercustomize``, a 3.15 ``.start`` entry point,
  path lines, namespace portions, a standard library name shadowed after
  ``sys.path.insert``, ``site.addsitedir`` of a literal or computed directory, nested
  ``.pth`` files);
* ``enc:*`` the module's source encoding (BOM, ``latin-1``, ``cp1252``, ``utf-7`` hiding
  lines in a comment) and ``pyc:*`` bytecode holding the payload beside a harmless source
  (timestamp, ``.opt-1``/``.opt-2`` with ``PYTHONOPTIMIZE``, checked and unchecked hash,
  sourceless), built by the target itself (``harness.bytecode.build_pycs``);
* ``own:distribution``: the case's files in a distribution whose ``RECORD`` verifies them.

Every name a case plants starts with ``oracle_<id>`` so that cases are planted together;
the few shared names (``sitecustomize``, ``usercustomize``, a shadowed standard library
name) are *slots*, one case each per batch.  Paths are rendered for one target
(:class:`Where`); the same seed gives the same cases on every target.
"""

from __future__ import annotations

import base64
import codecs
import os
import random
import zlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

#: The seed the oracle runs with unless ``SITEWARDEN_ORACLE_SEED`` says otherwise.
SEED = 829578
ENV_SEED = "SITEWARDEN_ORACLE_SEED"

#: Cases per run (payloads and controls).
COUNT = 300

#: Standard library names a case may shadow (no operator and no startup imports them).
SHADOWABLE = ("colorsys", "tabnanny", "pyclbr", "sched", "filecmp", "wave", "netrc", "shelve",
              "cmd", "zipapp", "quopri", "fileinput", "mailbox")

SEVERITIES = ("info", "low", "medium", "high")


def seed() -> int:
    """The seed of this run: ``SITEWARDEN_ORACLE_SEED`` if set, else :data:`SEED`."""
    value = os.environ.get(ENV_SEED, "").strip()
    return int(value) if value else SEED


@dataclass(frozen=True)
class Where:
    """Where a target's cases are planted: its first site directory (every ``oracle_*``
    name), the directory canary files are written in, and the target's version."""

    site_dir: str
    canary_dir: str
    version: Tuple[int, int]


@dataclass
class Pyc:
    """Bytecode the target compiles for a case (``harness.bytecode.build_pycs``).

    ``kind``: ``timestamp``, ``checked``, ``unchecked`` (a PEP 552 header valid for
    ``source``), ``sourceless`` (header of zeros) or ``marshal`` (no header);
    ``code`` is compiled with ``filename`` and ``optimize``."""

    kind: str
    path: str
    code: str
    filename: str
    source: Optional[str] = None
    optimize: int = 0


@dataclass
class Case:
    """One case: its files (paths relative to the site directory; ``<sitecustomize>`` and
    ``<usercustomize>`` stand for where the target imports those), its startup files
    (``startup``: the ones at the top of the site directory, which a bisection turns
    off; ``entry``: where its chain starts), bytecode to build, the environment its
    start needs, its slots, the versions it runs on, and for a control the severity
    ``check`` may give it at most (``expected``)."""

    id: str
    kind: str  # "payload" or "control"
    operators: List[str]
    files: Dict[str, bytes] = field(default_factory=dict)
    startup: List[str] = field(default_factory=list)
    entry: str = ""
    pycs: List[Pyc] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    slots: List[str] = field(default_factory=list)
    min_version: Tuple[int, int] = (3, 8)
    max_version: Tuple[int, int] = (3, 99)
    expected: Optional[str] = None
    sink: str = ""
    token: str = ""
    #: The payload's code as written before it was placed (for messages).
    source: str = ""
    #: The nested startup files (in a data directory) the case plants.
    nested: List[str] = field(default_factory=list)
    #: Its files are a distribution's, verified by a ``RECORD`` (``own:distribution``).
    owned: bool = False

    def accepts(self, version: Sequence[int]) -> bool:
        """Whether the case runs on a target of ``version`` (major, minor)."""
        return self.min_version <= tuple(version[:2]) <= self.max_version

    @property
    def prefix(self) -> str:
        return "oracle_" + self.id

    def payload_text(self, limit: int = 1200) -> str:
        """The case's files as text, each cut at ``limit`` characters."""
        parts = []
        for rel, data in sorted(self.files.items()):
            text = data.decode("utf-8", "backslashreplace")
            if len(text) > limit:
                text = text[:limit] + " [... %d more characters]" % (len(text) - limit)
            parts.append("--- %s\n%s" % (rel, text.rstrip("\n")))
        for pyc in self.pycs:
            parts.append("--- %s (%s bytecode of:)\n%s" % (pyc.path, pyc.kind, pyc.code[:limit]))
        return "\n".join(parts)


class Build:
    """A case under construction: the random source, the operators applied, the
    imports and statements of the payload, fresh names."""

    def __init__(self, case: Case, rng: random.Random, where: Where) -> None:
        self.case, self.rng, self.where = case, rng, where
        self.imports: List[str] = []
        self.count = 0
        self.strings: List[str] = []  # the str:* operators this case spells literals with

    def use(self, name: str) -> None:
        """Record that operator ``name`` made this case."""
        self.case.operators.append(name)

    def need(self, statement: str) -> None:
        if statement not in self.imports:
            self.imports.append(statement)

    def fresh(self, base: str) -> str:
        self.count += 1
        return "_%s_%s%d" % (self.case.id, base, self.count)

    def data_dir(self) -> str:
        """The case's data directory, relative to the site directory."""
        return self.case.prefix + "_d"

    def path(self, rel: str) -> str:
        """``rel`` (relative to the site directory) as an absolute path on the target."""
        return self.where.site_dir + "/" + rel

    def lit(self, value: str) -> str:
        """``value`` as an expression, spelled by one of the case's ``str:*`` operators."""
        if not self.strings or self.rng.random() < 0.3:
            return repr(value)
        name = self.rng.choice(self.strings)
        return STRINGS[name](self, value)

    def spelled(self, value: str) -> str:
        """``value`` built by a ``str:*`` operator (never one whose result may be a plain
        or escaped literal), recorded among the case's operators."""
        name = self.rng.choice(sorted(n for n in STRINGS if n not in ("escapes", "fstring")))
        self.use("str:" + name)
        return STRINGS[name](self, value)

    def line_lit(self, value: str) -> Tuple[str, str]:
        """``value`` spelled for a startup line of its own: the imports it needs (as a
        prefix ending ``; ``), the expression."""
        before, self.imports = self.imports, []
        expr = self.lit(value)
        new, self.imports = self.imports, before
        return "".join(i + "; " for i in new), expr

    def blit(self, value: bytes) -> str:
        """``value`` (bytes) as an expression: a literal, base64 or hex."""
        choice = self.rng.choice(["plain", "b64", "hex"] if self.strings else ["plain"])
        if choice == "b64":
            self.need("import base64")
            return "base64.b64decode(%r)" % base64.b64encode(value).decode()
        if choice == "hex":
            return "bytes.fromhex(%r)" % value.hex()
        return repr(value)


OPERATORS: Dict[str, Callable] = {}


def operator(family: str, name: str, **meta) -> Callable[[Callable], Callable]:
    """Register an operator as ``family:name``."""
    def register(function: Callable) -> Callable:
        function.operator = "%s:%s" % (family, name)  # type: ignore[attr-defined]
        function.meta = meta  # type: ignore[attr-defined]
        OPERATORS[function.operator] = function  # type: ignore[attr-defined]
        return function
    return register


def _family(family: str) -> Dict[str, Callable]:
    return {k.split(":", 1)[1]: v for k, v in OPERATORS.items() if k.startswith(family + ":")}


def indent(lines: Sequence[str], depth: int = 1) -> List[str]:
    pad = "    " * depth
    return [pad + line if line else line for text in lines for line in text.split("\n")]


def render(lines: Sequence[str]) -> str:
    return "\n".join(lines) + "\n"


def one_line(lines: Sequence[str]) -> Optional[str]:
    """The statements on one line, or None when one of them is compound."""
    if any("\n" in line or line.startswith(("def ", "class ", "try:", "if ", "for "))
           for line in lines):
        return None
    return "; ".join(lines)


# ------------------------------------------------------------------------ sinks


@dataclass
class Sink:
    module: str
    attr: str
    args: str
    tail: str = ""
    nargs: int = 1
    at_exit: bool = True  # works when called at exit (3.12+ refuses os.fork then)
    threads: bool = True  # may run in a thread (a fork there can deadlock the child)


@operator("sink", "proc-system")
def sink_system(b: Build) -> Sink:
    """Start a process: ``os.system('true <id>')``."""
    return Sink("os", "system", repr("true " + b.case.token))


@operator("sink", "proc-run")
def sink_run(b: Build) -> Sink:
    """Start a process: ``subprocess.run(['true', '<id>'])``."""
    return Sink("subprocess", "run", repr(["true", b.case.token]))


@operator("sink", "proc-popen")
def sink_popen(b: Build) -> Sink:
    """Start a process through a shell pipe: ``os.popen('true <id>').close()``."""
    return Sink("os", "popen", repr("true " + b.case.token), ".close()")


@operator("sink", "proc-spawn")
def sink_spawn(b: Build) -> Sink:
    """Start a process by fork and exec: ``os.spawnlp(os.P_WAIT, 'true', ...)``."""
    return Sink("os", "spawnlp", "0, 'true', 'true', %r" % b.case.token, nargs=4, at_exit=False,
                threads=False)


@operator("sink", "exec-string")
def sink_exec(b: Build) -> Sink:
    """Execute a string spelled, not written (a literal is code the audit reads)."""
    return Sink("builtins", "exec", "%s, {}" % b.spelled("%s = 1" % b.case.token), nargs=2)


@operator("sink", "eval-string")
def sink_eval(b: Build) -> Sink:
    """Evaluate a string spelled, not written: ``eval(<len('<id>')>, {})``."""
    return Sink("builtins", "eval", "%s, {}" % b.spelled("len(%r)" % b.case.token), nargs=2)


@operator("sink", "write-canary")
def sink_write(b: Build) -> Sink:
    """Write a canary file in the oracle's canary directory."""
    path = b.where.canary_dir + "/" + b.case.token
    return Sink("builtins", "open", "%r, 'w'" % path, ".close()", nargs=2)


@operator("sink", "socket")
def sink_socket(b: Build) -> Sink:
    """Connect to 127.0.0.1's closed port 1 (never any other address)."""
    return Sink("socket", "socket", "", ".connect_ex(('127.0.0.1', 1))", nargs=0)


@operator("sink", "ctypes")
def sink_ctypes(b: Build) -> Sink:
    """Call libc's ``system`` through ``ctypes.CDLL(None)``."""
    return Sink("ctypes", "CDLL", "None", ".system(%r)" % ("true " + b.case.token).encode())


# ------------------------------------------------------------------------ strings


def _split(b: Build, value: str) -> List[str]:
    if len(value) < 2:
        return [value]
    cuts = sorted(b.rng.sample(range(1, len(value)), min(len(value) - 1, b.rng.randint(1, 2))))
    return [value[i:j] for i, j in zip([0, *cuts], [*cuts, len(value)])]


@operator("str", "concat")
def str_concat(b: Build, value: str) -> str:
    """Concatenated pieces: ``'sy' + 'stem'``."""
    return "(%s)" % " + ".join(map(repr, _split(b, value)))


@operator("str", "join")
def str_join(b: Build, value: str) -> str:
    """Joined pieces: ``''.join(['sy', 'stem'])``."""
    return "''.join(%r)" % (_split(b, value),)


@operator("str", "chr")
def str_chr(b: Build, value: str) -> str:
    """Character codes: ``''.join(map(chr, [115, ...]))``."""
    return "''.join(map(chr, %r))" % ([ord(c) for c in value],)


@operator("str", "reversed")
def str_reversed(b: Build, value: str) -> str:
    """A reversed literal sliced back: ``'metsys'[::-1]``."""
    return "%r[::-1]" % value[::-1]


@operator("str", "slice")
def str_slice(b: Build, value: str) -> str:
    """A slice of a padded literal: ``'xsystemy'[1:-1]``."""
    return "%r[1:-1]" % ("x" + value + "y")


@operator("str", "fromhex")
def str_fromhex(b: Build, value: str) -> str:
    """Hex digits decoded: ``bytes.fromhex('7379...').decode()``."""
    return "bytes.fromhex(%r).decode()" % value.encode().hex()


@operator("str", "base64")
def str_base64(b: Build, value: str) -> str:
    """Base64 decoded: ``base64.b64decode('c3lz...').decode()``."""
    b.need("import base64")
    return "base64.b64decode(%r).decode()" % base64.b64encode(value.encode()).decode()


@operator("str", "zlib")
def str_zlib(b: Build, value: str) -> str:
    """zlib-compressed, base64-encoded, decoded back."""
    b.need("import base64, zlib")
    data = base64.b64encode(zlib.compress(value.encode())).decode()
    return "zlib.decompress(base64.b64decode(%r)).decode()" % data


@operator("str", "rot13")
def str_rot13(b: Build, value: str) -> str:
    """rot13: ``codecs.decode('flfgrz', 'rot13')``."""
    b.need("import codecs")
    return "codecs.decode(%r, 'rot13')" % codecs.encode(value, "rot13")


@operator("str", "percent")
def str_percent(b: Build, value: str) -> str:
    """``%``-formatting: ``'%s%s' % ('sy', 'stem')``."""
    parts = _split(b, value)
    return "(%r %% %r)" % ("%s" * len(parts), tuple(parts))


@operator("str", "format")
def str_format(b: Build, value: str) -> str:
    """``str.format``: ``'{}{}'.format('sy', 'stem')``."""
    parts = _split(b, value)
    return "%r.format(%s)" % ("{}" * len(parts), ", ".join(map(repr, parts)))


@operator("str", "fstring")
def str_fstring(b: Build, value: str) -> str:
    """An f-string of literal pieces: ``f"{'sy'}stem"``."""
    if any(c in value for c in "'\"\\\n{}") or not value.isprintable():
        return repr(value)
    parts = _split(b, value)
    return 'f"%s"' % "".join("{%r}" % p if i % 2 == 0 else p for i, p in enumerate(parts))


@operator("str", "escapes")
def str_escapes(b: Build, value: str) -> str:
    """Hex escapes in the literal: ``'\\x73\\x79stem'``."""
    def one(c: str) -> str:
        if c.isalnum() and c.isascii() and b.rng.random() < 0.6:
            return "\\x%02x" % ord(c)
        return "\\'" if c == "'" else repr(c)[1:-1] if c != '"' else c

    return "'%s'" % "".join(map(one, value))


STRINGS = _family("str")


# ------------------------------------------------------------------------ reach


@operator("reach", "import")
def reach_import(b: Build, sink: Sink) -> str:
    """The module imported under its name: ``import os``."""
    b.need("import %s" % sink.module)
    return sink.module


@operator("reach", "import-as")
def reach_import_as(b: Build, sink: Sink) -> str:
    """The module imported under an alias: ``import os as _c1_m1``."""
    alias = b.fresh("m")
    b.need("import %s as %s" % (sink.module, alias))
    return alias


@operator("reach", "dunder-import")
def reach_dunder_import(b: Build, sink: Sink) -> str:
    """``__import__`` of the (spelled) module name."""
    return "__import__(%s)" % b.lit(sink.module)


@operator("reach", "import-module")
def reach_import_module(b: Build, sink: Sink) -> str:
    """``importlib.import_module`` of the (spelled) module name."""
    alias = b.fresh("il")
    b.need("import importlib as %s" % alias)
    return "%s.import_module(%s)" % (alias, b.lit(sink.module))


@operator("reach", "sys-modules")
def reach_sys_modules(b: Build, sink: Sink) -> str:
    """``sys.modules`` by the (spelled) name, after a plain import."""
    b.need("import sys, %s" % sink.module)
    return "sys.modules[%s]" % b.lit(sink.module)


MODULE_REACH = ["import", "import-as", "dunder-import", "import-module", "sys-modules"]


@operator("reach", "attribute")
def reach_attribute(b: Build, sink: Sink, module: str) -> str:
    """Plain attribute access: ``os.system``."""
    return "%s.%s" % (module, sink.attr)


@operator("reach", "getattr")
def reach_getattr(b: Build, sink: Sink, module: str) -> str:
    """``getattr`` of a (spelled) name."""
    return "getattr(%s, %s)" % (module, b.lit(sink.attr))


@operator("reach", "module-dict")
def reach_module_dict(b: Build, sink: Sink, module: str) -> str:
    """The module's ``__dict__`` by a (spelled) key."""
    return "%s.__dict__[%s]" % (module, b.lit(sink.attr))


@operator("reach", "vars")
def reach_vars(b: Build, sink: Sink, module: str) -> str:
    """``vars(module)`` by a (spelled) key."""
    return "vars(%s)[%s]" % (module, b.lit(sink.attr))


@operator("reach", "attrgetter")
def reach_attrgetter(b: Build, sink: Sink, module: str) -> str:
    """``operator.attrgetter`` of a (spelled) name."""
    alias = b.fresh("op")
    b.need("import operator as %s" % alias)
    return "%s.attrgetter(%s)(%s)" % (alias, b.lit(sink.attr), module)


@operator("reach", "reduce")
def reach_reduce(b: Build, sink: Sink, module: str) -> str:
    """``functools.reduce(getattr, [name], module)``."""
    b.need("import functools")
    return "functools.reduce(getattr, [%s], %s)" % (b.lit(sink.attr), module)


ATTR_REACH = ["attribute", "getattr", "module-dict", "vars", "attrgetter", "reduce"]


@operator("reach", "from-import-as")
def reach_from_import(b: Build, sink: Sink) -> str:
    """``from os import system as _c1_f1``."""
    alias = b.fresh("f")
    b.need("from %s import %s as %s" % (sink.module, sink.attr, alias))
    return alias


@operator("reach", "builtins-key", builtins=True)
def reach_builtins_key(b: Build, sink: Sink) -> str:
    """The builtins' namespace by a (spelled) key: ``__builtins__['ex' + 'ec']``."""
    return ("(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))[%s]"
            % b.lit(sink.attr))


@operator("reach", "bare-builtin", builtins=True)
def reach_bare(b: Build, sink: Sink) -> str:
    """The builtin by its own name: ``exec``."""
    return sink.attr


@operator("reach", "resolve-name", min_version=(3, 9))
def reach_resolve_name(b: Build, sink: Sink) -> str:
    """``pkgutil.resolve_name('os:system')`` of a (spelled) name."""
    b.need("import pkgutil")
    return "pkgutil.resolve_name(%s)" % b.lit("%s:%s" % (sink.module, sink.attr))


@operator("reach", "eval-name")
def reach_eval_name(b: Build, sink: Sink) -> str:
    """``eval`` of the callable's (spelled) dotted name."""
    text = sink.attr if sink.module == "builtins" else "__import__(%r).%s" % (sink.module,
                                                                               sink.attr)
    return "eval(%s)" % b.lit(text)


DIRECT_REACH = ["from-import-as", "builtins-key", "bare-builtin", "resolve-name", "eval-name"]


@operator("reach", "rebind")
def reach_rebind(b: Build, callee: str, stmts: List[str]) -> str:
    """Rebinding to a fresh name: ``_c1_r1 = os.system``."""
    name = b.fresh("r")
    stmts.append("%s = %s" % (name, callee))
    return name


@operator("reach", "tuple-rebind")
def reach_tuple_rebind(b: Build, callee: str, stmts: List[str]) -> str:
    """Rebinding through tuple unpacking: ``_c1_t1, _c1_r2 = None, os.system``."""
    name, other = b.fresh("r"), b.fresh("t")
    stmts.append("%s, %s = None, %s" % (other, name, callee))
    return name


@operator("reach", "globals-write")
def reach_globals(b: Build, callee: str, stmts: List[str]) -> str:
    """A ``globals()`` write under a (spelled) name, then the bare name."""
    name = b.fresh("g")
    stmts.append("globals()[%s] = %s" % (b.lit(name), callee))
    return name


@operator("reach", "default-arg")
def reach_default(b: Build, callee: str, stmts: List[str]) -> str:
    """A default argument: ``_c1_d1 = lambda _f=os.system: _f``, called."""
    name = b.fresh("d")
    stmts.append("%s = lambda _f=%s: _f" % (name, callee))
    return name + "()"


REBIND = ["rebind", "tuple-rebind", "globals-write", "default-arg"]


# ------------------------------------------------------------------------ calls


@operator("call", "direct")
def call_direct(b: Build, sink: Sink, callee: str) -> List[str]:
    """The callable called: ``os.system('true ...')``."""
    return ["%s(%s)%s" % (callee, sink.args, sink.tail)]


@operator("call", "partial")
def call_partial(b: Build, sink: Sink, callee: str) -> List[str]:
    """``functools.partial(callee, args)()``."""
    b.need("import functools")
    args = ", " + sink.args if sink.args else ""
    return ["functools.partial(%s%s)()%s" % (callee, args, sink.tail)]


@operator("call", "operator-call", min_version=(3, 11))
def call_operator(b: Build, sink: Sink, callee: str) -> List[str]:
    """``operator.call(callee, args)`` (3.11+)."""
    alias = b.fresh("op")
    b.need("import operator as %s" % alias)
    args = ", " + sink.args if sink.args else ""
    return ["%s.call(%s%s)%s" % (alias, callee, args, sink.tail)]


@operator("call", "map", nargs=1)
def call_map(b: Build, sink: Sink, callee: str) -> List[str]:
    """``list(map(callee, [arg]))[0]``."""
    return ["list(map(%s, [%s]))[0]%s" % (callee, sink.args, sink.tail)]


@operator("call", "atexit-callable", tail=False, at_exit=True)
def call_atexit(b: Build, sink: Sink, callee: str) -> List[str]:
    """``atexit.register(callee, args)``: called from C at exit, no Python frame."""
    b.need("import atexit")
    return ["atexit.register(%s, %s)" % (callee, sink.args)]


@operator("call", "thread-callable", tail=False, thread=True)
def call_thread(b: Build, sink: Sink, callee: str) -> List[str]:
    """``threading.Thread(target=callee, args=(...,))``, started and joined."""
    b.need("import threading")
    thread = b.fresh("th")
    return ["%s = threading.Thread(target=%s, args=(%s,))" % (thread, callee, sink.args),
            "%s.start()" % thread, "%s.join()" % thread]


def _methodcaller(b: Build, sink: Sink, module: str) -> List[str]:
    alias = b.fresh("op")
    b.need("import operator as %s" % alias)
    args = ", " + sink.args if sink.args else ""
    return ["%s.methodcaller(%s%s)(%s)%s" % (alias, b.lit(sink.attr), args, module, sink.tail)]


@operator("call", "methodcaller")
def call_methodcaller(b: Build, sink: Sink, module: str) -> List[str]:
    """``operator.methodcaller(name, args)(module)``: name and call in one."""
    return _methodcaller(b, sink, module)


@operator("call", "dictconfig-factory", sinks=("proc-system",))
def call_dictconfig(b: Build, sink: Sink) -> List[str]:
    """A ``logging.config.dictConfig`` handler whose ``'()'`` names ``os.system``."""
    b.need("import logging.config")
    config = ("{'version': 1, 'handlers': {'h': {'()': %s, 'command': %r}}}"
              % (b.lit("os.system"), "true " + b.case.token))
    return ["try:\n    logging.config.dictConfig(%s)\nexcept Exception:\n    pass" % config]


@operator("call", "pickle-reduce", sinks=("proc-system",))
def call_pickle(b: Build, sink: Sink) -> List[str]:
    """``pickle.loads`` of a protocol 0 reduce of ``os.system``."""
    b.need("import pickle")
    data = b"cos\nsystem\n(V" + ("true " + b.case.token).encode() + b"\ntR."
    return ["pickle.loads(%s)" % b.blit(data)]


# ------------------------------------------------------------------------ runners


def _store(b: Build, rel: str, text: str) -> None:
    b.case.files[rel] = text.encode()


@operator("run", "exec")
def run_exec(b: Build, code: str) -> List[str]:
    """``exec(source, {})``."""
    return ["exec(%s, {})" % b.lit(code)]


@operator("run", "compile-exec")
def run_compile_exec(b: Build, code: str) -> List[str]:
    """``exec(compile(source, '<oracle>', 'exec'), {})``."""
    return ["exec(compile(%s, %s, 'exec'), {})" % (b.lit(code), b.lit("<oracle>"))]


@operator("run", "compile-eval")
def run_compile_eval(b: Build, code: str) -> List[str]:
    """``eval(compile(source, '<oracle>', 'exec'), {})``."""
    return ["eval(compile(%s, '<oracle>', 'exec'), {})" % b.lit(code)]


@operator("run", "function-type")
def run_function_type(b: Build, code: str) -> List[str]:
    """``types.FunctionType(compile(source, ...), {'__builtins__': ...})()``."""
    b.need("import types")
    return ["types.FunctionType(compile(%s, '<oracle>', 'exec'), "
            "{'__builtins__': __builtins__})()" % b.lit(code)]


@operator("run", "interactive-interpreter")
def run_code_module(b: Build, code: str) -> List[str]:
    """``code.InteractiveInterpreter().runsource(source, '<oracle>', 'exec')``."""
    b.need("import code")
    return ["code.InteractiveInterpreter().runsource(%s, '<oracle>', 'exec')"
            % b.lit(code + "\n")]


@operator("run", "timeit")
def run_timeit(b: Build, code: str) -> List[str]:
    """``timeit.timeit(source, number=1)``."""
    b.need("import timeit")
    return ["timeit.timeit(%s, number=1)" % b.lit(code)]


@operator("run", "cprofile")
def run_cprofile(b: Build, code: str) -> List[str]:
    """``cProfile.Profile().runctx(source, {}, None)``."""
    b.need("import cProfile")
    return ["cProfile.Profile().runctx(%s, {}, None)" % b.lit(code)]


@operator("run", "cprofile-run")
def run_cprofile_run(b: Build, code: str) -> List[str]:
    """``cProfile.run(source)``: run in ``__main__``'s namespace, its statistics printed."""
    b.need("import cProfile")
    return ["cProfile.run(%s)" % b.lit(code)]


@operator("run", "runpy-path")
def run_runpy_path(b: Build, code: str) -> List[str]:
    """``runpy.run_path`` of a data file holding the source."""
    rel = "%s/run%d.py" % (b.data_dir(), b.count)
    b.count += 1
    _store(b, rel, code)
    b.need("import runpy")
    return ["runpy.run_path(%s)" % b.lit(b.path(rel))]


@operator("run", "runpy-module")
def run_runpy_module(b: Build, code: str) -> List[str]:
    """``runpy.run_module`` of a module holding the source."""
    name = "%s_r%d" % (b.case.prefix, b.count)
    b.count += 1
    _store(b, name + ".py", code)
    b.need("import runpy")
    return ["runpy.run_module(%s)" % b.lit(name)]


@operator("run", "exec-module")
def run_exec_module(b: Build, code: str) -> List[str]:
    """``importlib.util.spec_from_file_location(...).loader.exec_module`` of a data file."""
    rel = "%s/spec%d.py" % (b.data_dir(), b.count)
    name = "%s_s%d" % (b.case.prefix, b.count)
    b.count += 1
    _store(b, rel, code)
    b.need("import importlib.util")
    spec = b.fresh("spec")
    return ["%s = importlib.util.spec_from_file_location(%s, %s)" % (
                spec, b.lit(name), b.lit(b.path(rel))),
            "%s.loader.exec_module(importlib.util.module_from_spec(%s))" % (spec, spec)]


@operator("run", "resolve-module", min_version=(3, 9))
def run_resolve_module(b: Build, code: str) -> List[str]:
    """``pkgutil.resolve_name`` of a module holding the source: imported by name."""
    name = "%s_n%d" % (b.case.prefix, b.count)
    b.count += 1
    _store(b, name + ".py", code)
    b.need("import pkgutil")
    return ["pkgutil.resolve_name(%s)" % b.lit(name)]


@operator("run", "dictconfig-module")
def run_dictconfig(b: Build, code: str) -> List[str]:
    """A ``dictConfig`` ``'()'`` factory in a module holding the source (imported)."""
    name = "%s_h%d" % (b.case.prefix, b.count)
    b.count += 1
    _store(b, name + ".py", code + "\n\ndef make(**kwargs):\n    import logging\n"
           "    return logging.NullHandler()\n")
    b.need("import logging.config")
    return ["logging.config.dictConfig({'version': 1, 'handlers': {'h': {'()': %s}}})"
            % b.lit(name + ".make")]


@operator("run", "marshal")
def run_marshal(b: Build, code: str) -> List[str]:
    """``exec(marshal.loads(data))`` of the source compiled by the target (a data file)."""
    rel = "%s/code%d.bin" % (b.data_dir(), b.count)
    b.count += 1
    b.case.pycs.append(Pyc("marshal", rel, code, "<oracle-marshal>"))
    b.need("import marshal")
    return ["exec(marshal.loads(open(%s, 'rb').read()), {})" % b.lit(b.path(rel))]


@operator("run", "pickle")
def run_pickle(b: Build, code: str) -> List[str]:
    """``pickle.loads`` of a protocol 0 reduce of ``builtins.exec(source)``."""
    b.need("import pickle")
    escaped = code.replace("\\", "\\u005c").replace("\n", "\\u000a").encode("raw_unicode_escape")
    return ["pickle.loads(%s)" % b.blit(b"cbuiltins\nexec\n(V" + escaped + b"\ntR.")]


@operator("run", "pyrun-ctypes")
def run_pyrun(b: Build, code: str) -> List[str]:
    """``ctypes.pythonapi.PyRun_SimpleString(source)``: C runs it, in ``__main__``."""
    b.need("import ctypes")
    return ["ctypes.pythonapi.PyRun_SimpleString(%s.encode())" % b.lit(code)]


RUNNERS = _family("run")


# ------------------------------------------------------------------------ when


def _guarded(b: Build, body: List[str]) -> List[str]:
    """``body`` run once, its exceptions swallowed."""
    flag = b.fresh("once")
    return ["import builtins as _b", "if not getattr(_b, %r, False):" % flag,
            "    setattr(_b, %r, True)" % flag, "    try:", *indent(body, 2),
            "    except Exception:", "        pass"]


@operator("when", "atexit", at_exit=True)
def when_atexit(b: Build, body: List[str]) -> List[str]:
    """A function registered with ``atexit``."""
    name = b.fresh("exit")
    return ["import atexit", "def %s():" % name, *indent(body), "atexit.register(%s)" % name]


@operator("when", "meta-path", needs=["later_import"])
def when_meta_path(b: Build, body: List[str]) -> List[str]:
    """A ``sys.meta_path`` finder that runs it at the next import."""
    name = b.fresh("Finder")
    return ["import sys", "class %s:" % name,
            "    def find_spec(self, name, path=None, target=None):",
            *indent(_guarded(b, body), 2), "        return None",
            "sys.meta_path.insert(0, %s())" % name]


@operator("when", "path-hook", needs=["later_import"])
def when_path_hook(b: Build, body: List[str]) -> List[str]:
    """A ``sys.path_hooks`` hook that runs it when a later import searches its entry."""
    name = b.fresh("hook")
    entry = b.path(b.case.prefix + "_hookdir")
    return ["import sys", "def %s(entry):" % name, "    if entry == %r:" % entry,
            *indent(_guarded(b, body), 2), "    raise ImportError(entry)",
            "sys.path_hooks.insert(0, %s)" % name, "sys.path.append(%r)" % entry]


@operator("when", "excepthook", thread=True)
def when_excepthook(b: Build, body: List[str]) -> List[str]:
    """``sys.excepthook``, called for a thread's exception by ``threading.excepthook``."""
    name, thread = b.fresh("hook"), b.fresh("th")
    return ["import sys, threading", "def %s(*args):" % name, *indent(_guarded(b, body)),
            "sys.excepthook = %s" % name,
            "threading.excepthook = lambda a: sys.excepthook(a.exc_type, a.exc_value, "
            "a.exc_traceback)",
            "%s = threading.Thread(target=lambda: 1 / 0)" % thread, "%s.start()" % thread,
            "%s.join()" % thread]


@operator("when", "unraisablehook")
def when_unraisable(b: Build, body: List[str]) -> List[str]:
    """``sys.unraisablehook``, called for an exception raised by a ``__del__``."""
    name, cls = b.fresh("hook"), b.fresh("Del")
    return ["import sys", "def %s(unraisable):" % name, *indent(_guarded(b, body)),
            "sys.unraisablehook = %s" % name, "class %s:" % cls,
            "    def __del__(self):", "        raise RuntimeError('oracle')", "%s()" % cls]


@operator("when", "del", at_exit=True)
def when_del(b: Build, body: List[str]) -> List[str]:
    """A ``__del__`` run when its object is collected (a reference cycle, at exit)."""
    cls, keep = b.fresh("Del"), b.fresh("keep")
    imports = [line for line in body if line.startswith(("import ", "from "))]
    rest = [line for line in body if line not in imports]
    return [*imports, "class %s:" % cls, "    def __del__(self):",
            *indent(_guarded(b, imports + rest), 2),
            "%s = %s()" % (keep, cls), "%s.cycle = %s" % (keep, keep), "del %s" % keep]


@operator("when", "thread", thread=True)
def when_thread(b: Build, body: List[str]) -> List[str]:
    """A function run in a ``threading.Thread`` (joined: no import races the start's)."""
    name, thread = b.fresh("thread"), b.fresh("th")
    return ["import threading", "def %s():" % name, *indent(body),
            "%s = threading.Thread(target=%s)" % (thread, name), "%s.start()" % thread,
            "%s.join()" % thread]


@operator("when", "codec-cookie", needs=["pth_entry"])
def when_codec(b: Build, body: List[str]) -> List[str]:
    """A codec search function, called when a later module's coding cookie names it."""
    name = b.fresh("search")
    codec = b.case.prefix.replace("_", "")
    zmod = b.case.prefix + "_z"
    b.case.files[zmod + ".py"] = ("# coding: %s\nVALUE = 1\n" % codec).encode()
    b.case.files[zmod + ".pth"] = ("import %s\n" % zmod).encode()
    b.case.startup.append(zmod + ".pth")
    return ["import codecs", "def %s(name):" % name, "    if name == %r:" % codec,
            *indent(_guarded(b, body), 2), "        return codecs.lookup('utf-8')",
            "    return None", "codecs.register(%s)" % name]


@operator("when", "module-getattr", needs=["getattr_line"])
def when_getattr(b: Build, body: List[str]) -> List[str]:
    """A module ``__getattr__``, called by the startup line's attribute access."""
    return ["def __getattr__(name):", "    if name == 'go':", *indent(_guarded(b, body), 2),
            "        return 1", "    raise AttributeError(name)"]


WHEN = _family("when")


# ------------------------------------------------------------------------ where


def _pth(b: Build, lines: Sequence[str], name: str = "") -> str:
    rel = (name or b.case.prefix) + ".pth"
    comment = ["# %s: oracle case" % b.case.id] if b.rng.random() < 0.3 else []
    b.case.files[rel] = render([*comment, *lines]).encode()
    b.case.startup.append(rel)
    return rel


def _module_line(b: Build, module: str) -> str:
    """The startup line that imports ``module`` (and triggers a ``__getattr__``)."""
    if "when:module-getattr" in b.case.operators:
        return "import %s; %s.go" % (module, module)
    return "import %s" % module


@operator("where", "pth-line", one_line=True)
def where_pth_line(b: Build, body: List[str]) -> Dict[str, str]:
    """The payload as one ``.pth`` import line."""
    line = one_line(body)
    assert line is not None
    if not line.startswith(("import ", "import\t")):
        line = "import sys; " + line
    b.case.entry = _pth(b, [line])
    return {}


@operator("where", "module", getattr_line=True)
def where_module(b: Build, body: List[str]) -> Dict[str, str]:
    """A module the ``.pth`` line imports."""
    module = b.case.prefix + "_m"
    b.case.entry = _pth(b, [_module_line(b, module)])
    return {module + ".py": render(body)}


@operator("where", "module-call")
def where_module_call(b: Build, body: List[str]) -> Dict[str, str]:
    """A function of a module, called by the ``.pth`` line."""
    module = b.case.prefix + "_m"
    b.case.entry = _pth(b, ["import %s; %s.run()" % (module, module)])
    return {module + ".py": render(["def run():", *indent(body)])}


@operator("where", "package-relative", getattr_line=True)
def where_package(b: Build, body: List[str]) -> Dict[str, str]:
    """A package whose ``__init__`` imports its submodule relatively."""
    package = b.case.prefix + "_p"
    b.case.entry = _pth(b, [_module_line(b, package)])
    b.case.files[package + "/__init__.py"] = b"from . import impl\n"
    return {package + "/impl.py": render(body)}


@operator("where", "module-chain", getattr_line=True)
def where_chain(b: Build, body: List[str]) -> Dict[str, str]:
    """A module that star-imports a second module holding the payload."""
    first, second = b.case.prefix + "_m", b.case.prefix + "_m2"
    b.case.entry = _pth(b, [_module_line(b, first)])
    b.case.files[first + ".py"] = ("from %s import *\n" % second).encode()
    return {second + ".py": render(body)}


@operator("where", "sitecustomize", pth_entry=False)
def where_sitecustomize(b: Build, body: List[str]) -> Dict[str, str]:
    """``sitecustomize``."""
    b.case.slots.append("sitecustomize")
    b.case.startup.append("<sitecustomize>")
    b.case.entry = "<sitecustomize>"
    return {"<sitecustomize>": render(body)}


@operator("where", "usercustomize", pth_entry=False, later_import=False)
def where_usercustomize(b: Build, body: List[str]) -> Dict[str, str]:
    """``usercustomize`` (the user site is enabled in the oracle's start)."""
    b.case.slots.append("usercustomize")
    b.case.startup.append("<usercustomize>")
    b.case.entry = "<usercustomize>"
    return {"<usercustomize>": render(body)}


@operator("where", "start-entry", min_version=(3, 15), pth_entry=False, later_import=False)
def where_start(b: Build, body: List[str]) -> Dict[str, str]:
    """A PEP 829 ``.start`` entry point (3.15+)."""
    module = b.case.prefix + "_m"
    rel = b.case.prefix + ".start"
    b.case.files[rel] = ("%s:main\n" % module).encode()
    b.case.startup.append(rel)
    b.case.entry = rel
    if b.rng.random() < 0.5:  # a twin .pth whose import line the .start turns off
        b.case.files[b.case.prefix + ".pth"] = ("import %s\n" % module).encode()
        b.case.startup.append(b.case.prefix + ".pth")
    return {module + ".py": render(["def main():", *indent(body)])}


@operator("where", "path-line", getattr_line=True)
def where_path_line(b: Build, body: List[str]) -> Dict[str, str]:
    """A module in a directory a relative ``.pth`` path line adds."""
    module = b.case.prefix + "_dm"
    b.case.entry = _pth(b, [b.data_dir(), _module_line(b, module)])
    return {"%s/%s.py" % (b.data_dir(), module): render(body)}


@operator("where", "namespace-portion", getattr_line=True)
def where_namespace(b: Build, body: List[str]) -> Dict[str, str]:
    """A namespace package's second portion, in a directory a path line adds."""
    package = b.case.prefix + "_ns"
    b.case.files["%s/a.py" % package] = b"VALUE = 1\n"
    b.case.entry = _pth(b, [b.data_dir(), _module_line(b, package + ".b")])
    return {"%s/%s/b.py" % (b.data_dir(), package): render(body)}


@operator("where", "stdlib-shadow")
def where_shadow(b: Build, body: List[str]) -> Dict[str, str]:
    """A standard library name imported after ``sys.path.insert(0, dir)``: dir's copy."""
    name = SHADOWABLE[int(b.case.id[1:]) % len(SHADOWABLE)]  # few cases per name
    b.case.slots.append("stdlib:" + name)
    imports, directory = b.line_lit(b.path(b.data_dir()))
    b.case.entry = _pth(b, ["import sys; %ssys.path.insert(0, %s); import %s"
                            % (imports, directory, name)])
    return {"%s/%s.py" % (b.data_dir(), name): render(body)}


def _site_dir_payload(b: Build, body: List[str], directory_rel: str) -> Dict[str, str]:
    """``directory_rel``'s own ``.pth`` runs the payload: as its line, or a module."""
    inner = "%s/%s_n.pth" % (directory_rel, b.case.prefix)
    b.case.nested.append(inner)
    line = one_line(body)
    if line is not None and b.rng.random() < 0.5:
        if not line.startswith("import"):
            line = "import sys; " + line
        b.case.files[inner] = (line + "\n").encode()
        return {}
    module = b.case.prefix + "_nm"
    b.case.files[inner] = ("import %s\n" % module).encode()
    return {"%s/%s.py" % (directory_rel, module): render(body)}


@operator("where", "addsitedir")
def where_addsitedir(b: Build, body: List[str]) -> Dict[str, str]:
    """``site.addsitedir`` of a (spelled) directory whose own ``.pth`` runs it."""
    directory = b.data_dir()
    imports, expr = b.line_lit(b.path(directory))
    b.case.entry = _pth(b, ["import site; %ssite.addsitedir(%s)" % (imports, expr)])
    return _site_dir_payload(b, body, directory)


@operator("where", "nested-pth")
def where_nested(b: Build, body: List[str]) -> Dict[str, str]:
    """``.pth`` files nested two ``site.addsitedir`` calls deep."""
    first, second = b.data_dir(), b.data_dir() + "/deeper"
    b.case.entry = _pth(b, ["import site; site.addsitedir(%r)" % b.path(first)])
    middle = "%s/%s_o.pth" % (first, b.case.prefix)
    b.case.nested.append(middle)
    imports, expr = b.line_lit(b.path(second))
    b.case.files[middle] = ("import site; %ssite.addsitedir(%s)\n" % (imports, expr)).encode()
    return _site_dir_payload(b, body, second)


WHERE = _family("where")

#: What a deferred operator needs of where it lives (``when:*``'s ``needs``), and the
#: default of each ``where:*``: a chain that starts from a top ``.pth`` (a later
#: ``.pth`` triggers it), a startup line that imports the module (and can touch its
#: attribute), an import that searches the whole path after it (not so after
#: ``usercustomize``, nor after 3.15's entry points on Debian, whose ``sitecustomize`` is
#: found first in the standard library).
WHERE_DEFAULTS = {"pth_entry": True, "getattr_line": False, "later_import": True}


# ------------------------------------------------------------------------ encodings, bytecode

HARMLESS = '"""A harmless module."""\nVALUE = 1\n'


@operator("enc", "bom")
def enc_bom(source: str) -> bytes:
    """A UTF-8 byte order mark before the source."""
    return b"\xef\xbb\xbf" + source.encode()


@operator("enc", "latin-1")
def enc_latin1(source: str) -> bytes:
    """``# -*- coding: latin-1 -*-`` with a byte that is not UTF-8."""
    return b"# -*- coding: latin-1 -*-\n_NOTE = 'caf\xe9'\n" + source.encode()


@operator("enc", "cp1252")
def enc_cp1252(source: str) -> bytes:
    """``# coding: cp1252`` with a byte that is not UTF-8 (the euro sign)."""
    return b"# coding: cp1252\n_NOTE = '\x80 5'\n" + source.encode()


@operator("enc", "utf-7-hidden")
def enc_utf7(source: str) -> bytes:
    """``# coding: utf-7``: the code hides in a comment line as ``+AAo-`` line breaks."""
    hidden = source.replace("+", "+-").replace("\n", "+AAo-")
    return ("# coding: utf-7\n# a harmless module+AAo-" + hidden + "\n").encode("ascii")


ENCODINGS = _family("enc")


def _pyc(b: Build, kind: str, rel: str, code: str, optimize: int = 0) -> None:
    stem = rel.rsplit("/", 1)
    directory, name = (stem[0] + "/", stem[1]) if len(stem) == 2 else ("", stem[0])
    module = name[:-3]
    tag = "cpython-%d%d" % b.where.version
    suffix = {0: ".pyc", 1: ".opt-1.pyc", 2: ".opt-2.pyc"}[optimize]
    if kind == "sourceless":
        del b.case.files[rel]
        b.case.pycs.append(Pyc("sourceless", directory + module + ".pyc", code, b.path(rel)))
        return
    b.case.files[rel] = HARMLESS.encode()
    pyc = "%s__pycache__/%s.%s%s" % (directory, module, tag, suffix)
    b.case.pycs.append(Pyc(kind, pyc, code, b.path(rel), source=rel, optimize=optimize))
    b.case.env["PYTHONOPTIMIZE"] = str(optimize) if optimize else ""  # "": not set


@operator("pyc", "timestamp")
def pyc_timestamp(b: Build, rel: str, code: str) -> None:
    """A timestamp ``.pyc`` (the source's mtime and size) holding the payload."""
    _pyc(b, "timestamp", rel, code)


@operator("pyc", "opt-1")
def pyc_opt1(b: Build, rel: str, code: str) -> None:
    """An ``.opt-1.pyc`` holding the payload; the start has ``PYTHONOPTIMIZE=1``."""
    _pyc(b, "timestamp", rel, code, 1)


@operator("pyc", "opt-2")
def pyc_opt2(b: Build, rel: str, code: str) -> None:
    """An ``.opt-2.pyc`` holding the payload; the start has ``PYTHONOPTIMIZE=2``."""
    _pyc(b, "timestamp", rel, code, 2)


@operator("pyc", "unchecked-hash")
def pyc_unchecked(b: Build, rel: str, code: str) -> None:
    """An unchecked hash-based ``.pyc`` (PEP 552): the source is never looked at."""
    _pyc(b, "unchecked", rel, code)


@operator("pyc", "checked-hash")
def pyc_checked(b: Build, rel: str, code: str) -> None:
    """A checked hash-based ``.pyc`` whose hash is the harmless source's."""
    _pyc(b, "checked", rel, code)


@operator("pyc", "sourceless")
def pyc_sourceless(b: Build, rel: str, code: str) -> None:
    """A sourceless ``module.pyc`` beside where the source would be."""
    _pyc(b, "sourceless", rel, code)


PYCS = _family("pyc")


@operator("own", "distribution")
def own_distribution(b: Build) -> None:
    """The case's files in a distribution whose ``RECORD`` verifies them (``make_dist``)."""
    b.case.owned = True  # the planter writes the dist-info (harness.oracle)


# ------------------------------------------------------------------------ controls


@operator("control", "path-line")
def control_path_line(b: Build) -> str:
    """A ``.pth`` of comments and a relative path line: no code runs."""
    b.case.files["%s/%s_x.py" % (b.data_dir(), b.case.prefix)] = b"VALUE = 1\n"
    b.case.entry = _pth(b, ["# a directory of the application", b.data_dir()])
    return "info"


@operator("control", "constants-module")
def control_constants(b: Build) -> str:
    """A module of constants, functions and a class, imported by the ``.pth`` line."""
    module = b.case.prefix + "_m"
    b.case.files[module + ".py"] = render([
        '"""Settings of an application."""', "import os", "import sys", "",
        "NAME = 'oracle'", "LIMITS = {'a': 1, 'b': (2, 3)}", "",
        "def double(x):", "    return 2 * x", "",
        "class Settings:", "    debug = False", "",
        "    def describe(self):", "        return '%s %s' % (NAME, self.debug)", "",
        "VALUE = double(len(LIMITS))"]).encode()
    b.case.entry = _pth(b, ["import %s" % module])
    return "medium"


@operator("control", "env-gated")
def control_env_gated(b: Build) -> str:
    """An import gated on an environment variable that is not set (coverage's style)."""
    module = b.case.prefix + "_m"
    b.case.files[module + ".py"] = b"VALUE = 1\n"
    b.case.entry = _pth(b, ["import os; %r in os.environ and __import__(%r)"
                            % ("ORACLE_NEVER_SET_" + b.case.id.upper(), module)])
    return "medium"


@operator("control", "path-append")
def control_path_append(b: Build) -> str:
    """``sys.path.append`` of a literal directory that exists."""
    b.case.files["%s/%s_x.py" % (b.data_dir(), b.case.prefix)] = b"VALUE = 1\n"
    b.case.entry = _pth(b, ["import sys; sys.path.append(%r)" % b.path(b.data_dir())])
    return "medium"


@operator("control", "package")
def control_package(b: Build) -> str:
    """A package whose ``__init__`` imports a sibling module relatively."""
    package = b.case.prefix + "_p"
    b.case.files[package + "/__init__.py"] = b"from .version import VERSION\n"
    b.case.files[package + "/version.py"] = b"VERSION = (1, 2, 3)\n"
    b.case.entry = _pth(b, ["import %s" % package])
    return "medium"


@operator("control", "stdlib-only")
def control_stdlib(b: Build) -> str:
    """Imports of the standard library and constant work only."""
    module = b.case.prefix + "_m"
    b.case.files[module + ".py"] = render([
        "import os.path", "import re", "PATTERN = re.compile('[a-z]+')",
        "HOME = os.path.join('/nonexistent', 'oracle')"]).encode()
    b.case.entry = _pth(b, ["import %s" % module])
    return "medium"


CONTROLS = _family("control")


# ------------------------------------------------------------------------ composition


def _allowed(function: Callable, sink_name: str, sink: Sink) -> bool:
    """Whether an operator (its ``meta``) may be applied to this sink."""
    meta = getattr(function, "meta", {})
    refused = (("sinks" in meta and sink_name not in meta["sinks"])
               or (meta.get("builtins") and sink.module != "builtins")
               or ("nargs" in meta and sink.nargs != meta["nargs"])
               or (meta.get("tail") is False and sink.tail)
               or (meta.get("at_exit") and not sink.at_exit)
               or (meta.get("thread") and not sink.threads))
    return not refused


def _versions(b: Build, function: Callable) -> None:
    meta = getattr(function, "meta", {})
    if "min_version" in meta:
        b.case.min_version = max(b.case.min_version, meta["min_version"])


def _payload(b: Build) -> None:
    rng = b.rng
    sinks = _family("sink")
    sink_name = rng.choice(sorted(sinks))
    b.use("sink:" + sink_name)
    b.case.sink = sink_name
    sink = sinks[sink_name](b)
    if rng.random() < 0.55:
        b.strings = rng.sample(sorted(STRINGS), rng.randint(1, 2))
        for name in b.strings:
            b.use("str:" + name)

    # How the callable is reached, and called.
    stmts: List[str] = []
    calls = _family("call")
    special = [n for n in ("dictconfig-factory", "pickle-reduce") if _allowed(
        calls[n], sink_name, sink)]
    if special and rng.random() < 0.3:
        name = rng.choice(special)
        b.use("call:" + name)
        stmts += calls[name](b, sink)
    elif rng.random() < 0.1:
        module = OPERATORS["reach:" + rng.choice(MODULE_REACH)]
        b.use(module.operator)
        b.use("call:methodcaller")
        stmts += call_methodcaller(b, sink, module(b, sink))
    else:
        direct = [n for n in DIRECT_REACH if _allowed(OPERATORS["reach:" + n], sink_name, sink)]
        if direct and rng.random() < 0.35:
            function = OPERATORS["reach:" + rng.choice(direct)]
            callee = function(b, sink)
        else:
            module = OPERATORS["reach:" + rng.choice(MODULE_REACH)]
            b.use(module.operator)
            function = OPERATORS["reach:" + rng.choice(ATTR_REACH)]
            callee = function(b, sink, module(b, sink))
        b.use(function.operator)
        _versions(b, function)
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            rebind = OPERATORS["reach:" + rng.choice(REBIND)]
            b.use(rebind.operator)
            callee = rebind(b, callee, stmts)
        forms = [n for n in ("direct", "direct", "partial", "operator-call", "map",
                             "atexit-callable", "thread-callable")
                 if _allowed(calls[n], sink_name, sink)]
        form = calls[rng.choice(forms)]
        b.use(form.operator)
        _versions(b, form)
        stmts += form(b, sink, callee)
    body = [*b.imports, *stmts]

    # The standard library's code runners around it.
    for depth in range(2):
        if rng.random() >= (0.45 if depth == 0 else 0.25):
            break
        name = rng.choice(sorted(RUNNERS))
        if "run:" + name in b.case.operators:
            break
        runner = RUNNERS[name]
        b.use(runner.operator)
        _versions(b, runner)
        b.imports = []
        stmts = runner(b, render(body))
        body = [*b.imports, *stmts]

    # Deferred.
    needs: List[str] = []
    if rng.random() < 0.22:
        name = rng.choice([n for n in sorted(WHEN) if _allowed(WHEN[n], sink_name, sink)])
        needs = WHEN[name].meta.get("needs", [])
        b.use("when:" + name)
        body = WHEN[name](b, body)
    b.case.source = render(body)

    # Where it lives.
    line = one_line(body)
    places = [n for n, f in sorted(WHERE.items())
              if (line is not None or not f.meta.get("one_line"))
              and all(f.meta.get(need, WHERE_DEFAULTS[need]) for need in needs)]
    weights = [{"module": 12, "pth-line": 12, "sitecustomize": 0.3, "usercustomize": 0.5}.get(
        n, 2) for n in places]
    where = WHERE[rng.choices(places, weights)[0]]
    b.use(where.operator)
    _versions(b, where)
    held = where(b, body)

    # The module that holds it: its encoding, or bytecode in its place.
    for rel, text in held.items():
        if rel.startswith("<") or b.rng.random() >= 0.3:
            b.case.files[rel] = text.encode()
            continue
        if rng.random() < 0.45:
            name = rng.choice(sorted(ENCODINGS))
            b.use("enc:" + name)
            b.case.files[rel] = ENCODINGS[name](text)
        else:
            b.case.files[rel] = text.encode()
            name = rng.choices(sorted(PYCS), [1, 1, 1, 2, 2, 2])[0]
            b.use("pyc:" + name)
            PYCS[name](b, rel, text)


def make_case(index: int, where: Where, run_seed: int) -> Case:
    """Case number ``index`` of the run seeded ``run_seed``, rendered for ``where``: one
    random source per case, so a case does not depend on the cases before it."""
    rng = random.Random("%d:%d" % (run_seed, index))
    case = Case(id="c%03d" % index, kind="payload", operators=[])
    case.token = case.prefix
    b = Build(case, rng, where)
    if rng.random() < 0.12:
        case.kind = "control"
        name = rng.choice(sorted(CONTROLS))
        b.use("control:" + name)
        case.expected = CONTROLS[name](b)
        case.source = "\n".join(t.decode("utf-8", "replace") for t in case.files.values())
    else:
        _payload(b)
    if rng.random() < 0.3 and not any(s in case.slots for s in ("sitecustomize",
                                                                 "usercustomize")):
        b.use("own:distribution")
        own_distribution(b)
        if case.kind == "control" and case.expected == "medium":
            case.expected = "info"
    return case


def generate(where: Where, run_seed: Optional[int] = None, count: int = COUNT) -> List[Case]:
    """The run's cases for ``where`` (those its version accepts)."""
    run_seed = seed() if run_seed is None else run_seed
    cases = [make_case(i, where, run_seed) for i in range(count)]
    return [c for c in cases if c.accepts(where.version)]


def operator_docs() -> Dict[str, str]:
    """Each operator's one-line docstring, by name."""
    return {name: (f.__doc__ or "").strip() for name, f in sorted(OPERATORS.items())}


__all__ = ["COUNT", "Case", "ENV_SEED", "OPERATORS", "Pyc", "SEED", "SEVERITIES", "Where",
           "generate", "make_case", "operator_docs", "seed"]
