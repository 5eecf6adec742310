"""What the documentation says the code prints or accepts, checked against the code.

- The install report shown in docs/warnings.md is what ``install_report.format_report``
  prints for the same copies and requirement, line for line.
- The ``SITEWARDEN_DEBUG`` line shown there has ``failopen``'s format, names a function that
  exists and swallows failures with the "skipped" text shown, and the module whose absence
  it shows exists.
- Every list of true words (``SITEWARDEN_DISABLE``, ``SITEWARDEN_SILENCE``) in the README,
  docs/*.md, the changelog and the man page is ``settings.TRUE_VALUES``, and every list of
  false words ``settings.FALSE_VALUES`` (the empty value aside).
- No page claims the Debian package guards every python3.X "installed later" without saying
  up to which version: its ``.pth`` hook stops running in Python 3.18 (PEP 829).
- The man page names only files that are on the machine (or says they are not installed),
  and lists the silence file beside a deployment and the per-user cache.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from sitewarden import failopen, settings
from sitewarden.facts.records import ShadowCase, Violation
from sitewarden.guard import install_report

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
CHANGELOG = REPO / "CHANGELOG.md"
WARNINGS = REPO / "docs" / "warnings.md"
MAN = REPO / "debian" / "sitewarden.1"
DOCS = sorted((REPO / "docs").glob("*.md"))
TEXTS = [README, CHANGELOG, *DOCS, MAN]


def _ids(paths):
    return [str(p.relative_to(REPO)) for p in paths]


def _text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".1":  # roff: the minus signs and font changes out of the way
        text = text.replace("\\-", "-")
        text = re.sub(r"^\.(?:B|I|BR|IR|RB|RI)\s+", "", text, flags=re.M)
    return text


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end > 0 else None]


def _code_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced code block, without the fence's own indentation (a block
    inside a list item is indented)."""
    blocks, block, indent = [], None, 0
    for line in text.splitlines():
        fence = re.match(r"^(\s*)```", line)
        if fence:
            if block is None:
                block, indent = [], len(fence.group(1))
            else:
                blocks.append(block)
                block = None
        elif block is not None:
            block.append(line[indent:] if line[:indent].isspace() else line)
    return blocks


# ----------------------------------------------------------------- the install report

SHADOW_LINE = re.compile(r"^  (?P<module>\S+): (?P<wpath>\S+) \((?P<wdist>\S+) (?P<wver>\S+)\) "
                         r"shadows (?P<spath>\S+) \((?P<sdist>\S+) (?P<sver>\S+)\)$")
VIOLATION_LINE = re.compile(r"^  (?P<consumer>\S+) (?P<cver>\S+) requires '(?P<req>.+)', but "
                            r"(?P<installed>\S+) is installed: .*$")


def _report_example() -> list[str]:
    section = _section(_text(WARNINGS), "## After an install")
    blocks = _code_blocks(section)
    assert len(blocks) == 1, "one example of the report in 'After an install'"
    lines = blocks[0]
    first = [i for i, line in enumerate(lines) if line.startswith("sitewarden: ")]
    assert first, "the example shows the report's first line:\n" + "\n".join(lines)
    return lines[first[0]:]


def _records(example: list[str]):
    """The copies and requirements that the example's lines name."""
    cases, violations = [], []
    for line in example[1:-1]:
        shadow, broken = SHADOW_LINE.match(line), VIOLATION_LINE.match(line)
        assert shadow or broken, "not a line the install report prints: %r" % line
        if shadow:
            cases.append(ShadowCase.from_json({
                "module": shadow["module"], "comparison": "older",
                "winner": {"class": "local", "path": shadow["wpath"],
                           "distribution": shadow["wdist"], "version": shadow["wver"]},
                "shadowed": [{"class": "distro", "path": shadow["spath"],
                              "distribution": shadow["sdist"], "version": shadow["sver"]}]}))
        else:
            requires = re.match(r"[A-Za-z0-9._-]+", broken["req"]).group(0)
            violations.append(Violation.from_json({
                "consumer": broken["consumer"], "consumer_version": broken["cver"],
                "requirement": broken["req"], "requires": requires,
                "installed": broken["installed"], "status": "violated"}))
    return cases, violations


