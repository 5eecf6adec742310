"""What runs is what is read; what cannot be read is a finding, never a pass.

``check`` follows every import the code a start runs makes (``audit.analysis``,
``audit.modules``): absolute, relative, ``from pkg import submodule``, constant
``__import__``/``importlib.import_module``, recursively, to the file the import system would
load, and reads the bytecode a start would run in place of a source (compared with it).
Planted at once in a guarded target (Debian 12's python, the roots' 3.13, 3.14, 3.15, and a
hermetic CPython or two), each payload harmless when run (its dangerous call sits in a
function never called):

- a payload reached through a relative import, ``from pkg import impl``, a constant
  ``__import__``, a constant ``importlib.import_module``, an ``exec`` literal's import, and
  a package beside the ``.pth`` whose submodules import each other three levels down:
  ``dangerous-startup-code``, high, the evidence naming the module;
- a sourceless module, a zipped module, an oversized module, a module past the count limit,
  one past the depth limit, a ``__path__`` change and an extension module:
  ``unread-startup-code`` naming each;
- ``exec(open(p).read())``, ``pickle.loads``, ``getattr(builtins, name)``, ctypes:
  ``runs-hidden-code``, high;
- on Debian's pythons: the stock start reads clean, then the bytecode of ``_distutils_hack``
  (which Debian's ``distutils-precedence.pth`` imports) replaced by a payload whose header
  is valid for the source it keeps: ``unread-startup-code``, high (in the test's overlay).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from harness.guarded import NamespaceGuarded
from harness.spread import ROTATED, spread, target_params
from sitewarden.facts.text import unwrap_lines

NEVER = "def _never():\n    import os\n    os.system('true')\n"
HACK = "/usr/lib/python3/dist-packages/_distutils_hack/__init__.py"
DP = "/usr/lib/python3/dist-packages/distutils-precedence.pth"

#: A module's bytecode with a header valid for ``sys.argv[1]`` (its mtime and size), from
#: the code on stdin; the target's own magic number.  Printed as hex, then the pyc's path.
PYC = r"""
import importlib.util as u, marshal, os, sys
src = sys.argv[1]
st = os.stat(src) if os.path.exists(src) else None
code = compile(sys.stdin.read(), src, 'exec', dont_inherit=True)
head = u.MAGIC_NUMBER + bytes(4) + ((int(st.st_mtime) if st else 0) & 0xFFFFFFFF).to_bytes(
    4, 'little') + ((st.st_size if st else 0) & 0xFFFFFFFF).to_bytes(4, 'little')
print((head + marshal.dumps(code)).hex())
print(u.cache_from_source(src) if st else '')
import importlib.machinery as m
print(m.EXTENSION_SUFFIXES[0])
"""

#: name -> (the module the .pth imports: {relative path: text}); each must be high.
FOLLOWED = {
    "rel": {"swr_rd_rel/__init__.py": "from . import impl\n", "swr_rd_rel/impl.py": NEVER},
    "from": {"swr_rd_from.py": "from swr_rd_frompkg import impl\n",
             "swr_rd_frompkg/__init__.py": "", "swr_rd_frompkg/impl.py": NEVER},
    "dunder": {"swr_rd_dunder.py": "__import__('swr_rd_dunder_impl')\n",
               "swr_rd_dunder_impl.py": NEVER},
    "imod": {"swr_rd_imod.py": "import importlib\nimportlib.import_module('swr_rd_imod_impl')\n",
             "swr_rd_imod_impl.py": NEVER},
    "beside": {"swr_rd_beside/__init__.py": "from swr_rd_beside import helper\n",
               "swr_rd_beside/helper.py": "from .deep import more\n",
               "swr_rd_beside/deep/__init__.py": "",
               "swr_rd_beside/deep/more.py": "import swr_rd_beside.deep.payload\n",
               "swr_rd_beside/deep/payload.py": NEVER},
    "execlit": {"swr_rd_execlit.py": NEVER},
}
#: The .pth lines that are not ``import <the first module>``.
LINES = {"execlit": "import sys; exec('import swr_rd_execlit')\n"}
#: name -> (module text, evidence wanted): runs-hidden-code, high.
HIDDEN = {
    "execfile": ("def _never(p):\n    exec(open(p).read())\n", "exec of a value"),
    "pickle": ("import pickle\n\ndef _never(d):\n    return pickle.loads(d)\n", "pickle.loads"),
    "builtins": ("import builtins\n\ndef _never(n):\n    return getattr(builtins, n)\n",
                 "getattr(builtins, <computed name>)"),
    "ctypes": ("def _never():\n    import ctypes\n    ctypes.CDLL(None)\n", "ctypes.CDLL"),
}
MANY = 70
DEEP = 18


def _check(t) -> dict:
    proc = t.cli("check", "--python", t.executable, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _about(report: dict, path: str) -> dict:
    return {f["kind"]: f for f in report["findings"] if f.get("file") == path}


def _pyc(t, src: str, code: str):
    """``(bytes, pyc path, extension suffix)`` from the target's interpreter."""
    proc = t.python("-I", "-S", "-c", PYC, src, input=code)
    assert proc.returncode == 0, proc.stderr
    data, path, suffix = proc.stdout.split("\n")[:3]
    return bytes.fromhex(data), path, suffix


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("swr_rd_zipped.py", NEVER)
    return buf.getvalue()


