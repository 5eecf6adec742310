"""What a start runs of a module is what ``check`` reads: its source decoded as the
compiler decodes it, every bytecode file it may run instead compared with what the
compiler makes of the source, and every file opened by the one reader.

Planted in the local site directory of every target (the hermetic CPythons 3.8-3.13,
Debian 12's python in a namespace, the roots' 3.13, 3.14 and 3.15), each module imported
by a ``.pth`` of a wheel-like distribution (a ``RECORD`` that verifies), each payload
harmless when run (its dangerous call sits in a function never called); one ``check
--json`` (with ``PYTHONPYCACHEPREFIX`` in its environment, as data):

- a module with a UTF-8 BOM, one declaring ``latin-1``, ``cp1252`` (a vim modeline) and
  ``raw_unicode_escape`` (a ``\\u000a`` escape makes a comment's text code), and one whose
  declaration sits on the second line after a lone ``\\r`` (the compiler reads it there;
  ``importlib.util.decode_source`` does not): each ``dangerous-startup-code`` naming
  ``os.system`` in that module, where a UTF-8 reading saw nothing;
- a module declaring an encoding nobody has: ``unread-startup-code``;
- ``.opt-1.pyc``, ``.opt-2.pyc``, an unchecked-hash ``.pyc`` and one under
  ``PYTHONPYCACHEPREFIX``, each valid for its source and differing from what the
  compiler makes of it in one instruction only (``+`` for ``-``: the same names and
  constants): ``unread-startup-code``, high, naming the bytecode file;
- the harmless counterparts read without an alarm: a BOM, a ``latin-1`` string, and a
  module whose bytecode the target's own ``py_compile`` wrote at each optimisation level
  (timestamp, checked and unchecked hash): no ``unread``, no capability;
- on the hermetic targets a ``sitecustomize`` declaring ``latin-1``, on 3.15 a ``.start``
  entry point's module with a BOM: read, their payload named.

What ``py_compile`` writes differs from an in-memory ``compile`` in no field of its code
(file name and line numbers included) on any target (its marshalled bytes may: 3.8-3.10,
3.15).

Then a FIFO planted as a module's ``__pycache__`` bytecode (a start importing it waits on
it): ``check`` and ``status`` answer within seconds, ``check`` names it.  Without an
interpreter: no file is opened in ``audit``, ``facts``, ``probe``, ``detect`` or
``cli/deployed.py`` but by the one reader (``pathfacts.open_regular``, under
``facts.reader``), and the
reader's rules on bytes (``modules.source_text``, ``modules.compiled_alike``).
"""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import sitewarden
from harness.dists import make_dist
from harness.guarded import NamespaceGuarded
from sitewarden.audit import modules

NEVER = b"import os\n\ndef _never():\n    os.system('true')\n"
SUB = b"def f(a, b):\n    return a - b\n"
SWAPPED = "def f(a, b):\n    return a + b\n"

#: module -> its source bytes: each ``dangerous-startup-code`` (os.system in it).
HIDDEN = {
    "swr_ir_bom": b"\xef\xbb\xbf" + NEVER,
    "swr_ir_latin": b"# -*- coding: latin-1 -*-\ncaf\xe9 = 1\n" + NEVER,
    "swr_ir_cp1252": b"# vim: set fileencoding=cp1252 :\nmen\x9a = 1\n" + NEVER,
    "swr_ir_rue": b"# coding: raw_unicode_escape\n# a comment\\u000aimport os\\u000a"
                  b"def _never():\\u000a    os.system('true')\n",
    "swr_ir_crrue": b"\r# coding: raw_unicode_escape\n# a comment\\u000aimport os\\u000a"
                    b"def _never():\\u000a    os.system('true')\n",
}
#: module -> source bytes read without an alarm.
HARMLESS = {"swr_ir_okbom": b"\xef\xbb\xbfX = 1\n",
            "swr_ir_oklatin": b"# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\n",
            "swr_ir_pycok": b'def f(a, b):\n    """doc"""\n    assert a\n    return a - b\n'}
#: module -> (optimisation level, header, under PYTHONPYCACHEPREFIX): bytecode of SWAPPED.
SWAPS = {"swr_ir_opt1": (1, "timestamp", False), "swr_ir_opt2": (2, "timestamp", False),
         "swr_ir_unchecked": (0, "unchecked", False), "swr_ir_prefix": (0, "timestamp", True)}

