"""The JSON sitewarden writes (``sitewarden.probe.jsonout``, the probe's and the CLI's) and
reads (``sitewarden.cli.jsontext``, the CLI's) is the json module's, byte for byte, and
``check``'s CLI process imports neither ``json`` nor ``re``, ``pathlib``, ``argparse``,
``subprocess`` (its import budget; speed itself is measured in benchmarks/)."""

import json
import os
import subprocess
import sys

import packaging
import pytest

import sitewarden
from sitewarden.cli.jsontext import loads
from sitewarden.probe.jsonout import dumps

SAMPLES = [
    {}, [], "", 0, None, True, {"a": []}, {"b": {}, "a": [1, -2, 2.5, None, True, False]},
    {"s": "x\u00e9\U0001f600\n\"\\\x01\x7f/", "t": (1, "2"), "nested": [[{}], [[]]]},
    [float("nan"), float("inf"), -float("inf"), 1e300, -0.0, 10 ** 30],
    {1: "x"}, {"set": {1}},  # handed to json: an int key, a type JSON has no form for
]


@pytest.mark.parametrize("obj", SAMPLES, ids=range(len(SAMPLES)))
def test_dumps_is_json_dumps_indent_2_sort_keys(obj):
    try:
        expected = json.dumps(obj, indent=2, sort_keys=True)
    except TypeError:
        with pytest.raises(TypeError):
            dumps(obj)
        return
    assert dumps(obj) == expected


@pytest.mark.parametrize("obj", SAMPLES[:-2], ids=range(len(SAMPLES) - 2))
def test_loads_is_json_loads(obj):
    text = json.dumps(obj)
    assert repr(loads(text)) == repr(json.loads(text))
    assert repr(loads(" \n%s\n" % json.dumps(obj, indent=2))) == repr(json.loads(text))


@pytest.mark.parametrize("text", ["", "{", "[1,]", "1 2", "{'a': 1}", "nul", "[1] x"])
def test_loads_refuses_what_json_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads(text)


def test_check_cli_imports_no_json_re_pathlib_argparse_subprocess_nor_collectors():
    code = ("import io, sys; from sitewarden.cli import main; out, sys.stdout = sys.stdout, "
            "io.StringIO(); main.main(['check', '--python', sys.executable, '--json']); "
            "sys.stdout = out; "
            "print(' '.join(sorted(m for m in ('json', 're', 'pathlib', 'argparse', "
            "'subprocess', 'shlex') if m in sys.modules)))\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith(("
            "('sitewarden.detect', 'sitewarden.probe', 'sitewarden.audit', "
            "'sitewarden.facts'))))))")
    # -S: only what the CLI imports (an editable install's import hook imports pathlib)
    paths = [os.path.dirname(os.path.dirname(m.__file__)) for m in (sitewarden, packaging)]
    # Twice: the first run after a source change builds the payload cache (ast, tempfile...);
    # what is measured is a check with the cache in place, as every later one is.
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-S", "-c", "import sys; sys.path[:0] = %r; %s"
                               % (paths, code)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[0].split() == []
    # Detection runs in the target (the probe); the CLI builds its own findings with
    # records.finding, never importing the collectors (check, layout, shadowscan...);
    # render_startup reads the startup section's records; private_cache's rule for where
    # nothing is kept is the payload's too (os and sys only); facts.text fits the text.
    assert lines[1].split() == [
        "sitewarden.facts", "sitewarden.facts.private_cache", "sitewarden.facts.records",
        "sitewarden.facts.startup_records", "sitewarden.facts.text", "sitewarden.probe",
        "sitewarden.probe.jsonout", "sitewarden.probe.runner"]


@pytest.mark.parametrize("argv, plain", [
    (["check"], True), (["check", "--json", "--python", "/x"], True),
    (["status", "--all"], True), (["check", "--python=/x"], False),
    (["check", "--js"], False), (["check", "--json", "--json"], False),
    (["check", "--python", "-x"], False), (["install"], False), ([], False),
    (["check", "--fail-on", "high", "--json"], True), (["status", "--fail-on", "high"], False),
    (["check", "--fail-on", "bogus"], False),
])
def test_plain_forms_skip_argparse_others_do_not(argv, plain):
    from sitewarden.cli import commands, main

    args = main.plain_args(argv)
    assert (args is not None) == plain
    if plain:
        parsed = commands.build_parser().parse_args(argv)
        assert vars(args) == vars(parsed)


def test_the_probes_compact_report_is_json_dumps():
    """The probe's report to the CLI (``indent=None``) goes through ``_json``'s own encoder:
    byte for byte ``json.dumps(obj, sort_keys=True)``, and what it cannot write is left
    to ``json`` (its answer or its error)."""
    import json

    from sitewarden.probe.jsonout import dumps

    for obj in ({"b": [1, 2.5, None, True, "é\n\""], "a": {}, "c": {"z": float("nan")}}, [],
                {1: 2}, {"x": float("inf")}, "text"):
        assert dumps(obj, indent=None) == json.dumps(obj, sort_keys=True)
        assert dumps(obj) == json.dumps(obj, sort_keys=True, indent=2)
    with pytest.raises(TypeError):
        dumps({"a": object()}, indent=None)
