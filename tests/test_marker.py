"""PEP 668 marker parsing: real files, every malformation still applies."""

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.ini_corpus import run_check
from harness.interpreters import pyenv_interpreters
from harness.spread import target_params
from sitewarden.facts import marker
from sitewarden.facts.text import unwrap_lines

SRC = Path(marker.__file__).resolve().parents[2]

DEBIAN_LIKE = """\
[externally-managed]
Error=To install Python packages system-wide, try apt install
 python3-xyz, where xyz is the package you are trying to
 install.
Error-de_DE=Um Python-Pakete systemweit zu installieren, apt verwenden.
Error-pt_BR=Para instalar pacotes Python, use o apt.
Error-fr=Pour installer des paquets Python, utilisez apt.
"""


@pytest.fixture
def write(tmp_path):
    def _write(content, name="EXTERNALLY-MANAGED"):
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return str(path)

    return _write


@pytest.mark.parametrize(
    "lang, expected_key",
    [
        (None, "Error"),
        ("de_DE", "Error-de_DE"),
        ("de", "Error"),  # no Error-de key; the full code is not a prefix match
        ("fr_CA", "Error-fr"),  # language part
        ("pt-BR", "Error-pt_BR"),  # pip misses this one
        ("pt_BR", "Error-pt_BR"),
        ("ja_JP", "Error"),
    ],
)
def test_locale_algorithm(write, lang, expected_key):
    m = marker.read(write(DEBIAN_LIKE), lang=lang)
    assert m.exists and m.key.lower() == expected_key.lower()
    assert m.problem is None


def test_continuation_lines_kept(write):
    m = marker.read(write(DEBIAN_LIKE), lang="C")
    assert m.text.splitlines() == [
        "To install Python packages system-wide, try apt install",
        "python3-xyz, where xyz is the package you are trying to",
        "install.",
    ]


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "no [externally-managed] section"),
        (b"\x00\xff\xfe garbage \x80", "not valid UTF-8"),
        (b"[externally-managed]\nError=a\nError=b\n", "DuplicateOptionError"),
        (b"[externally-managed]\nError=a\n[externally-managed]\nError=b\n",
         "DuplicateSectionError"),
        (b"Error=no section\n", "MissingSectionHeaderError"),
        (b"[other]\nError=x\n", "no [externally-managed] section"),
        (b"[externally-managed]\nHint=x\n", "no Error key"),
        (b"[externally-managed]\nError=\n", "no Error key"),
    ],
)
def test_unusable_marker_still_applies_with_default_message(write, content, problem):
    path = write(content)
    m = marker.read(path, lang=None)
    assert m.exists and m.text is None
    assert problem in m.problem
    assert "virtual environment" in m.message and problem in m.message
    assert marker.marker_exists(path)


def test_bom_and_crlf_are_fine(write):
    m = marker.read(write(b"\xef\xbb\xbf[externally-managed]\r\nError=use apt\r\n"), lang=None)
    assert m.text == "use apt" and m.problem is None


def test_directory_marker_applies(tmp_path):
    path = tmp_path / "EXTERNALLY-MANAGED"
    path.mkdir()
    m = marker.read(str(path), lang=None)
    assert m.exists and m.problem == "it is a directory"


def test_dangling_symlink_and_loop_apply(tmp_path):
    dangling = tmp_path / "EXTERNALLY-MANAGED"
    dangling.symlink_to(tmp_path / "nowhere")
    m = marker.read(str(dangling), lang=None)
    assert m.exists and "cannot read" in m.problem
    loop = tmp_path / "loop" / "EXTERNALLY-MANAGED"
    loop.parent.mkdir()
    os.symlink(str(loop), str(loop))
    m = marker.read(str(loop), lang=None)
    assert m.exists and "cannot read" in m.problem


def test_huge_marker_is_not_parsed(write):
    m = marker.read(write(b"[externally-managed]\nError=" + b"x" * (marker.MAX_MARKER_BYTES + 10)))
    assert m.exists and "larger than" in m.problem


def test_missing_marker(tmp_path):
    m = marker.read(str(tmp_path / "EXTERNALLY-MANAGED"))
    assert not m.exists


