"""PEP 668 marker parsing: real files, every malformation still applies."""

import os

import pytest

from sitewarden.guard import marker

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
