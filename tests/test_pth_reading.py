"""``check`` shows the lines of each startup file exactly as the target's ``site`` reads them.

The expected lines come from each target's own ``site``, never from a copy of the reader:
:data:`VIEW` runs the real ``site.addpackage`` (3.15+: PEP 829's
``StartupState._read_pth_file``) in the target, its ``exec`` and ``makepath`` replaced by
recorders, and lists every import line and path line it would process, with the line
number ``site`` gives it.  Per version (CPython 3.8-3.12: a text stream, locale encoding,
strict, universal newlines; 3.13+: ``utf-8-sig`` then the locale's, ``str.splitlines()``),
for form feeds, ``\\x0b``, ``\\x1c``, ``\\x85``, ``\\u2028``, CR-only and CRLF files, a BOM, a
NUL, non-ASCII text:

- hermetic CPythons 3.8-3.13: files a start survives through the real CLI (``check
  --python <hermetic> --json``), with a ``/dev/null`` link, a socket and a directory an
  import line adds (``site.addsitedir``); files no start survives (``Failed to import the
  site module``: the live probe cannot start either) through the reader under ``-S``,
  which names the error a real start prints, and lists the lines 3.8-3.12 process before
  the read chunk that fails; the locale (``LC_ALL=C``, UTF-8 mode on and off);
- Debian's pythons (host 3.11, 13's 3.13, sid's 3.14 and 3.15): the reader under ``-S``,
  and on 3.15 a ``.start`` that is not UTF-8 (skipped);
- a FIFO, ``/dev/zero`` and ``/dev/null`` links, a socket, a file over the read limit,
  ``site.addsitedir`` loops: the reader called directly (a FIFO in a site directory hangs
  every start of the target, the probe's too), in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import sitewarden
from harness.interpreters import pyenv_interpreters

SRC = str(Path(sitewarden.__file__).resolve().parent.parent)

#: Run in the target (``-S -B <this> <src> <dir>/<name>...``, ``site`` imported, not
#: run): ``"site"``: what its own ``site`` does with each file (``{path: {"lines": [[n,
#: kind, text]], "error": "Type: message" or None}}``); ``"reader"``: what ``check``'s
#: reader makes of the site directories (its files and findings).
VIEW = r"""
import json, os, sys, site
sys.path.insert(0, sys.argv[1])
from sitewarden.audit import inventory as startup
pep829 = startup.pep829_site(site)
files = startup.read_startup_files(site)
startup.judge(files, pep829)
reader = {"files": [f.as_json() for f in files], "findings": [
    f.as_json() for f in startup.findings(files, [], os.geteuid(), pep829)]}

base = 1 if sys.version_info < (3, 13) and not pep829 else 0  # enumerate(f) from 0
seen = []

def number():
    return sys._getframe(2).f_locals["n"] + base

real_makepath = site.makepath
def makepath(*parts):
    if len(parts) == 2:
        seen.append([number(), "path", parts[1]])
    return real_makepath(*parts)
site.makepath = makepath

class Imports(list):  # 3.15+: StartupState._importexecs[filename]
    def append(self, line):
        seen.append([number(), "import", line])
        list.append(self, line)

class Ledger(dict):
    def setdefault(self, key, default=None):
        return dict.setdefault(self, key, Imports())

def record(line):  # addpackage's exec(line), before 3.15
    seen.append([sys._getframe(1).f_locals["n"] + base, "import", line])
site.exec = record

out = {}
for path in sys.argv[2:]:
    sitedir, name = os.path.split(path)
    del seen[:]
    error = None
    try:
        if pep829:
            state = site.StartupState(set())
            state._importexecs = Ledger()
            state._read_pth_file(sitedir, name)
        else:
            site.addpackage(sitedir, name, set())
    except Exception as exc:
        error = "%s: %s" % (type(exc).__name__, exc)
    out[path] = {"lines": list(seen), "error": error}
