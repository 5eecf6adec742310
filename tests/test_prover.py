"""The allow-list prover (``audit.prover``): startup code is harmless only when proved.

``prove()`` is pure (it compiles a syntax tree, never runs it), so these tests call it in
this process, and once per real interpreter (3.8 to the newest pyenv has) over the same
cases, whose syntax trees differ.  Nothing here runs a payload: each malicious text is
only read.  Each malicious case must be ``high`` with a reason on the line named; each
benign one ``proved``, or ``unproven`` with the effect named.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.interpreters import pyenv_interpreters
from sitewarden.audit import prover
from sitewarden.audit.prover import Memo, Proof, prove

SRC = Path(__file__).resolve().parent.parent / "src"


def _b64(code: str) -> str:
    return base64.b64encode(code.encode()).decode()


#: id -> (text, the line a high reason must name).  Grouped by the class of spelling.
MALICIOUS = {
    # aliases and rebindings of the import functions, their package=/fromlist=
    "alias-dunder-import": ("imp = __import__\nimp('os').system('id')\n", 1),
    "builtins-dunder-import": ("import builtins\nbuiltins.__import__('os').system('id')\n", 2),
    "import-module-alias": ("from importlib import import_module as im\n"
                            "im('o' + 's').system('id')\n", 2),
    "import-module-computed": ("import importlib, os\nn = os.environ['MOD']\n"
                               "importlib.import_module(n)\n", 3),
    "import-module-package": ("import importlib, os\n"
                              "importlib.import_module('.x', package=os.environ['P'])\n", 2),
    "dunder-import-fromlist": ("import os\n__import__('os', fromlist=[os.environ['F']])\n", 2),
    "dunder-import-subprocess": ("__import__('subprocess').Popen(['id'])\n", 1),
    "getattr-dunder-import": ("getattr(__import__('os'), 'system')('id')\n", 1),
    "built-names": ("m = __import__('o' + 's')\nf = getattr(m, 'sy' + 'stem')\nf('id')\n", 3),
    "importlib-chain": ("__import__('importlib').import_module('os').system('id')\n", 1),
    "dunder-import-globals": ("__import__('os', globals(), locals(), ['system'], 0)"
                              ".system('id')\n", 1),
    "import-as": ("import os as o\nrun = o.system\nrun('id')\n", 3),
    "from-import-as": ("from os import system as s\ns('id')\n", 2),
    "rebinding-order": ("a = 'x'\nimport os\na = os.system\na('id')\n", 4),
    "either-path": ("import os, sys\nf = os.system if sys.argv else len\nf('id')\n", 3),
    "alias-of-alias": ("import os\nx = os\ny = x\ny.system('id')\n", 4),
    "walrus": ("import os\n(f := os.system)('id')\n", 2),
    # star imports
    "star-stdlib": ("from os import *\nsystem('id')\n", 2),
    "star-subprocess": ("from subprocess import *\nPopen(['id'])\n", 2),
    "star-foreign": ("from evilpkg import *\nrun('id')\n", 2),
    "star-relative": ("from . import *\nrun('id')\n", 2),
    # builtins and namespaces by computed key
    "builtins-getattr": ("import builtins, os\ngetattr(builtins, 'ex' + 'ec')(os.environ['C'])\n",
                         2),
    "builtins-subscript": ("__builtins__['exec']('1')\n", 1),
    "builtins-alias": ("b = __builtins__\nb.exec('1')\n", 1),
    "globals": ("globals()['__builtins__']\n", 1),
    "vars-module": ("import os\nvars(os)['system']('id')\n", 2),
    "dunder-dict": ("import os\nos.__dict__['system']('id')\n", 2),
    "sys-modules-literal": ("import sys\nsys.modules['os'].system('id')\n", 2),
    "sys-modules-computed": ("import sys, os\nsys.modules[os.environ['M']]\n", 2),
    "sys-modules-values": ("import sys\nfor m in sys.modules.values():\n    pass\n", 2),
    "getframe": ("import sys\nsys._getframe(1).f_globals\n", 2),
    "inspect": ("import inspect\ninspect.currentframe()\n", 2),
    "subclasses": ("().__class__.__base__.__subclasses__()\n", 1),
    "func-globals": ("(lambda: 0).__globals__['__builtins__']\n", 1),
    "class-call": ("import os\nos.system.__class__('x')\n", 2),
    # operator, functools, map: callables that call what they are given
    "attrgetter": ("import operator, os\noperator.attrgetter('system')(os)('id')\n", 2),
    "methodcaller": ("import operator, os\noperator.methodcaller('system', 'id')(os)\n", 2),
    "partial": ("import functools, os\nfunctools.partial(os.system, 'id')()\n", 2),
    "reduce-getattr": ("import functools, os\n"
                       "functools.reduce(getattr, ['system'], os)('id')\n", 2),
    "map": ("import os\nlist(map(os.system, ['id']))\n", 2),
    "thread-target": ("import threading, os\n"
                      "threading.Thread(target=os.system, args=('id',)).start()\n", 2),
    "atexit-reference": ("import atexit, os\natexit.register(os.system, 'id')\n", 2),
    "container": ("import os\nx = [os.system]\nx[0]('id')\n", 2),
    "dict-value": ("import os\nd = {'a': os.system}\n", 2),
    "for-container": ("import os\nfor f in [os.system]:\n    f('id')\n", 2),
    "module-passed": ("import os\ndef g(m):\n    return m.system('id')\ng(os)\n", 4),
    # decorators, defaults, class bodies, metaclasses, __init_subclass__, lambdas
    "decorator": ("import os\n@os.system\ndef f():\n    pass\n", 2),
    "atexit-decorator-body": ("import atexit, os\n@atexit.register\ndef f():\n"
                              "    os.system('id')\n", 4),
    "default-arg": ("import os\ndef f(x=os.system('id')):\n    pass\n", 2),
    "class-body": ("import os\nclass A:\n    x = os.system('id')\n", 3),
    "class-attribute": ("import os\nclass A:\n    run = os.system\nA().run('id')\n", 4),
    "self-attribute": ("import os\nclass A:\n    def __init__(self):\n"
                       "        self.f = os.system\n", 4),
    "metaclass": ("import os\nclass A(metaclass=os.system):\n    pass\n", 2),
    "init-subclass": ("import os\nclass A:\n    def __init_subclass__(cls):\n"
                      "        os.system('id')\nclass B(A):\n    pass\n", 4),
    "lambda": ("import os\nf = lambda: os.system('id')\n", 2),
    "lambda-returns": ("import os\nf = lambda: os.system\n", 2),
    "excepthook": ("import sys\nsys.excepthook = lambda *a: __import__('os').system('id')\n", 2),
    # sys.path and friends
    "sys-path-computed": ("import sys, os\nsys.path.insert(0, os.environ['HOME'])\n", 2),
    "addsitedir-computed": ("import site, os\nsite.addsitedir(os.environ['X'])\n", 2),
    "meta-path": ("import sys\nclass F:\n    pass\nsys.meta_path.insert(0, F())\n", 4),
    "path-hooks": ("import sys\nsys.path_hooks.append(len)\n", 2),
    "sys-modules-store": ("import sys\nsys.modules['json'] = sys\n", 2),
    "replace-os-system": ("import os\nos.system = print\n", 2),
    "replace-builtins-open": ("import builtins\nbuiltins.open = print\n", 2),
    "setattr-computed": ("import os\nsetattr(os, 'sys' + 'tem', print)\n", 2),
    # the standard library's code runners
    "exec-computed": ("import os\nexec(os.environ['CODE'])\n", 2),
    "eval-compile-computed": ("import os\neval(compile(os.environ['C'], 'f', 'eval'))\n", 2),
    "exec-literal": ("exec('import os\\nos.system(\"id\")')\n", 1),
    "exec-compile-literal": ("exec(compile('import os;os.system(1)', 'f', 'exec'))\n", 1),
    "exec-nested": ("exec(\"exec('import os;os.system(1)')\")\n", 1),
    "exec-base64": ("import base64\nexec(base64.b64decode('%s'))\n"
                    % _b64("import os\nos.system('id')"), 2),
    "exec-rot13": ("import codecs\nexec(codecs.decode(\"vzcbeg bf; bf.flfgrz('vq')\", "
                   "'rot13'))\n", 2),
    "runpy": ("import runpy\nrunpy.run_path('/tmp/x.py')\n", 2),
    "code": ("import code\ncode.InteractiveInterpreter().runsource('1')\n", 2),
    "codeop": ("import codeop\ncodeop.compile_command('1')\n", 2),
    "exec-module": ("import importlib.util\n"
                    "spec = importlib.util.spec_from_file_location('x', '/tmp/x.py')\n"
                    "m = importlib.util.module_from_spec(spec)\n"
                    "spec.loader.exec_module(m)\n", 4),
    "function-type": ("import types\ntypes.FunctionType(len.__code__, {})\n", 2),
    "marshal": ("import marshal\nmarshal.loads(b'')\n", 2),
    "pickle": ("import pickle\npickle.loads(b'')\n", 2),
    "pickle-alias": ("import pickle as p\nu = p.Unpickler\nu(open('/tmp/x', 'rb')).load()\n", 3),
    "timeit": ("import timeit\ntimeit.timeit(\"__import__('os').system('id')\", number=1)\n", 2),
    "pdb": ("import pdb\npdb.run('1')\n", 2),
    "cprofile": ("import cProfile\ncProfile.run('1')\n", 2),
    "logging-config": ("import logging.config\nlogging.config.dictConfig({'version': 1, "
                       "'handlers': {'h': {'()': 'os.system'}}})\n", 2),
    "resolve-name": ("import pkgutil\npkgutil.resolve_name('os:system')('id')\n", 2),
    "multiprocessing": ("import multiprocessing\n"
                        "multiprocessing.Process(target=print).start()\n", 2),
    "importlib-reload": ("import importlib, os\nimportlib.reload(os)\n", 2),
    # processes, network, foreign functions
    "subprocess": ("import subprocess\nsubprocess.run(['id'])\n", 2),
    "execv": ("import os\nos.execv('/bin/sh', ['sh'])\n", 2),
    "posix-spawn": ("import os\nos.posix_spawn('/bin/sh', ['sh'], {})\n", 2),
    "popen-context": ("import os\nwith os.popen('id') as f:\n    pass\n", 2),
    "pty": ("import pty\npty.spawn('sh')\n", 2),
    "platform-popen": ("import platform\nplatform.popen('id')\n", 2),
    "webbrowser": ("import webbrowser\nwebbrowser.open('http://192.0.2.1/')\n", 2),
    "asyncio-subprocess": ("import asyncio\nasyncio.create_subprocess_exec('id')\n", 2),
    "socket": ("import socket\nsocket.create_connection(('192.0.2.1', 9))\n", 2),
    "urlopen": ("import urllib.request\nurllib.request.urlopen('http://192.0.2.1/')\n", 2),
    "ctypes": ("import ctypes\nctypes.CDLL(None).system(b'id')\n", 2),
    "antigravity": ("import antigravity\n", 1),
    # names built from strings
    "join": ("import os\ngetattr(os, ''.join(['sys', 'tem']))('id')\n", 2),
    "chr": ("import os\ngetattr(os, chr(115) + 'ystem')('id')\n", 2),
    "fromhex": ("import os\ngetattr(os, bytes.fromhex('73797374656d').decode())('id')\n", 2),
    "rot13-name": ("import os, codecs\ngetattr(os, codecs.decode('flfgrz', 'rot13'))('id')\n", 2),
    "reversed-name": ("import os\ngetattr(os, 'metsys'[::-1])('id')\n", 2),
    "fstring-name": ("import os\nn = 'tem'\ngetattr(os, f'sys{n}')('id')\n", 3),
    "computed-name": ("import os\ngetattr(os, os.environ['N'])('id')\n", 2),
    # statements outside the grammar still read inside
    "match": ("import os\nmatch 1:\n    case _:\n        os.system('id')\n", 4),
    "except-body": ("import os\ntry:\n    pass\nexcept Exception:\n    os.system('id')\n", 5),
    "nonlocal": ("import os\ndef f():\n    g = len\n    def h():\n        nonlocal g\n"
                 "        g = os.system\n    h()\n    g('id')\n", 8),
    "global": ("import os\ndef f():\n    global g\n    g = os.system\ng = len\ng('id')\n", 6),
    "undefined": ("sitecustomize_hook('id')\n", 1),
    "site-global": ("import sys\naddsitedir('/x')\n", 2),
    # protocols the interpreter calls by itself, and values that leave the proof's sight
    "class-getitem": ("import os\nclass A:\n    __class_getitem__ = os.system\nA['id']\n", 3),
    "module-getattr": ("import os\n__getattr__ = os.system\n", 2),
    "dunder-eq": ("import os\nclass A:\n    __eq__ = os.system\n", 3),
    "type-three-args": ("import os\nA = type('A', (), {'__class_getitem__': os.system})\n", 2),
    "class-import": ("class A:\n    from os import system\nA.system('id')\n", 3),
    "module-via-module": ("import typing\ntyping.sys.modules['webbrowser'].get()\n", 2),
    "os-path-os": ("import os.path\nos.path.os.system('id')\n", 2),
    "sum-start": ("import webbrowser\nsum([], webbrowser).get()\n", 2),
    "dict-keyword": ("import webbrowser\ndict(a=webbrowser)['a'].get()\n", 2),
    "default-of-get": ("import os, webbrowser\nos.environ.get('NO', webbrowser).get()\n", 2),
    "returned-module": ("import webbrowser\ndef f():\n    return webbrowser\nf().get()\n", 3),
    "decorator-returns": ("import os\ndef deco(f):\n    return os.system\n@deco\ndef g():\n"
                          "    pass\ng('id')\n", 3),
    "eval-literal": ("x = eval('__import__(\"os\")')\nx.system('id')\n", 2),
    "exec-binds": ("exec('import os\\nf = os.system')\nf('id')\n", 2),
    "exec-in-function": ("def g():\n    exec('import os; os.system(1)')\n", 2),
    "comprehension-in-class": ("import os\nclass A:\n    os = 1\n"
                               "    x = [os.system('id') for _ in '1']\n", 4),
    "annotation": ("import os\nx: os.system('id') = 1\n", 2),
    "async-body": ("import os\nasync def f():\n    os.system('id')\n", 3),
    "generator-frame": ("def g():\n    yield 1\ng().gi_frame.f_globals\n", 3),
    "traceback-frame": ("try:\n    1 / 0\nexcept Exception as e:\n"
                        "    e.__traceback__.tb_frame\n", 4),
    "code-replace": ("def g():\n    yield 1\ng().gi_code.replace(co_code=b'')\n", 3),
    "meta-path-iterated": ("import sys\nfor f in sys.meta_path:\n"
                           "    f.invalidate_caches()\n", 3),
    "exec-or-system": ("import os, sys\nf = exec if sys.argv else os.system\nf('1')\n", 3),
    "copy-of-modules": ("import typing\nd = dict(typing.sys.modules)\nd['webbrowser'].get()\n", 3),
    "union-of-modules": ("import typing\n(typing.sys.modules | {})['webbrowser'].get()\n", 2),
    "builtins-binding": ("def f():\n    global __builtins__\n    __builtins__ = {}\n", 3),
    "code-store": ("def f():\n    pass\ndef g():\n    pass\nf.__code__ = g.__code__\n", 5),
    "import-as-dunder": ("from os import system as __getattr__\n", 1),
    "tls-unverified": ("import ssl\n"
                       "ssl._create_default_https_context = ssl._create_unverified_context\n", 2),
    "super-of-unknown": ("import os\nclass A(os.PathLike):\n    pass\n", 2),
}

#: id -> (text, verdict, the effect expected (a substring), or None).
BENIGN = {
    "distutils-precedence": (
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local')"
        " == 'local'; enabled and __import__('_distutils_hack').add_shim(); ",
        "proved", None),
    "coverage": ("import coverage; coverage.process_startup()", "proved", None),
    "apport": ("# install the apport exception handler if available\ntry:\n"
               "    import apport_python_hook\nexcept ImportError:\n    pass\nelse:\n"
               "    apport_python_hook.install()\n", "proved", None),
    "pytest-cov": ("import os, sys;exec('if \\'COV_CORE_SOURCE\\' in os.environ:\\n try:\\n  "
                   "from pytest_cov.embed import init\\n  init()\\n except Exception as exc:\\n"
                   "  sys.stderr.write(\\n   \"pytest-cov: Failed to setup subprocess coverage."
                   " \"\\n   \"Environ: {0!r} \"\\n   \"Exception: {1!r}\\\\n\".format(\\n    "
                   "dict((k, v) for k, v in os.environ.items() if k.startswith(\\'COV_CORE\\')),"
                   "\\n    exc\\n   )\\n  )\\n')", "proved", None),
    "editables": ("from editables.redirector import RedirectingFinder as F\nF.install()\n"
                  "F.map_module('pkg', '/src/pkg/__init__.py')\n", "proved", None),
    "egress-ca": (
        "import os;exec(\"try:\\n import certifi\\n _p=certifi.where(); "
        "_c='/etc/ssl/certs/sandboxing-egress-ca.pem'\\n if os.path.isfile(_c) and "
        "os.path.getsize(_c)<65536 and os.path.isfile(_p):\\n  with open(_c,'rb') as _f: "
        "_t=_f.read()\\n  with open(_p,'rb') as _f: _f.seek(max(0,os.path.getsize(_p)-len(_t)"
        "-64)); _tail=_f.read()\\n  if _t[-96:] not in _tail:\\n   with open(_p,'ab') as _f: "
        "_f.write(b'\\\\n'+_t)\\nexcept Exception: pass\\n\")", "unproven", "writes a file"),
    "path-literal": ("import os, sys; sys.path.insert(0, '/opt/lib')", "proved", None),
    "path-of-file": ("import sys, os\nsys.path.append(os.path.join(os.path.dirname("
                     "os.path.abspath(__file__)), 'vendor'))\n", "proved", None),
    "addsitedir": ("import site\nsite.addsitedir('/opt/site')\n", "proved", None),
    "env-setdefault": ("import os\nos.environ.setdefault('PYTHONX', '1')\n", "unproven",
                       "sets environment variable PYTHONX"),
    "env-item": ("import os\nos.environ['PYTHONX'] = '1'\n", "unproven",
                 "sets environment variable PYTHONX"),
    "codec": ("import codecs\ndef search(name):\n    return None\ncodecs.register(search)\n",
              "unproven", "registers a codec"),
    "atexit": ("import atexit\ndef bye():\n    pass\natexit.register(bye)\n", "unproven",
               "registers an exit handler"),
    "atexit-decorator": ("import atexit\n@atexit.register\ndef bye():\n    print('bye')\n",
                         "unproven", "registers an exit handler"),
    "excepthook": ("import sys\ndef hook(*a):\n    pass\nsys.excepthook = hook\n", "unproven",
                   "sets sys.excepthook"),
    "writes": ("with open('/tmp/x', 'w') as f:\n    f.write('x')\n", "unproven",
               "writes the file /tmp/x"),
    "warnings": ("import warnings\nwarnings.filterwarnings('ignore', "
                 "category=DeprecationWarning)\n", "proved", None),
    "version-gate": ("import sys\nif sys.version_info < (3, 8):\n    raise ImportError('old')\n",
                     "proved", None),
    "optional": ("try:\n    import foo\nexcept ImportError:\n    foo = None\n"
                 "if foo is not None:\n    foo.setup()\n", "proved", None),
    "strings": ("x = ' a,b '.strip().split(',')\ny = [s.upper() for s in x]\n"
                "z = '-'.join(y).encode().decode()\n", "proved", None),
    "dataclass": ("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int = 0\n"
                  "    def norm(self):\n        return abs(self.x)\np = P()\np.norm()\n",
                  "proved", None),
    "regex": ("import re\nPAT = re.compile(r'\\d+')\nm = PAT.match('12')\nif m:\n"
              "    print(m.group(0))\n", "proved", None),
    "read-file": ("with open('/etc/hostname') as f:\n    data = f.read().strip()\n",
                  "proved", None),
    "logging": ("import logging\nlog = logging.getLogger(__name__)\nlog.debug('x %s', 1)\n",
                "proved", None),
    "type-checking": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    import subprocess\n", "proved", None),
    "exception-class": ("class E(Exception):\n    def __init__(self, msg):\n"
                        "        super().__init__(msg)\n        self.msg = msg\n"
                        "    def __str__(self):\n        return 'E: ' + self.msg\n"
                        "e = E('x')\n", "proved", None),
    "property": ("class A:\n    def __init__(self):\n        self._x = 0\n    @property\n"
                 "    def x(self):\n        return self._x\n    @x.setter\n"
                 "    def x(self, v):\n        self._x = v\na = A()\na.x = 1\n",
                 "proved", None),
    "stderr": ("import sys\nsys.stderr.write('hello\\n')\n", "proved", None),
    "exec-literal": ("exec('x = 1')\ny = x + 1\n", "proved", None),
    "closure": ("def outer():\n    count = 0\n    def inc():\n        nonlocal count\n"
                "        count += 1\n        return count\n    return inc\nf = outer()\n",
                "proved", None),
    "methods": ("class Finder:\n    def __init__(self, root):\n        self.root = root\n"
                "    def find(self, name):\n        return self._join(name)\n"
                "    def _join(self, name):\n        return self.root + '/' + name\n"
                "Finder('/x').find('y')\n", "proved", None),
    "namedtuple": ("from collections import namedtuple\nP = namedtuple('P', 'x y')\n"
                   "class Q(P):\n    pass\np = P(1, 2)\n", "proved", None),
    "listdir": ("import os\nfor e in os.scandir('/opt'):\n    if e.is_dir():\n"
                "        print(e.name)\nnames = sorted(os.listdir('/opt'), key=len)\n",
                "proved", None),
    "chdir": ("import os\nos.chdir('/tmp')\n", "unproven", "changes the working directory"),
    "argv": ("import sys\nprog = sys.argv[0].strip()\nsys.argv.append('-v')\n", "unproven",
             "changes sys.argv"),
    "json": ("import json\nconfig = json.loads('{}')\n", "unproven", None),
    "returned-instance": ("class F:\n    def find(self, x):\n        return x.strip()\n"
                          "def get():\n    return F()\nget().find(' a ')\n", "proved", None),
    "local-decorator": ("def deco(f):\n    def inner():\n        return 1\n    return inner\n"
                        "@deco\ndef g():\n    pass\ng()\n", "proved", None),
    "system-exit": ("import os\nif os.environ.get('STOP'):\n    raise SystemExit(1)\n",
                    "unproven", "exits the interpreter"),
}


def _prove(text, **kw):
    return prove(text, name=kw.pop("name", "mod"), path=kw.pop("path", "/opt/x/mod.py"), **kw)


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_malicious_spelling_is_high_at_its_line(case):
    text, line = MALICIOUS[case]
    proof = _prove(text)
    assert proof.verdict == "high", proof
    assert any(sev == "high" and at == line for sev, at, _ in proof.reasons), proof.reasons


@pytest.mark.parametrize("case", sorted(BENIGN))
def test_benign_code_is_proved_or_names_its_effect(case):
    text, verdict, effect = BENIGN[case]
    proof = _prove(text)
    assert proof.verdict == verdict, proof
    if effect is not None:
        assert any(effect in text for _, text in proof.effects), proof
    if verdict == "proved":
        assert proof.reasons == () and proof.effects == ()


def test_what_a_proof_hands_its_caller():
    """Imports to follow, calls to discharge, definitions, path changes."""
    proof = _prove("import sys, os\nimport mypkg.sub as s\nfrom . import sibling\n"
                   "def setup():\n    s.init()\nclass K:\n    pass\nVERSION = '1'\n"
                   "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'v'))\n"
                   "__import__('other').go()\nsibling.run()\n",
                   name="pkg.mod", path="/opt/pkg/mod.py")
    assert proof.verdict == "proved", proof
    assert proof.imports == ((0, "sys", ()), (0, "os", ()), (0, "mypkg.sub", ()),
                             (1, "", ("sibling",)), (0, "other", ()))
    assert set(proof.calls) == {("mypkg.sub", "init", 5), ("other", "go", 10),
                                ("pkg", "sibling.run", 11)}
    assert ("setup", "def", "") in proof.defines and ("K", "class", "") in proof.defines
    assert ("s", "import", "mypkg.sub") in proof.defines
    assert ("VERSION", "value", "") in proof.defines
    assert proof.path_changes == (("sys.path", "insert", (0, "/opt/pkg/v"), 9),)


def test_exec_of_a_literal_is_read_as_code():
    proof = _prove("exec('import os\\nos.system(1)')")
    assert proof.reasons == (("high", 1, "in the code exec(...) runs: starts a process: "
                              "os.system"),)
    assert _prove("exec('import mypkg; mypkg.go()')").calls == (("mypkg", "go", 1),)


def test_reasons_read_as_sentences():
    assert _prove("import os\ngetattr(os, os.environ['X'])()\n").reasons[0] == (
        "high", 2, "calls getattr(os, <computed name>): the audit cannot resolve what it calls")
    assert ("high", 2, "runs a string as code: exec(<computed>)") in _prove(
        "import os\nexec(os.environ['X'])\n").reasons
    assert ("high", 2, "starts a process: subprocess.Popen") in _prove(
        "import subprocess\nsubprocess.Popen(['id'])\n").reasons
    assert ("medium", 2, "calls json.load, not known to be harmless") in _prove(
        "import json\njson.load(open('/etc/x.json'))\n").reasons
    assert ("medium", 2, "sets environment variable X") in _prove(
        "import os\nos.environ['X'] = '1'\n").reasons


def test_text_that_does_not_compile_is_high():
    proof = _prove("import os\nos.system(\n")
    assert proof.verdict == "high" and proof.reasons[0][2].startswith("cannot be read: ")


def test_reasons_are_capped():
    proof = _prove("import os\n" + "os.system('id')\n" * 30)
    assert len(proof.reasons) == prover.MAX_REASONS
    assert proof.reasons[-1][0] == "high" and proof.reasons[-1][2] == "... 11 more"


def test_the_nspkg_line_is_high():
    """setuptools' ``-nspkg.pth`` line reads ``sys._getframe``: a template matched by
    content elsewhere, never proved here."""
    line = ("import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join("
            "sys._getframe(1).f_locals['sitedir'], *('a',));importlib = has_mfs and "
            "__import__('importlib.util');has_mfs and __import__('importlib.machinery');"
            "m = has_mfs and sys.modules.setdefault('a', importlib.util.module_from_spec("
            "importlib.machinery.PathFinder.find_spec('a', [os.path.dirname(p)])));"
            "m = m or sys.modules.setdefault('a', types.ModuleType('a'));"
            "mp = (m or []) and m.__dict__.setdefault('__path__',[]);"
            "(p not in mp) and mp.append(p)")
    assert _prove(line, name="").verdict == "high"


def test_memo_keeps_proofs_in_a_private_cache(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    memo = Memo(str(cache))
    first = memo.prove("import os\nos.system('id')\n", "m", "/x/m.py")
    assert isinstance(first, Proof) and first.verdict == "high"
    memo.save()
    again = Memo(str(cache))
    assert again.known and again.prove("import os\nos.system('id')\n", "m", "/x/m.py"
                                       ).as_tuple() == first.as_tuple()
    assert not Memo.valid(("proved", (("low", 1, "x"),), (), (), (), (), ()))


def _interpreters():
    seen, out = set(), []
    for interp in pyenv_interpreters():
        if tuple(interp.version[:2]) not in seen:
            seen.add(tuple(interp.version[:2]))
            out.append(pytest.param(interp, id="cpython%d.%d" % tuple(interp.version[:2])))
    return out


_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from sitewarden.audit.prover import prove
cases = json.loads(sys.stdin.read())
out = {k: prove(t, name="mod", path="/opt/x/mod.py").as_tuple() for k, t in cases.items()}
sys.stdout.write(json.dumps(out))
"""