def _plant(t) -> dict:
    """Every case in the target's local site directory; ``{case: .pth path}``."""
    local = t.local_dir
    files, pths = {}, {}
    for name, modules in FOLLOWED.items():
        files.update(modules)
        top = sorted(modules)[0].split("/")[0].replace(".py", "")
        pths[name] = LINES.get(name, "import %s\n" % top)
    for name, (text, _e) in HIDDEN.items():
        files["swr_rd_h_%s.py" % name] = text
        pths["h-" + name] = "import swr_rd_h_%s\n" % name
    files["swr_rd_big.py"] = "X = 1\n" + "#" * (1 << 20) + "\n"
    pths["big"] = "import swr_rd_big\n"
    files["swr_rd_many/__init__.py"] = "".join("from . import m%d\n" % i for i in range(MANY))
    files.update(("swr_rd_many/m%d.py" % i, "") for i in range(MANY))
    pths["many"] = "import swr_rd_many\n"
    files.update(("swr_rd_d%d.py" % i, "import swr_rd_d%d\n" % (i + 1)) for i in range(DEEP))
    files["swr_rd_d%d.py" % DEEP] = ""
    pths["deep"] = "import swr_rd_d0\n"
    files["swr_rd_path/__init__.py"] = "__path__.append('/nonexistent-swr')\n"
    pths["path"] = "import swr_rd_path\n"
    pths["zip"] = "swr_rd.zip\nimport swr_rd_zipped\n"
    pths["nosrc"] = "import swr_rd_nosrc\n"
    pths["ext"] = "import swr_rd_ext\n"
    dirs = {str(local / p.rpartition("/")[0]) for p in files if "/" in p}
    t.root("import os, sys\nfor d in sys.argv[1:]: os.makedirs(d, exist_ok=True)", *sorted(dirs))
    for rel, text in files.items():
        t.put(local / rel, data=text.encode())
    t.put(local / "swr_rd.zip", data=_zip())
    data, _path, suffix = _pyc(t, "/nonexistent/swr_rd_nosrc.py", NEVER)
    t.put(local / "swr_rd_nosrc.pyc", data=data)
    t.put(local / ("swr_rd_ext" + suffix), data=b"\x7fELF" + bytes(60))
    out = {}
    for name, text in pths.items():
        path = local / ("swr-rd-%s.pth" % name)
        t.put(path, data=text.encode())
        out[name] = str(path)
    return out


@pytest.mark.parametrize("guarded_target", [*target_params("debian"), *spread(
    ROTATED, targets="hermetic", ways=6)], indirect=True)
def test_imports_are_followed_and_what_is_not_read_is_said(guarded_target):
    t = guarded_target
    debian = isinstance(t, NamespaceGuarded) and t.exists(Path(DP))
    if debian:
        stock = _check(t)
        unread = [x for x in stock["findings"] if x["kind"] == "unread-startup-code"]
        assert not unread, unread
        assert not _about(stock, DP), _about(stock, DP)
    pths = _plant(t)
    custom = None
    if not isinstance(t, NamespaceGuarded):  # Debian's own sitecustomize comes first
        custom = str(t.local_dir / "sitecustomize.py")
        t.root("import os, sys; os.makedirs(sys.argv[1], exist_ok=True)",
               str(t.local_dir / "swr_rd_sc"))
        t.put(Path(custom), data=b"import swr_rd_sc\n")
        t.put(t.local_dir / "swr_rd_sc" / "__init__.py", data=b"from .impl import _never\n")
        t.put(t.local_dir / "swr_rd_sc" / "impl.py", data=NEVER.encode())
    report = _check(t)
    if custom:  # sitecustomize's imports are followed too
        danger = _about(report, custom).get("dangerous-startup-code")
        assert danger and "starts-processes: os.system (in swr_rd_sc.impl)" in \
            danger["evidence"], _about(report, custom)
    for name, modules in FOLLOWED.items():
        found = _about(report, pths[name])
        danger = found.get("dangerous-startup-code")
        assert danger and danger["severity"] == "high", (name, found)
        payload = [m for m, text in modules.items() if text == NEVER][0]
        module = payload[:-3].replace("/", ".").replace(".__init__", "")
        assert "starts-processes: os.system (in %s)" % module in danger["evidence"], danger
    for name, (_text, evidence) in HIDDEN.items():
        danger = _about(report, pths["h-" + name]).get("dangerous-startup-code")
        assert danger and danger["severity"] == "high", (name, report["findings"])
        assert "runs-hidden-code" in danger["capabilities"], danger
        assert any(evidence in e for e in danger["evidence"]), danger
    why = {"big": "larger than", "many": "past the 64 modules", "path": "changes its __path__",
           "deep": "more than 16 levels deep",
           "zip": "zip archive", "nosrc": "sourceless", "ext": "compiled extension"}
    for name, words in why.items():
        unread = _about(report, pths[name]).get("unread-startup-code")
        assert unread and unread["severity"] in ("medium", "high"), (name, report["findings"])
        assert any(words in u for u in unread["unread"]), (name, unread)
        assert words in unread["message"] or name in ("many", "deep"), unread
        (f,) = [f for f in report["startup"]["files"] if f["path"] == pths[name]]
        rows = [x for x in f["lines"] if x["kind"] == "import"]
        assert any(words in u for x in rows for u in x.get("unread") or ()), (name, rows)
    # --verbose: the lines of a file with findings, and what reading them left unread
    text = unwrap_lines(t.cli("check", "--python", t.executable, "--verbose").stdout)
    assert "not read: swr_rd_ext (" in text and "compiled extension" in text, text

    if debian:  # _distutils_hack's bytecode replaced: the source kept, the header valid
        data, pyc, _suffix = _pyc(t, HACK, "def add_shim():\n    pass\n\n" + NEVER)
        t.root("import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)", pyc)
        t.put(Path(pyc), data=data)
        report = _check(t)
        unread = _about(report, DP).get("unread-startup-code")
        assert unread and unread["severity"] == "high", _about(report, DP)
        assert any("is not its source's" in u and pyc in u for u in unread["unread"]), unread