print(json.dumps({"site": out, "reader": reader}))
"""

#: Files every start survives (a failing import line prints an error, no more), in C.UTF-8.
CASES = {
    # \x0c (form feed), \x0b, \x1c end a line for str.splitlines() only (3.13+)
    "swr-rd-ff.pth": b"import sys\x0cimport os\n/swr-rd-p1\x0b/swr-rd-p2\nimport sys\x1cx\n",
    # \x85 (NEL), \u2028, \u2029: likewise
    "swr-rd-nel.pth": "import sys\x85x\n/swr-rd-p3\u2028/swr-rd-p4\n/swr-rd-p5\u2029import os\n"
                      .encode(),
    # CR alone ends a line everywhere (universal newlines, splitlines); no final newline
    "swr-rd-cr.pth": b"import sys\r/swr-rd-p6\r# c\r\rimport os",
    "swr-rd-crlf.pth": b"import sys\r\n/swr-rd-p7  \r\n\r\n \x0c \r\nimport os\r\n",
    # a BOM: 3.8-3.12 keep it (U+FEFF starts a path line), 3.13+ drop it
    "swr-rd-bom.pth": b"\xef\xbb\xbfimport sys\n/swr-rd-p8\n",
    "swr-rd-nul.pth": b"import sys\x00x\n/swr-rd-p9\x00q\n",
    "swr-rd-ws.pth": b"  import sys\n\timport os\nimport\tsys\n   \n#x\n  #y\n",
    "swr-rd-utf8.pth": "import sys # \u00e9\n/swr-rd-p\u00e9\n".encode(),
}

#: Files no start survives: the bad byte in the first read chunk; after three 4 KiB
#: chunks (3.8-3.12 process the lines of the chunks before it, then fail).
BAD = b"import sys\n\xff\n"
LATE = b"".join(b"import sys  # %05d\n" % i for i in range(700)) + b"/swr-rd-\xff\n"

INTERPRETERS = [pytest.param(i, id=i.id) for i in pyenv_interpreters()]


def _view(t, paths: List[Path], env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    script = t.tmp / "view.py"
    script.write_text(VIEW)
    proc = t.python("-S", "-B", str(script), SRC, *map(str, paths), env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _expected(view: Dict[str, Any]) -> List[List[Any]]:
    """``site``'s lines as ``check`` lists them: an import line without the line end
    3.8-3.12 keep, a path line as ``site`` joins it (``rstrip()``; 3.15+: ``strip()``).
    A blank line is left out: 3.8-3.9 join it to the site directory, already on
    ``sys.path``, so nothing happens."""
    out = []
    for n, kind, text in view["lines"]:
        if kind == "import" and text.endswith("\n"):
            text = text[:-1]
        if kind == "path" and not text.strip():
            continue
        out.append([n, kind, text])
    return out


def _shown(f: Dict[str, Any]) -> List[List[Any]]:
    return [[x["number"], x["kind"], x["text"].rstrip() if x["kind"] == "path" else x["text"]]
            for x in f["lines"] if x["kind"] in ("import", "path")]


def _files(files: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {f["path"]: f for f in files}


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


@pytest.mark.parametrize("interp", INTERPRETERS)
def test_check_shows_the_lines_site_reads(make_hermetic, interp):
    t = make_hermetic(interp)
    local, distro = t.local_dir, t.distro_dir

    # 1. files a start survives: the real CLI's report, line by line as site reads them
    for name, data in CASES.items():
        (local / name).write_bytes(data)
    os.symlink(os.devnull, str(local / "swr-rd-null.pth"))  # a masked .pth
    subprocess.run([sys.executable, "-c", "import socket; socket.socket(socket.AF_UNIX)"
                    ".bind('swr-rd-sock.pth')"], cwd=str(local), check=True)
    extra = t.tmp / "swr-rd-extra"  # a directory an import line adds
    extra.mkdir()
    (local / "swr-rd-adds.pth").write_text("import site; site.addsitedir(%r)\n" % str(extra))
    (extra / "swr-rd-nested.pth").write_bytes(b"import sys; sys.swr_rd_nested = 1\n/swr-rd-p10\n")
    paths = [local / name for name in CASES] + [extra / "swr-rd-nested.pth"]
    site = _view(t, paths)["site"]
    proc = t.cli("check", "--python", t.executable, "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    files = _files(report["startup"]["files"])
    for path in map(str, paths):
        assert site[path]["error"] is None, (path, site[path])
        assert site[path]["lines"], (path, site[path])
        assert _shown(files[path]) == _expected(site[path]), (path, site[path], files[path])
        assert "decode_error" not in files[path] and files[path]["error"] is None, files[path]
    # what differs by version, spelled out once
    ff, bom = _shown(files[str(local / "swr-rd-ff.pth")]), files[str(local / "swr-rd-bom.pth")]
    if t.version < (3, 13):
        assert ff[0] == [1, "import", "import sys\x0cimport os"], ff
        assert _shown(bom)[0] == [1, "path", "\ufeffimport sys"], bom
    else:
        assert ff[:2] == [[1, "import", "import sys"], [2, "import", "import os"]], ff
        assert _shown(bom)[0] == [1, "import", "import sys"], bom
    # the directory site.addsitedir() adds: its files follow the line's, which a start runs
    adds, nested = str(local / "swr-rd-adds.pth"), str(extra / "swr-rd-nested.pth")
    order = [f["path"] for f in report["startup"]["files"]]
    assert order.index(nested) == order.index(adds) + 1, order
    assert files[nested]["started_by"] == [adds, 1], files[nested]
    assert "its startup files follow" in files[adds]["lines"][0]["note"], files[adds]
    ran = t.python("-c", "import sys; print(sys.swr_rd_nested)")
    assert ran.stdout.strip() == "1", ran.stderr
    # the /dev/null link and the socket: listed by type, never read; a start survives both
    null, sock = files[str(local / "swr-rd-null.pth")], files[str(local / "swr-rd-sock.pth")]
    assert null["file_type"] == "character device" and null["realpath"] == os.devnull, null
    assert sock["file_type"] == "socket" and not sock["lines"], sock
    special = {f["file"]: f for f in report["findings"] if f["kind"] == "startup-file-special"}
    assert special[null["path"]]["severity"] == "info", special
    assert special[sock["path"]]["severity"] == "info", special

    # 2. files no start survives (the live probe cannot start): the reader under -S names
    #    CPython's own error; the lines 3.8-3.12 process before the chunk that fails
    (local / "swr-rd-late.pth").write_bytes(LATE)  # a start fails here first
    (distro / "swr-rd-bad.pth").write_bytes(BAD)
    start = t.python("-c", "pass")
    assert start.returncode != 0, start.stderr
    assert "Failed to import the site module" in start.stderr, start.stderr
    assert _last_line(start.stderr).startswith("UnicodeDecodeError: 'utf-8' codec"), start.stderr
    bad = [local / "swr-rd-late.pth", distro / "swr-rd-bad.pth"]
    view = _view(t, bad)
    files = _files(view["reader"]["files"])
    assert view["site"][str(bad[0])]["error"] == _last_line(start.stderr), view["site"]
    for path in map(str, bad):
        said, f = view["site"][path]["error"], files[path]
        assert said and f["decode_error"] == said and f["error"] == said, (f, said)
        assert _shown(f) == _expected(view["site"][path]), (f, view["site"][path])
        found = [(x["kind"], x["severity"], x["error"]) for x in view["reader"]["findings"]
                 if x.get("file") == path and x["kind"] == "startup-file-undecodable"]
        assert found == [("startup-file-undecodable", "high", said)], view["reader"]
    late = _shown(files[str(bad[0])])
    assert (len(late) > 100) == (t.version < (3, 13)), late
    for path in bad:
        path.unlink()

    # 3. the locale decides as it does for site: under LC_ALL=C (UTF-8 mode on by itself)
    #    3.8-3.10 read a UTF-8 "é", 3.11-3.12 fail (encoding="locale" ignores UTF-8 mode),
    #    3.13+ read UTF-8 first; with UTF-8 mode off 3.8-3.12 all fail
    for name in CASES:
        if name != "swr-rd-utf8.pth":
            (local / name).unlink()  # no other file to stop a start first
    path = str(local / "swr-rd-utf8.pth")
    for env in ({"LC_ALL": "C"}, {"LC_ALL": "C", "PYTHONUTF8": "0",
                                  "PYTHONCOERCECLOCALE": "0"}):
        start = t.python("-c", "pass", env=env)
        view = _view(t, [Path(path)], env=env)
        site, f = view["site"][path], _files(view["reader"]["files"])[path]
        fails = start.returncode != 0
        assert fails == (site["error"] is not None), (env, start.stderr, site)
        assert f.get("decode_error") == site["error"] == (
            _last_line(start.stderr) if fails else None), (env, f, site)
        assert _shown(f) == _expected(site), (env, f, site)
        ascii_ = t.version >= (3, 11) or env.get("PYTHONUTF8") == "0"
        assert fails == (ascii_ and t.version < (3, 13)), (env, start.stderr)


def test_debian_pythons_read_as_their_site(debian_any):
    """Debian's pythons (the host's 3.11, Debian 13's 3.13, sid's 3.14 and 3.15 with
    PEP 829 live): the reader under ``-S`` lists the lines their own ``site`` reads, and
    names the error of a file it cannot decode; on 3.15 a ``.start`` that is not UTF-8 is
    skipped (``medium``) and does not turn off its ``.pth``'s import lines."""
    t = debian_any
    local = t.local_dir
    bad = dict(CASES, **{"swr-rd-bad.pth": BAD})
    pep829 = t.version >= (3, 15)

    def build(stage: Path) -> None:
        for name, data in bad.items():
            (stage / name).write_bytes(data)
        if pep829:
            (stage / "swr-rd-ws.start").write_bytes(b"swr:main\n\xff\n")

    t.copy_in(build, local)
    paths = [local / name for name in bad]
    view = _view(t, paths)
    files = _files(view["reader"]["files"])
    for path in map(str, paths):
        site = view["site"][path]
        assert _shown(files[path]) == _expected(site), (path, site, files[path])
        assert files[path].get("decode_error") == site["error"], (files[path], site)
    said = view["site"][str(local / "swr-rd-bad.pth")]["error"]
    assert said.startswith("UnicodeDecodeError: 'utf-8' codec"), said
    found = {(x["file"], x["kind"]): x["severity"] for x in view["reader"]["findings"]
             if x["kind"] == "startup-file-undecodable"}
    expected = {(str(local / "swr-rd-bad.pth"), "startup-file-undecodable"): "high"}
    if pep829:
        start = files[str(local / "swr-rd-ws.start")]
        assert start["decode_error"] and start["error"] is None, start
        assert files[str(local / "swr-rd-ws.pth")]["disabled_by"] is None, files
        expected[(start["path"], "startup-file-undecodable")] = "medium"
    assert found == expected, view["reader"]["findings"]