def _cases(version):
    cases = {"m-" + k: t for k, (t, _) in MALICIOUS.items()
             if not (k == "match" and tuple(version[:2]) < (3, 10))}
    cases.update(("b-" + k, t) for k, (t, _, _) in BENIGN.items())
    return cases


def _agree(stdout, cases):
    got = json.loads(stdout)
    for key in cases:
        verdict, reasons = got[key][0], [tuple(r) for r in got[key][1]]
        if key.startswith("m-"):
            assert verdict == "high", (key, reasons)
            assert any(r[0] == "high" and r[1] == MALICIOUS[key[2:]][1] for r in reasons), (
                key, reasons)
        else:
            assert verdict == BENIGN[key[2:]][1], (key, reasons)


@pytest.mark.parametrize("interp", _interpreters())
def test_every_interpreter_proves_alike(interp):
    """The same verdicts and lines from each interpreter's own syntax trees (3.8's
    ``Index`` nodes...).  Only read: the texts are passed as data, never run."""
    cases = _cases(interp.version)
    proc = subprocess.run([os.fspath(interp), "-I", "-S", "-c", _RUN, str(SRC)],
                          input=json.dumps(cases), capture_output=True, text=True, check=True)
    _agree(proc.stdout, cases)


def test_the_roots_interpreters_prove_alike(root_ns):
    """Debian 13's and sid's interpreters (3.14, 3.15: t-strings, new nodes), in their
    roots."""
    cases = _cases(root_ns.version)
    proc = root_ns.python("-I", "-S", "-c", _RUN, str(SRC), input=json.dumps(cases))
    assert proc.returncode == 0, proc.stderr
    _agree(proc.stdout, cases)