@pytest.mark.parametrize(
    "environ, lang",
    [
        ({"LANG": "pt_BR.UTF-8"}, "pt_BR"),
        ({"LANG": "de_DE.UTF-8", "LC_MESSAGES": "fr_FR.UTF-8"}, "fr_FR"),
        ({"LANG": "de_DE.UTF-8", "LC_ALL": "sv_SE@euro"}, "sv_SE"),
        ({"LANG": "C.UTF-8"}, None),
        ({"LANG": "POSIX"}, None),
        ({}, None),
    ],
)
def test_language_from_environment(environ, lang):
    # The test process never called setlocale(LC_ALL, ""), like a guarded process.
    assert marker.message_language(environ) == lang


@pytest.mark.parametrize("kind", ["fifo", "character device"])
def test_special_files_apply_without_blocking(tmp_path, kind):
    """A FIFO (no writer: open() would block forever) or a device named
    EXTERNALLY-MANAGED: applies, with the default message, at once."""
    path = tmp_path / "EXTERNALLY-MANAGED"
    if kind == "fifo":
        os.mkfifo(str(path))
    else:
        path.symlink_to("/dev/zero")
    m = marker.read(str(path), lang=None)
    assert m.exists and m.problem == "not a regular file"
    assert marker.marker_exists(str(path))


# ------------------------------------------------- the marker read without configparser

PYENV = [pytest.param(i.executable, id=i.id) for i in pyenv_interpreters()]


@pytest.mark.parametrize("python", PYENV)
def test_simple_ini_reads_as_configparser_does(python):
    """Wherever ``simple_ini`` answers, it answers as that interpreter's configparser
    (pip's reader of the marker) does, on edge cases and thousands of random texts."""
    got = run_check(lambda argv: subprocess.run(argv, capture_output=True, text=True),
                    python, SRC)
    assert got["mismatches"] == [] and got["simple"] > 1000, got


def test_plain_marker_costs_no_configparser(write):
    """Debian's marker (and any plain INI one) is read without importing configparser
    (re, enum, collections: ~30M instructions of every `check`); what configparser
    alone reports still comes from it."""
    path = write(DEBIAN_LIKE)
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c",
         "import sys; sys.path.insert(0, sys.argv[1])\n"
         "from sitewarden.facts import marker\n"
         "m = marker.read(sys.argv[2], lang='pt_BR')\n"
         "print(m.key, 'configparser' in sys.modules, 're' in sys.modules)", str(SRC), path],
        capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["Error-pt_BR", "False", "False"], proc.stderr
    m = marker.read(write("[DEFAULT]\nError=from defaults\n[externally-managed]\n"), lang=None)
    assert m.text == "from defaults"  # configparser's DEFAULT section, as pip reads it


@pytest.mark.skipif(not glob.glob("/usr/lib/python3*/EXTERNALLY-MANAGED"),
                    reason="no Debian marker here")
def test_debians_marker_is_plain_ini():
    import configparser

    for path in glob.glob("/usr/lib/python3*/EXTERNALLY-MANAGED"):
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        assert marker.simple_ini(text) == {s: dict(parser[s]) for s in parser.sections()}


@pytest.mark.parametrize("root_ns", target_params("roots")[:1], indirect=True)
def test_a_diverted_marker_is_named(root_ns):
    """PEP 668 recommends that a single-application image remove the marker with
    ``dpkg-divert --local --rename`` (Debian 13's root, chrooted: its own dpkg database):
    ``status`` and ``check`` name the diversion, where the marker is kept, and what a
    guard still does, instead of "no marker"."""
    t = root_ns
    marker = json.loads(t.cli("check", "--python", t.executable, "--json").stdout)["marker"]
    path = marker["marker_path"]
    assert marker["marker_exists"] and "diverted_to" not in marker, marker
    proc = t.run(["dpkg-divert", "--local", "--rename", "--add", path])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    marker = json.loads(t.cli("check", "--python", t.executable, "--json").stdout)["marker"]
    assert not marker["marker_exists"] and marker["diverted_to"] == path + ".distrib", marker
    for command in ("status", "check"):
        text = unwrap_lines(t.cli(command, "--python", t.executable).stdout)
        assert "marker: diverted (the image opted out of PEP 668 with dpkg-divert; the " \
            "distribution's marker is kept at %s.distrib)" % path in text, text
        assert "none (expected at" not in text, text