# --------------------------------------- FIFO, devices, sockets, size: never read, never hang

DIRECT = r"""
import json, os, sys, types
sys.path.insert(0, sys.argv[1])
from sitewarden.audit import inventory as startup
d, version, pep829 = sys.argv[2], tuple(map(int, sys.argv[3].split("."))), sys.argv[4] == "1"
site = types.SimpleNamespace(getsitepackages=lambda: [d], ENABLE_USER_SITE=False,
                             __file__=None)
if pep829:
    site.StartupState = object
files = startup.read_startup_files(site, version)
startup.judge(files, pep829)
found = startup.findings(files, [], os.geteuid(), pep829)
print(json.dumps({"files": [f.as_json() for f in files],
                  "findings": [f.as_json() for f in found]}))
"""


@pytest.mark.parametrize("version", ["3.8", "3.12", "3.13", "3.15"])
def test_special_files_are_named_never_read(tmp_path, version):
    d = tmp_path / "site-packages"
    d.mkdir()
    os.mkfifo(str(d / "a-fifo.pth"))
    os.symlink("/dev/zero", str(d / "b-zero.pth"))
    os.symlink(os.devnull, str(d / "c-null.pth"))
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(str(d))
    try:
        sock.bind("d-sock.pth")
    finally:
        os.chdir(here)
        sock.close()
    (d / "e-big.pth").write_bytes(b"# padding\n" * (2 ** 20 // 10 + 1))
    (d / "f-plain.pth").write_bytes(b"import sys\n")
    os.mkfifo(str(d / "g-fifo.start"))
    (d / "h-bad.start").write_bytes(b"swr:main\n\xff\n")
    (d / "h-bad.pth").write_bytes(b"import sys\n")
    # site.addsitedir() of literal directories: each read once (no loop), after its line;
    # those of a line that does not run (an earlier line fails, before 3.15) not processed
    extra, more = d / "x-extra", d / "y-more"
    extra.mkdir()
    more.mkdir()
    (d / "i-adds.pth").write_text("import site; site.addsitedir(%r)\n" % str(extra))
    (extra / "a-loop.pth").write_text("import site; site.addsitedir(%r); site.addsitedir(%r)\n"
                                      % (str(extra), str(d)))
    (extra / "b.pth").write_bytes(b"import sys\n/swr-rd-p11\n")
    (d / "j-fails.pth").write_text("import swr_rd_no_such_module\n"
                                   "import site; site.addsitedir(%r)\n" % str(more))
    (more / "c.pth").write_bytes(b"import sys\n")
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", DIRECT, SRC, str(d),
                           version, "1" if version == "3.15" else "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - began < 30
    view = json.loads(proc.stdout)
    files = {f["path"][len(str(d)) + 1:]: f for f in view["files"]}
    found = {(x["file"][len(str(d)) + 1:], x["kind"]): x["severity"] for x in view["findings"]
             if x["kind"].startswith("startup-file-")}
    assert files["a-fifo.pth"]["file_type"] == "fifo" and not files["a-fifo.pth"]["lines"]
    assert files["b-zero.pth"]["file_type"] == "character device"
    assert files["b-zero.pth"]["realpath"] == "/dev/zero"
    assert files["c-null.pth"]["file_type"] == "character device"
    assert files["d-sock.pth"]["file_type"] == "socket"
    big = files["e-big.pth"]
    assert big["size"] == (2 ** 20 // 10 + 1) * 10 and not big["lines"], big
    assert "file_type" not in big and "size" not in files["f-plain.pth"], files
    assert files["f-plain.pth"]["lines"][0]["text"] == "import sys"
    expected = {("a-fifo.pth", "startup-file-special"): "high",
                ("b-zero.pth", "startup-file-special"): "high",
                ("c-null.pth", "startup-file-special"): "info",
                ("d-sock.pth", "startup-file-special"): "info",
                ("e-big.pth", "startup-file-too-large"): "medium"}
    if version == "3.15":  # the .start files: the FIFO would hang, the bad one is skipped
        assert files["g-fifo.start"]["file_type"] == "fifo", files
        bad = files["h-bad.start"]
        assert bad["decode_error"].startswith("UnicodeDecodeError: 'utf-8' codec"), bad
        assert bad["error"] is None and not bad["lines"], bad
        assert files["h-bad.pth"]["disabled_by"] is None, files  # site never read it
        expected.update({("g-fifo.start", "startup-file-special"): "high",
                         ("h-bad.start", "startup-file-undecodable"): "medium"})
    else:
        assert "g-fifo.start" not in files and "h-bad.start" not in files, files
    assert found == expected, found
    names = [f["path"][len(str(d)) + 1:] for f in view["files"]]
    i = names.index("i-adds.pth")
    assert names[i:i + 3] == ["i-adds.pth", "x-extra/a-loop.pth", "x-extra/b.pth"], names
    assert names.count("x-extra/a-loop.pth") == 1 and "y-more/c.pth" in names, names
    assert files["x-extra/b.pth"]["started_by"] == [str(d / "i-adds.pth"), 1], files
    assert files["x-extra/a-loop.pth"]["lines"][0]["note"].count("listed once") == 2, files
    nested = files["y-more/c.pth"]["lines"][0]
    assert nested["runs"] is (version == "3.15"), nested
    if version != "3.15":
        assert nested["note"].startswith("not processed: %s line 2" % (d / "j-fails.pth")), nested


def test_text_output_escapes_what_a_terminal_would_act_on(make_hermetic, cli):
    """A startup line holding escape sequences, a carriage return or C1 controls reaches
    the administrator's terminal escaped (``\\x1b``), in the inventory and in the
    findings that quote it; JSON keeps the text as it is."""
    t = make_hermetic(pyenv_interpreters()[-1])
    (t.local_dir / "swr-ansi.pth").write_bytes(
        b"import os; os.environ.get('SWR_NOTHING') \x1b[2J\x1b]0;owned\x07# \rhidden\xc2\x9b\n")
    proc = cli("check", "--python", str(t.executable), "--verbose", env=t.env())
    assert proc.returncode == 1, proc.stderr
    assert not [c for c in proc.stdout if ord(c) < 32 and c not in "\n\t"], proc.stdout
    assert "\x9b" not in proc.stdout and "\\x1b[2J" in proc.stdout, proc.stdout
    report = json.loads(cli("check", "--python", str(t.executable), "--json",
                            env=t.env()).stdout)
    texts = [line["text"] for f in report["startup"]["files"] for line in f["lines"]]
    assert any("\x1b[2J" in text for text in texts), texts