#: Run in the target (``-I -S``): ``[[source, level, header, text or None, prefix or
#: None]]`` on stdin; prints ``{bytecode path: hex}``.  A text: compiled in memory with
#: the header the import system checks; None: the source, written by ``py_compile``.
PYCS = r"""
import importlib.util as u, json, marshal, os, py_compile, sys, tempfile
out = {}
modes = {'timestamp': py_compile.PycInvalidationMode.TIMESTAMP,
         'checked': py_compile.PycInvalidationMode.CHECKED_HASH,
         'unchecked': py_compile.PycInvalidationMode.UNCHECKED_HASH}
for src, level, header, text, prefix in json.loads(sys.stdin.read()):
    sys.pycache_prefix = prefix
    path = u.cache_from_source(src, optimization=level or '')
    sys.pycache_prefix = None
    data = open(src, 'rb').read()
    if text is None:
        tmp = os.path.join(tempfile.mkdtemp(), 'x.pyc')
        py_compile.compile(src, cfile=tmp, optimize=level, invalidation_mode=modes[header],
                           doraise=True)
        out[path] = open(tmp, 'rb').read().hex()
        continue
    st = os.stat(src)
    if header == 'timestamp':
        head = bytes(4) + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, 'little') + (
            st.st_size & 0xFFFFFFFF).to_bytes(4, 'little')
    else:
        head = (1 if header == 'unchecked' else 3).to_bytes(4, 'little') + u.source_hash(data)
    code = compile(text, src, 'exec', dont_inherit=True, optimize=level)
    out[path] = (u.MAGIC_NUMBER + head + marshal.dumps(code)).hex()
print(json.dumps(out))
"""


#: Run in the target (``-I -S``) on a source path: what differs between the bytecode
#: ``py_compile`` writes at each level and each invalidation mode and an in-memory
#: ``compile`` of the same bytes under the same file name: ``[marshalled bytes equal,
#: [fields that differ, nested code included]]`` for each.
SAME = r"""
import json, marshal, os, py_compile, sys, tempfile
src = sys.argv[1]
data = open(src, 'rb').read()
def walk(c):
    yield c
    for k in c.co_consts:
        if type(k) is type(c):
            yield from walk(k)
out = []
for mode in py_compile.PycInvalidationMode:
    for level in (0, 1, 2):
        tmp = os.path.join(tempfile.mkdtemp(), 'x.pyc')
        py_compile.compile(src, cfile=tmp, optimize=level, invalidation_mode=mode, doraise=True)
        body = open(tmp, 'rb').read()[16:]
        code = compile(data, src, 'exec', dont_inherit=True, optimize=level)
        fields = sorted({n for a, b in zip(walk(marshal.loads(body)), walk(code))
                         for n in dir(b) if n.startswith('co_') and n != 'co_lnotab'
                         and not callable(getattr(b, n)) and getattr(a, n) != getattr(b, n)})
        out.append([marshal.dumps(code) == body, fields])
print(json.dumps(out))
"""