def test_the_install_report_example_is_what_the_code_prints():
    example = _report_example()
    cases, violations = _records(example)
    assert cases and violations, "the example shows a shadowed module and a broken requirement"
    printed = install_report.format_report(cases, violations).splitlines()
    assert example == printed, "docs/warnings.md shows:\n%s\nthe code prints:\n%s" % (
        "\n".join(example), "\n".join(printed))


# ----------------------------------------------------------------- the debug line

DEBUG_LINE = re.compile(r"^sitewarden: debug: (?P<where>\S+) failed \((?P<exc>.+)\); "
                        r"skipped: (?P<skipped>.+)$")


def test_the_debug_example_has_the_format_failopen_prints():
    source = inspect.getsource(failopen.swallowed)
    assert '"sitewarden: debug: %s failed (%s); skipped: %s\\n"' in source, (
        "failopen's format changed: update DEBUG_LINE and docs/warnings.md")
    section = _section(_text(WARNINGS), "## When a warning you expected does not come")
    lines = [line.strip() for block in _code_blocks(section) for line in block
             if line.strip().startswith("sitewarden: debug:") and " failed (" in line]
    assert len(lines) == 1, lines
    shown = DEBUG_LINE.match(lines[0])
    assert shown, lines[0]

    # Where: a function that exists and swallows a failure with the "skipped" text shown.
    module_name, _, function = shown["where"].rpartition(".")
    module = importlib.import_module(module_name)
    assert hasattr(module, function), "%s has moved: name where it is now" % shown["where"]
    texts = re.findall(r'_?swallowed\(\s*"([^"]*)"', inspect.getsource(getattr(module, function)))
    patterns = [re.escape(t).replace("%r", "'[^']*'").replace("%s", ".*") for t in texts]
    assert any(re.fullmatch(p, shown["skipped"]) for p in patterns), (shown["skipped"], texts)

    # What failed: the module the example deletes exists, and the prose names its file.
    missing = re.search(r"cannot import name '(\w+)' from '([\w.]+)'|No module named '([\w.]+)'",
                        shown["exc"])
    assert missing, shown["exc"]
    name = missing.group(3) or "%s.%s" % (missing.group(2), missing.group(1))
    assert importlib.util.find_spec(name) is not None, name
    assert "`sitewarden/%s.py`" % "/".join(name.split(".")[1:]) in section, name


# ----------------------------------------------------------------- true and false words

#: A word of pip's boolean vocabulary, written plain or as a code span.
_WORD = r"`?(?:yes|true|false|off|on|no|1|0|y|t|n|f)\b`?"
#: Three or more of them in a row, separated by commas, "or", "and" or slashes.
WORD_LIST = re.compile(r"(?<![\w`.-])%s(?:\s*(?:,|/|\bor\b|\band\b)\s*(?:or\s+|and\s+)?%s){2,}"
                       r"(?![\w`-])" % (_WORD, _WORD), re.I)
STRONG_TRUE = {"1", "yes", "true"}
STRONG_FALSE = {"0", "no", "false"}


def _word_lists(text: str):
    """``(text, words)`` of each list of boolean words: ``X=1` (or `yes`, ...)`` counts the
    ``1``; a list that ends in "..." gives examples, not the set, and is left out."""
    flat = " ".join(text.split())
    for m in WORD_LIST.finditer(flat):
        if flat.startswith("...", m.end()):
            continue
        words = [w.strip("`").lower() for w in re.findall(_WORD, m.group(0), re.I)]
        value = re.search(r"=(\w+)`?\s*\((?:or\s+)?$", flat[:m.start()])
        if value:
            words.insert(0, value.group(1).lower())
        yield m.group(0), words


