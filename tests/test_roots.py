"""The debootstrapped roots and their chroot namespaces (harness.roots)."""

from __future__ import annotations

import os

import pytest

from harness import roots
from harness.ini_corpus import run_check
from harness.startup_lines import KNOWN_CHECK

pytestmark = [pytest.mark.debian, pytest.mark.roots]

#: (major, minor) each target's interpreter must be: the releases' pythons of 2026.
EXPECTED = {"trixie-python3": (3, 13), "sid-python3": (3, 14), "sid-python3.15": (3, 15)}


def test_root_interpreters_and_isolation(root_ns):
    ns = root_ns
    assert ns.interp.version[:2] == EXPECTED[ns.id] and ns.interp.is_debian_system
    assert ns.marker.as_posix() == "/usr/lib/python%s/EXTERNALLY-MANAGED" % ns.interp.short_version
    assert b"apt install" in ns.read_bytes(str(ns.marker))
    stamp = roots.read_stamp(ns.place.root)
    assert stamp["release"] == ns.release and set(roots.PACKAGES[ns.release]) <= set(
        stamp["packages"])
    # Writable through the overlay, never in the cached root; /proc is the namespace's.
    probe = "/usr/lib/python3/dist-packages/sitewarden-test-probe"
    ns.write_bytes(probe, b"x")
    assert ns.read_bytes(probe) == b"x" and not os.path.exists(str(ns.place.root) + probe)
    assert ns.exists("/proc/self/mounts")
    proc = ns.run(["sh", "-c", "pwd; id -u"], cwd="/usr/lib")
    assert proc.stdout.split() == ["/usr/lib", "0"], proc.stderr
    # The CLI of this checkout runs inside, on the root's own python3.
    proc = ns.run([*ns.cli_argv, "status", "--python", ns.executable])
    assert proc.returncode == 1 and ns.executable in proc.stdout, proc.stdout + proc.stderr
    tmp = ns.place.tmp
    ns.close()
    assert not tmp.exists() and not os.path.exists(str(ns.place.root) + probe)


def test_debian_any_covers_host_and_roots(debian_any):
    ns = debian_any
    proc = ns.run([ns.executable, "-c", "import sys; print(sys.prefix)"])
    assert proc.stdout.strip() == "/usr", proc.stderr
    assert ns.distro_dir.as_posix() == "/usr/lib/python3/dist-packages"


def test_cli_runs_on_each_root_interpreter(root_ns):
    """The CLI run by the root's own interpreter (pipx or a venv on it), not only by
    python3: `check` and `status` read the probe's JSON with that interpreter's ``_json``
    (3.15's scanner asks its context for an ``array_hook`` that 3.14's did not)."""
    ns = root_ns
    cli = [ns.executable, *ns.cli_argv[1:]]
    for args in (["check", "--json"], ["status", "--json"], ["check"]):
        proc = ns.run([*cli, args[0], "--python", ns.executable, *args[1:]])
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
        if "--json" in args:
            assert '"' in proc.stdout and proc.stdout.lstrip().startswith("{"), proc.stdout
    proc = ns.run([ns.executable, "-I", "-S", "-c",
                   "import json, sys; sys.path.insert(0, sys.argv[1]); "
                   "from sitewarden.cli.jsontext import loads\n"
                   "from sitewarden.probe.jsonout import dumps\n"
                   "samples = ({}, [], {'b': [1, -2.5, None, True, 'x\\u00e9']}, [[{}], 10**30])\n"
                   "for obj in samples:\n"
                   "    text = json.dumps(obj, indent=2, sort_keys=True)\n"
                   "    assert dumps(obj) == text and loads(text) == obj, obj\n"
                   "print('ok')", ns.cli_argv[-2]])
    assert proc.stdout.strip() == "ok", proc.stderr


def test_scheme_paths_follow_an_in_process_prefix_change(root_ns):
    """The guard's cached scheme paths never disagree with sysconfig's, whose own cache
    (3.13.1+) follows ``sys.prefix`` when a process moves it (``activate_this.py``)."""
    ns = root_ns
    proc = ns.run([ns.executable, "-I", "-S", "-c",
                   "import sys, sysconfig; sys.path.insert(0, sys.argv[1])\n"
                   "from sitewarden.facts import marker\n"
                   "fresh = lambda: sysconfig.get_paths('posix_prefix')\n"
                   "assert marker.scheme_paths('posix_prefix') == fresh()\n"
                   "sys.prefix = sys.exec_prefix = '/opt/elsewhere'\n"
                   "print(marker.scheme_paths('posix_prefix') == fresh(), "
                   "fresh()['purelib'].startswith('/opt/elsewhere'))",
                   ns.cli_argv[-2]])
    assert proc.stdout.split() == ["True", "True"], proc.stdout + proc.stderr


def test_marker_read_without_configparser_agrees_there(root_ns):
    """``marker.simple_ini`` answers as the root interpreter's own configparser (3.14's
    and 3.15's readers were rewritten), and reads the release's own marker."""
    ns = root_ns
    src = ns.cli_argv[-2]
    got = run_check(ns.run, ns.executable, src, count=2000)
    assert got["mismatches"] == [] and got["simple"] > 500, got
    proc = ns.run([ns.executable, "-I", "-S", "-c",
                   "import sys; sys.path.insert(0, sys.argv[1])\n"
                   "from sitewarden.facts import marker\n"
                   "m = marker.read(sys.argv[2], lang=None)\n"
                   "text = open(sys.argv[2], encoding='utf-8-sig').read()\n"
                   "print(marker.simple_ini(text) is not None, m.problem, "
                   "'configparser' in sys.modules)", src, str(ns.marker)])
    assert proc.stdout.split() == ["True", "None", "False"], proc.stdout + proc.stderr


def test_known_startup_lines_agree_with_their_syntax_tree_there(root_ns):
    """``line_checks.KNOWN_LINES`` is what the root interpreter's own syntax tree says
    of the line (3.13's, 3.14's and 3.15's parsers)."""
    ns = root_ns
    proc = ns.run([ns.executable, "-I", "-S", "-c", KNOWN_CHECK, ns.cli_argv[-2]])
    assert proc.returncode == 0 and proc.stdout.startswith(
        "ModuleNotFoundError: No module named '_distutils_hack'"), proc.stdout + proc.stderr