def _report(t, *args: str, env=None) -> dict:
    proc = t.cli("check", "--python", t.executable, "--json", *args, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _about(report: dict, path: str) -> dict:
    return {f["kind"]: f for f in report["findings"] if f.get("file") == path}


def _plant(t, prefix: Path) -> dict:
    """Every module, its wheel-like ``.pth`` and bytecode; ``{module: .pth path}``."""
    local = t.local_dir
    sources = {**HIDDEN, **HARMLESS, "swr_ir_bogus": b"# coding: swr-no-such-codec\nX = 1\n"}
    sources.update((name, SUB) for name in SWAPS)

    def build(stage: Path) -> None:
        for name, data in sources.items():
            make_dist(stage, name.replace("_", "-"), "1.0",
                      {name + ".py": data, name + ".pth": "import %s\n" % name},
                      installer="pip")
        if not isinstance(t, NamespaceGuarded):  # Debian's own sitecustomize comes first
            (stage / "sitecustomize.py").write_bytes(HIDDEN["swr_ir_latin"])
        if t.version[:2] >= (3, 15):
            (stage / "swr_ir_ep.py").write_bytes(HIDDEN["swr_ir_bom"] + b"\ndef main():\n"
                                                 b"    pass\n")
            (stage / "swr-ir-ep.start").write_text("swr_ir_ep:main\n")

    t.copy_in(build, local)
    wanted = [[str(local / (name + ".py")), level, header, SWAPPED, str(prefix) if pre else None]
              for name, (level, header, pre) in SWAPS.items()]
    ok = str(local / "swr_ir_pycok.py")
    wanted += [[ok, 0, "checked", None, None], [ok, 1, "timestamp", None, None],
               [ok, 2, "unchecked", None, None]]
    proc = t.python("-I", "-S", "-c", PYCS, input=json.dumps(wanted))
    assert proc.returncode == 0, proc.stderr
    pycs = json.loads(proc.stdout)
    dirs = sorted({str(Path(p).parent) for p in pycs})
    t.root("import os, sys\nfor d in sys.argv[1:]: os.makedirs(d, exist_ok=True)", *dirs)
    for path, data in pycs.items():
        t.put(Path(path), data=bytes.fromhex(data))
    return {name: str(local / (name + ".pth")) for name in sources}


def test_modules_are_read_as_the_import_system_reads_them(bare_target):
    t = bare_target
    prefix = t.tmp / "swr-ir-pycache-prefix"
    pths = _plant(t, prefix)
    report = _report(t, env={"PYTHONPYCACHEPREFIX": str(prefix)})
    for name in HIDDEN:
        found = _about(report, pths[name])
        danger = found.get("dangerous-startup-code")
        assert danger and danger["severity"] == "high", (name, found)
        assert "starts-processes: os.system (in %s)" % name in danger["evidence"], danger
        assert "unread-startup-code" not in found, (name, found)
    for name, (level, _header, _pre) in SWAPS.items():
        unread = _about(report, pths[name]).get("unread-startup-code")
        assert unread and unread["severity"] == "high", (name, _about(report, pths[name]))
        (item,) = unread["unread"]
        tail = ".opt-%d.pyc" % level if level else ".pyc"
        pyc = item.partition("its bytecode (")[2].partition(")")[0]
        assert "is not its source's" in item and pyc.endswith(tail), item
        assert pyc.startswith(str(prefix)) == SWAPS[name][2], item
    bogus = _about(report, pths["swr_ir_bogus"]).get("unread-startup-code")
    assert bogus and "cannot be decoded" in bogus["unread"][0], bogus
    files = {f["path"]: f for f in report["startup"]["files"]}
    for name in HARMLESS:
        found = _about(report, pths[name])
        assert set(found) == {"distribution-startup-code"}, (name, found)
        (line,) = [x for x in files[pths[name]]["lines"] if x["kind"] == "import"]
        assert not line.get("unread") and not line.get("capabilities"), (name, line)
    custom = str(t.local_dir / "sitecustomize.py")
    if custom in files:
        danger = _about(report, custom).get("dangerous-startup-code")
        assert danger and "starts-processes: os.system" in danger["evidence"], \
            _about(report, custom)
    start = str(t.local_dir / "swr-ir-ep.start")
    if t.version[:2] >= (3, 15):
        danger = _about(report, start).get("dangerous-startup-code")
        assert danger and "starts-processes: os.system (in swr_ir_ep)" in \
            danger["evidence"], _about(report, start)

    again = _report(t, env={"PYTHONPYCACHEPREFIX": str(prefix)})  # the verdicts kept
    assert again["findings"] == report["findings"]

    # What py_compile writes is the in-memory compile's code, field for field, file name
    # and line numbers included.  Not always byte for byte: marshal's reference flags
    # follow reference counts (3.8-3.10 and 3.15 differ there), hence modules._equal.
    proc = t.python("-I", "-S", "-c", SAME, str(t.local_dir / "swr_ir_pycok.py"))
    assert proc.returncode == 0, proc.stderr
    same = json.loads(proc.stdout)
    assert len(same) == 9 and all(fields == [] for _equal, fields in same), same


def _timed(t, *args: str):
    began = time.monotonic()
    proc = t.run([*t.cli_argv, *args, "--python", t.executable], timeout=90)
    took = time.monotonic() - began
    assert took < 45, "%s took %.1f s" % (args[0], took)
    assert proc.returncode in (0, 1), (args, proc.returncode, proc.stderr)
    return proc


def test_a_fifo_in_place_of_bytecode_is_named_never_waited_on(bare_target):
    t = bare_target
    local = t.local_dir

    def build(stage: Path) -> None:
        make_dist(stage, "swr-ir-fifo", "1.0", {"swr_ir_fifo.py": "X = 1\n",
                                                "swr_ir_fifo.pth": "import swr_ir_fifo\n"},
                  installer="pip")

    t.copy_in(build, local)
    proc = t.python("-I", "-S", "-c", "import importlib.util as u, sys; "
                    "print(u.cache_from_source(sys.argv[1]))", str(local / "swr_ir_fifo.py"))
    pyc = proc.stdout.strip()
    t.root("import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)", pyc)
    t.put(Path(pyc), kind="fifo")  # from here on, a start of the target hangs
    report = json.loads(_timed(t, "check", "--json").stdout)
    unread = _about(report, str(local / "swr_ir_fifo.pth")).get("unread-startup-code")
    assert unread and unread["severity"] == "high", report["findings"]
    assert any(pyc in u and "fifo" in u for u in unread["unread"]), unread
    text = _timed(t, "check").stdout
    assert "fifo" in text and "swr_ir_fifo" in text, text
    _timed(t, "status")


# ---------------------------------------------------------------- without an interpreter

PACKAGE = Path(sitewarden.__file__).resolve().parent
#: Where a file may be opened by name: the private cache's writer (its own files, written
#: beside and renamed).  Everything else goes through ``pathfacts.open_regular``.
OPENERS = {("facts/private_cache.py", "write")}
_MODULES = {"os", "io", "_io", "posix", "codecs", "tokenize", "pathlib", "builtins"}
_NAMES = {"open", "open_code", "FileIO", "read_text", "read_bytes", "write_text",
          "write_bytes"}
_READERS = {"reader", "pathfacts", "private_cache"}  # the one reader's own functions


def _opens(path: Path):
    """``(function, line)`` of each call in ``path`` that opens a file by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else function
            if isinstance(child, ast.Call):
                f = child.func
                if isinstance(f, ast.Name) and f.id in ("open", "FileIO"):
                    found.append((function, child.lineno))
                elif isinstance(f, ast.Attribute) and f.attr in _NAMES and not (
                        isinstance(f.value, ast.Name) and f.value.id in _READERS) and (
                        not isinstance(f.value, ast.Name) or f.value.id in _MODULES
                        or f.attr not in ("open", "open_code", "FileIO")):
                    found.append((function, child.lineno))  # os.open, io.open, a Path's
            visit(child, inner)

    visit(tree, None)
    return found


def test_no_file_is_opened_but_by_the_one_reader():
    paths = [p for d in ("audit", "facts", "probe", "detect") for p in sorted((PACKAGE / d).rglob(
        "*.py"))] + [PACKAGE / "cli" / "deployed.py"]
    stray = ["%s:%d (in %s)" % (p.relative_to(PACKAGE), line, function)
             for p in paths for function, line in _opens(p)
             if (str(p.relative_to(PACKAGE)), function) not in OPENERS]
    assert not stray, "files opened past the one reader (pathfacts.open_regular):\n" + \
        "\n".join(stray)
    assert [f for f, _n in _opens(PACKAGE / "pathfacts.py")] == ["open_regular"]
    assert "O_NONBLOCK" in (PACKAGE / "pathfacts.py").read_text()


def test_the_reader_rules_on_bytes(tmp_path):
    """The source's text as the compiler decodes it; bytecode judged against it."""
    text = modules.source_text
    assert text(b"\xef\xbb\xbfX = 1\r\n") == ("X = 1\n", None)
    assert text(b"# -*- coding: latin-1 -*-\nN = '\xe9'\n")[0].endswith("N = '\xe9'\n")
    rue = HIDDEN["swr_ir_crrue"]
    assert "import os" in text(rue)[0].splitlines()  # the compiler's reading, not decode_source's
    assert text(b"x = '\xe9'\n")[0] is None and "cannot be decoded" in text(b"x = '\xe9'\n")[1]
    assert not modules._may_declare(b"import os\n" * 3 + b"# coding: latin-1\n")
    assert modules._may_declare(b"#!/usr/bin/python\n# vim: fileencoding=cp1252\n")
    import marshal

    assert modules.compiled_alike(SUB, marshal.dumps(compile(SUB, "m.py", "exec",
                                                             dont_inherit=True)), 0, "m.py")

    def dumped(source, name="m.py"):  # this module's __future__ import not inherited
        return marshal.dumps(compile(source, name, "exec", dont_inherit=True))

    assert modules.compiled_alike(SUB, dumped(SUB, "elsewhere.py"), 0, "m.py")  # the file name
    assert modules.compiled_alike(SUB, dumped(b"\n\n" + SUB), 0, "m.py")  # the lines
    assert not modules.compiled_alike(SUB, dumped(SWAPPED), 0, "m.py")  # an instruction
    assert not modules.compiled_alike(SUB, marshal.dumps(compile(SUB, "m.py", "exec")), 0, "m.py")
    assert not modules.compiled_alike(b"X = 0.0\n", dumped("X = -0.0"))
    assert not modules.compiled_alike(b"X = 1\n", dumped("X = True"))
    assert not modules.compiled_alike(b"X = 1\n", b"garbage")