@pytest.mark.parametrize("page", TEXTS, ids=_ids(TEXTS))
def test_every_list_of_true_or_false_words_is_the_settings_one(page):
    true, false = set(settings.TRUE_VALUES), set(settings.FALSE_VALUES) - {""}
    bad = []
    for shown, words in _word_lists(_text(page)):
        said = set(words)
        if said & STRONG_TRUE and said & STRONG_FALSE:
            bad.append("true and false words mixed: %r" % shown)
        elif said & STRONG_TRUE and said != true:
            bad.append("%r: the true words are %s" % (shown, ", ".join(settings.TRUE_VALUES)))
        elif said & STRONG_FALSE and said != false:
            bad.append("%r: the false words are %s" % (shown, ", ".join(sorted(false))))
    assert not bad, bad


def test_the_word_lists_are_found():
    """The test above has something to check: the README, the warnings page and the man page
    each list the true words, the warnings page and the man page the false ones too."""
    for page, kinds in ((README, {"true"}), (WARNINGS, {"true", "false"}),
                        (MAN, {"true", "false"})):
        found = set()
        for _shown, words in _word_lists(_text(page)):
            found |= {"true"} if set(words) & STRONG_TRUE else set()
            found |= {"false"} if set(words) & STRONG_FALSE else set()
        assert kinds <= found, (page.name, found)
    # A list written the old, short way is caught.
    assert [w for _, w in _word_lists("only `1`, `yes`, `true` or `on`")] == [
        ["1", "yes", "true", "on"]]
    assert [w for _, w in _word_lists("Only 1, yes, true, on, y, t (any case)")] == [
        ["1", "yes", "true", "on", "y", "t"]]


# ----------------------------------------------------------------- Python 3.18


@pytest.mark.parametrize("page", TEXTS, ids=_ids(TEXTS))
def test_installed_later_is_bounded_by_python_3_17(page):
    """The Debian package ships a .pth hook only: it guards a python3.X installed later
    only while CPython runs .pth import lines, through 3.17."""
    flat = " ".join(_text(page).split())
    for m in re.finditer(r"installed later", flat):
        around = flat[max(0, m.start() - 200):m.end() + 200]
        assert "3.17" in around, around


def test_the_readme_and_the_man_page_say_what_a_python_3_18_needs():
    for page in (README, MAN):
        flat = " ".join(_text(page).split())
        assert re.search(r"sitewarden install --python python3\.18\b", flat), page.name
        assert ".start" in flat, page.name


# ----------------------------------------------------------------- the man page


def _man_sections() -> dict:
    man = _text(MAN)
    out = {}
    for m in re.finditer(r"^\.SH (.+)$", man, re.M):
        end = man.find("\n.SH ", m.end())
        out[m.group(1).strip('"')] = man[m.end():end if end > 0 else None]
    return out


def test_the_man_page_points_only_to_installed_files_or_says_they_are_not():
    """The .deb installs the man page, /usr/share/doc/sitewarden/copyright and
    changelog.gz, not the project's docs/ pages: the man page names docs/ only as the
    project's source tree, never as the package's documentation."""
    man = " ".join(_text(MAN).split())
    assert "package's documentation" not in man
    assert "/usr/share/doc/sitewarden/changelog.gz" in _man_sections()["SEE ALSO"]
    for m in re.finditer(r"docs/[\w-]+\.md", man):
        around = man[max(0, m.start() - 400):m.end() + 400]
        assert "source tree" in around and "not install" in around, around
    for path in re.findall(r"/usr/share/doc/\S+", man):
        assert path.rstrip(".,;)") in ("/usr/share/doc/sitewarden/changelog.gz",
                                       "/usr/share/doc/sitewarden/copyright"), path


def test_the_man_page_lists_the_deployment_silence_file_and_the_cache():
    files = " ".join(_man_sections()["FILES"].split())
    assert settings.SITE_FILE in files
    assert "/usr/lib/python3/dist-packages/%s" % settings.SITE_FILE in files
    assert "$XDG_CACHE_HOME/sitewarden" in files and "~/.cache/sitewarden" in files
