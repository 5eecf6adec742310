"""The documentation a user and a distributor read: the README, docs/, the changelog, the
man page and ``--help``.

- The README renders with the package index's renderer (``readme_renderer``, Markdown as
  PyPI renders ``text/markdown``), without a warning, and is at most 12 KB.
- Every relative link of the README, docs/*.md and CHANGELOG.md names a file of the
  repository, and every ``#anchor`` a heading of that file (GitHub's slugs).
- Every ``sitewarden ...`` command line shown in them (code blocks and code spans) parses
  with the CLI's own parser; a synopsis line (``[--python EXE]``) names only options the
  subcommand knows.
- No page speaks of how the project was made: no issue numbers, sessions, commit hashes or
  "next step" notes.
- The man page names every subcommand and option the parser knows, the environment
  variables, the exit statuses and the files the package installs; each subcommand's
  ``--help`` ends with an example.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from harness.cli import CLI
from sitewarden.cli.commands import build_parser
from sitewarden.settings import TRUE_VALUES

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PAGES = [README, REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
MAN = REPO / "debian" / "sitewarden.1"
COMMANDS = ("install", "uninstall", "status", "check")


def _ids(paths):
    return [str(p.relative_to(REPO)) for p in paths]


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


FENCE = re.compile(r"^(```|~~~)")


def _split(text: str):
    """``(prose, code)``: the lines outside and inside fenced code blocks."""
    prose, code, inside = [], [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        (code if inside else prose).append(line)
    return prose, code


def _prose_without_spans(lines) -> str:
    """The prose with inline code spans removed (links inside them are not links)."""
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", "\n".join(lines))


# ----------------------------------------------------------------- rendering and size


def test_readme_renders_on_the_package_index():
    """PyPI renders a ``text/markdown`` long description with readme_renderer's Markdown
    renderer (GFM); it must render, and without a warning (a missing renderer warns)."""
    md = pytest.importorskip("readme_renderer.markdown")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        html = md.render(_text(README), variant="GFM")
    assert html, "readme_renderer could not render README.md"
    assert "<h1" in html and "<pre>" in html and "<table>" in html


def test_readme_is_the_long_description_and_markdown():
    text = _text(REPO / "pyproject.toml")
    assert re.search(r'^readme = "README.md"$', text, re.M), "pyproject's readme field"


def test_readme_is_at_most_12_kb():
    size = len(README.read_bytes())
    assert size <= 12_000, "README.md is %d bytes" % size


# ----------------------------------------------------------------- links

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"`|\*\*|\*|_(?=\W)|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set:
    prose, _ = _split(_text(path))
    seen, out = {}, set()
    for line in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_relative_links_resolve(page):
    prose, _ = _split(_text(page))
    broken = []
    for target in LINK.findall(_prose_without_spans(prose)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or REPO not in (dest, *dest.parents):
            broken.append("%s: no such file" % target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append("%s: no heading with that anchor in %s" % (
                target, dest.relative_to(REPO)))
    assert not broken, broken


def test_the_readme_links_every_docs_page():
    prose, _ = _split(_text(README))
    linked = {t.partition("#")[0] for t in LINK.findall(_prose_without_spans(prose))}
    pages = {"docs/" + p.name for p in (REPO / "docs").glob("*.md")}
    assert pages <= linked, sorted(pages - linked)


# ----------------------------------------------------------------- command lines

SHOWN = re.compile(r"(?:^|[\s(`])(?:sudo\s+)?(?:\S*/)?sitewarden\s+((?:%s|--help|--version)\b.*)"
                   % "|".join(COMMANDS))


def _command_lines(page: Path):
    """Every ``sitewarden ...`` command line the page shows: in code blocks, and in code
    spans of the prose."""
    prose, code = _split(_text(page))
    spans = re.findall(r"(`+)((?:(?!\1).)+?)\1", "\n".join(prose))
    out = []
    for line in code + [s for _, s in spans]:
        line = re.sub(r"^\s*\$\s+", "", line)
        m = SHOWN.search(line)
        if m:
            out.append(m.group(1).strip())
    return out


def _one_command(rest: str) -> str:
    """The command itself: a comment, a pipe or the closing parenthesis of the prose that
    quotes it cut off."""
    rest = rest.replace("\\|", "|").split("`")[0]
    rest = re.sub(r"<[^<>]*>", "PLACEHOLDER", rest)  # `--site-dir <the venv's site-packages>`
    if "[" not in rest:  # a synopsis keeps its alternatives: [--user | --site-dir DIR]
        rest = re.split(r"\s\|\s|\s*\|\|", rest)[0]
    rest = re.split(r"\s+#\s", rest)[0]
    return rest.rstrip(").,;`").strip()


def _subparsers(parser):
    for action in parser._actions:
        if getattr(action, "choices", None) and isinstance(action.choices, dict):
            return action.choices
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_command_lines_parse(page):
    parser = build_parser()
    subs = _subparsers(parser)
    bad = []
    for shown in _command_lines(page):
        line = _one_command(shown)
        if "[" in line:
            # a synopsis: `check [--python EXE | --all] [--json]`
            command = line.split()[0]
            known = {o for a in subs[command]._actions for o in a.option_strings}
            unknown = set(re.findall(r"--[a-z][a-z-]*", line)) - known
            if unknown:
                bad.append("%s: %s" % (line, sorted(unknown)))
            continue
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            bad.append("%s: %s" % (line, exc))
            continue
        if argv in (["--help"], ["--version"]) or argv[-1] in ("--help", "-h"):
            argv = argv[:-1] or ["status"]
        try:
            parser.parse_args(argv)
        except SystemExit:
            bad.append(line)
    assert not bad, bad


def test_the_readme_shows_commands():
    """The parse test has something to parse: the README shows install, status, check."""
    shown = " ".join(_command_lines(README))
    for command in ("install", "uninstall", "status", "check"):
        assert "%s --python" % command in shown or "%s --all" % command in shown, command


def test_the_readme_holds_the_two_commands_ci_runs():
    _, code = _split(_text(README))
    assert any(re.match(r"^make check\b", c) for c in code)
    assert any(re.match(r"^make test\b", c) for c in code)
    makefile = _text(REPO / "Makefile")
    assert re.search(r"^check:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert re.search(r"^make test\b", _text(REPO / ".ci" / "run"), re.M)


# ----------------------------------------------------------------- no history

HISTORY = [
    (re.compile(r"\bissues?\b\s*#?\d*", re.I), "an issue"),
    (re.compile(r"\bsessions?\b", re.I), "a session"),
    (re.compile(r"\bnext steps?\b", re.I), "a next step"),
    (re.compile(r"#\d{1,5}\b(?![\d.])"), "an issue or pull request number"),
    # (a finding's id, what quarantine and acknowledge take, is none)
    (re.compile(r"(?<!quarantine )(?<!acknowledge )"
                r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"), "a commit hash"),
]


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_no_page_speaks_of_how_the_project_was_made(page):
    text = _text(page)
    found = ["%s: %r" % (what, m.group(0)) for rx, what in HISTORY for m in rx.finditer(text)]
    assert not found, found


# ----------------------------------------------------------------- man page and --help


def _man() -> str:
    return _text(MAN).replace("\\-", "-")


def test_man_page_names_every_command_and_option():
    man = _man()
    parser = build_parser()
    subs = _subparsers(parser)
    missing = [c for c in subs if not re.search(r"^\.B sitewarden %s\b" % c, man, re.M)]
    options = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
    for sub in subs.values():
        for action in sub._actions:
            options.update(o for o in action.option_strings if o.startswith("--"))
            if action.choices and not isinstance(action.choices, dict):
                options.update(action.choices)
    missing += [o for o in sorted(options) if not re.search(r"(?<![\w-])%s(?![\w-])"
                                                             % re.escape(o), man)]
    assert not missing, missing


def test_man_page_names_environment_exit_status_and_files():
    man = _man()
    section = {}
    for m in re.finditer(r"^\.SH (.+)$", man, re.M):
        end = man.find("\n.SH ", m.end())
        section[m.group(1).strip('"')] = man[m.end():end if end > 0 else None]
    for name in ("SITEWARDEN_DISABLE", "SITEWARDEN_SILENCE", "SITEWARDEN_DEBUG"):
        assert name in section["ENVIRONMENT"], name
    for status in ("0", "1", "2", "130", "141"):
        assert re.search(r"^\.B %s$" % status, section["EXIT STATUS"], re.M), status
    files = section["FILES"]
    for path in ("/usr/lib/python3/dist-packages/sitewarden.pth",
                 "/usr/share/sitewarden/dpkg-hook", "/etc/apt/apt.conf.d/20sitewarden",
                 "/etc/dpkg/dpkg.cfg.d/sitewarden", "/etc/sitewarden/silence"):
        assert path in files, path
    # The package ships no .start file (the hook policy: the .pth alone before 3.18).
    assert "sitewarden.start" not in man
    assert "comment out" in section["APT HOOK"]
    assert "older than 23" not in man
    assert "older than 23" not in _text(REPO / "debian" / "control")


def test_every_page_naming_the_disable_words_names_all_of_them():
    """The words that turn the guard off are ``settings.TRUE_VALUES``: the man page, the
    README and the warnings page list every one of them, and no other."""
    words = set(TRUE_VALUES)
    man = _man()
    entry = man[man.index(".B SITEWARDEN_DISABLE"):man.index(".B SITEWARDEN_SILENCE")]
    said = re.search(r"Only (.+?) \(any case\) turn it off", entry)
    assert said and set(said.group(1).split(", ")) == words, entry
    for page in (README, REPO / "docs" / "warnings.md"):
        text = " ".join(_text(page).split())
        said = re.search(r"SITEWARDEN_DISABLE(?:` takes a true word|=(\w+)`) \((.+?),? in any "
                         r"case\)", text)
        assert said, page
        listed = {w.strip("` ") for w in re.split(r",|\bor\b", said.group(2)) if w.strip("` ")}
        listed |= {said.group(1)} if said.group(1) else set()
        assert listed == words, (page, listed)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_subcommand_help_shows_an_example(command):
    proc = subprocess.run([*CLI, command, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    tail = proc.stdout[proc.stdout.index("example:"):]
    example = tail.splitlines()[1].strip()
    assert re.match(r"^(sudo )?sitewarden %s\b" % command, example), proc.stdout
    argv = shlex.split(example)
    build_parser().parse_args(argv[argv.index("sitewarden") + 1:])


def test_top_level_help_shows_examples_that_parse():
    proc = subprocess.run([*CLI, "--help"], capture_output=True, text=True)
    block = proc.stdout[proc.stdout.index("examples:"):].split("\n\n")[0]
    lines = [re.split(r"\s{2,}", line.strip())[0] for line in block.splitlines()[1:]]
    assert lines
    for line in lines:
        argv = shlex.split(line)
        build_parser().parse_args(argv[argv.index("sitewarden") + 1:])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-n", "0"]))
