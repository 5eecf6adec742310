"""Field holes in the probe: a target whose startup code writes or fails, and a working
directory that was deleted under the shell.

1. ``check`` runs no startup code (its probe starts the target without ``site``) and
   reads the probe's report on a channel of its own; ``status`` starts the target, so
   what startup code prints to stdout or stderr must not matter, and a start that dies
   is named with its exit status and last words; "not a CPython 3.8+ interpreter" only
   when it is not.
2. In a deleted working directory (``mkdir d; cd d; rmdir ../d``; ``''`` on
   ``sys.path`` then names a directory that no longer exists), shadow warnings and
   ``check`` work as anywhere else.

Every scenario runs on every target (``guarded_target``): the hermetic CPythons,
Debian 12's python in a mount namespace and the roots' interpreters.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess

from harness.guarded import GuardedPython
from harness.spread import rotated

warnings_of = GuardedPython.stderr_warnings


def check_json(t, cwd="/"):
    """``sitewarden check --python <t> --json``: ``(exit status, report or None, stderr)``."""
    proc = t.cli("check", "--python", t.executable, "--json", cwd=cwd)
    report = json.loads(proc.stdout) if proc.returncode in (0, 1) else None
    return proc.returncode, report, proc.stderr


def sitecustomize_path(t):
    """Where ``import sitecustomize`` finds its module in ``t`` (the standard library
    directory comes first on ``sys.path``: Debian's own sitecustomize lives there)."""
    return t.stdlib / "sitecustomize.py"


# ------------------------------------------------ 1. startup code that writes or fails


PRINTING_PTHS = {
    "swr-stdout.pth": b'import sys; print("hello from a .pth on stdout")\n',
    "swr-stderr.pth": b'import sys; sys.stderr.write("hello from a .pth on stderr\\n")\n',
    "swr-raises.pth": b"import swr_no_such_module_anywhere\n",
}


@rotated()
def test_startup_code_that_prints_or_raises_does_not_break_check(guarded_target):
    """A ``.pth`` printing to stdout, one printing to stderr and one raising at every
    start (``site`` reports it and goes on): ``check`` and ``status`` still work, see the
    guard loaded, and the start's stderr is kept (``status --live`` shows it)."""
    t = guarded_target
    for name, line in PRINTING_PTHS.items():
        t.put(t.local_dir / name, data=line)
    proc = t.python("-c", "pass")
    assert "hello from a .pth on stdout" in proc.stdout, proc.stdout + proc.stderr
    assert "swr_no_such_module_anywhere" in proc.stderr, proc.stderr

    status, report, stderr = check_json(t)
    assert status in (0, 1), stderr
    assert report["interpreter"]["executable"] and report["guard"]["active"] is True, report
    assert not [f for f in report["findings"] if f["kind"] == "guard-not-active"], report

    proc = t.cli("status", "--live", "--python", t.executable, "--json")
    data = json.loads(proc.stdout)
    # The raising .pth is a high finding: check's gate fails, and status says so.
    assert proc.returncode == 1 and data["verdict"]["exit"] == 1, proc.stderr
    assert data["active"] is True, data
    assert "hello from a .pth on stderr" in data["startup_stderr"], data
    assert "swr_no_such_module_anywhere" in data["startup_stderr"], data
    assert "hello from a .pth on stdout" not in data["startup_stderr"], data


@rotated()
def test_startup_that_exits_fails_status_and_not_check(guarded_target):
    """A sitecustomize that ends the process (``os._exit(3)``, or ``sys.exit(3)``, which
    CPython turns into a fatal error at startup): ``status --live``, which starts the target,
    fails with the exit status and the last line the target wrote on stderr, never "not a
    CPython 3.8+ interpreter"; ``check`` never runs it and lists it."""
    t = guarded_target
    where = sitecustomize_path(t)
    t.put(where, data=b'import os, sys\nsys.stderr.write("swr: sitecustomize gives up\\n")\n'
                      b"sys.stderr.flush()\nos._exit(3)\n")
    proc = t.cli("status", "--live", "--python", t.executable, "--json")
    data = json.loads(proc.stdout)
    assert data["active"] is False and proc.returncode == 1, proc.stdout + proc.stderr
    assert "exit status 3" in data["startup_stderr"] or "swr: sitecustomize gives up" in \
        data["startup_stderr"], data
    status, report, stderr = check_json(t)
    assert status in (0, 1) and "gives up" not in stderr, stderr
    (f,) = [f for f in report["startup"]["files"] if f["kind"] == "sitecustomize"]
    assert f["path"] == str(where), f
    assert report["guard"]["active"] is True, report["guard"]

    t.put(where, data=b"import sys\nsys.exit(3)\n")
    status, report, stderr = check_json(t)
    assert status in (0, 1), stderr


def test_check_runs_no_exit_handler_of_startup_code(make_hermetic, tmp_path):
    """``check`` starts its target without ``site``: the exit handler a ``.pth`` would
    register is never registered, so never runs."""
    from harness import pyenv_interpreters
    from harness.cli import CLI

    hp = make_hermetic(pyenv_interpreters()[-1])
    ran = tmp_path / "swr-exit-handler-ran"
    (hp.local_dir / "swr-atexit.pth").write_text(
        "import atexit; atexit.register(lambda: open(%r, 'a').write('ran\\n'))\n" % str(ran))
    proc = subprocess.run([*CLI, "check", "--python", str(hp.executable), "--json"],
                          env=hp.env(), capture_output=True, text=True, timeout=300, cwd="/")
    assert proc.returncode in (0, 1), proc.stderr
    json.loads(proc.stdout)
    assert not ran.exists()


NOT_PYTHON = b"#!/bin/sh\necho 'usage: swr-tool [--help]'\n"


@rotated()
def test_a_program_that_is_not_python_is_named_so(guarded_target):
    """A shell script given as ``--python``: "not a CPython 3.8+ interpreter", with what
    it printed."""
    t = guarded_target
    tool = t.tmp / "swr-tool"
    t.put(tool, data=NOT_PYTHON, mode=0o755)
    proc = t.cli("check", "--python", str(tool))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("sitewarden: error: %s: not a CPython 3.8+ interpreter" % tool), line
    assert "usage: swr-tool [--help]" in line, line


# ------------------------------------------------ 2. a deleted working directory


def in_deleted_cwd(t, argv, env=None):
    """``argv`` run where ``t`` runs, in a directory made for it and removed before
    ``argv`` starts (the shell's ``mkdir d; cd d; rmdir ../d``)."""
    gone = t.tmp / "swr-gone"
    shell = 'mkdir "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"'
    return t.run(["/bin/sh", "-c", shell, "sh", str(gone), *argv], env=env)


#: Every failure the guard swallows is told on stderr ("sitewarden: debug: ...").
DEBUG = {"SITEWARDEN_DEBUG": "1"}


@rotated()
def test_deleted_working_directory_keeps_shadow_warnings(guarded_target):
    """A script importing a shadowing module, and ``-c`` (``''`` first on ``sys.path``,
    naming the deleted directory), run from a deleted working directory: the warning
    is there."""
    t = guarded_target
    t.add_shadowed(["swr_cwdgone"])
    app = t.tmp / "app"
    app.mkdir()
    app.chmod(0o755)
    script = app / "main.py"
    script.write_text("import swr_cwdgone\nprint(swr_cwdgone.__file__)\n")
    proc = in_deleted_cwd(t, [t.executable, str(script)], env=DEBUG)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(t.local_dir / "swr_cwdgone.py"), proc.stdout
    shown = [w for w in warnings_of(proc) if w[2] == "ShadowWarning"]
    assert [w[:2] for w in shown] == [(str(script), 1)], proc.stderr
    assert shown[0][3].startswith("'swr_cwdgone' is imported from %s"
                                  % (t.local_dir / "swr_cwdgone.py")), shown
    assert "Traceback" not in proc.stderr and "sitewarden: debug" not in proc.stderr, \
        proc.stderr

    proc = in_deleted_cwd(t, [t.executable, "-c", "import swr_cwdgone"], env=DEBUG)
    assert proc.returncode == 0, proc.stderr
    shown = [w for w in warnings_of(proc) if w[2] == "ShadowWarning"]
    assert len(shown) == 1 and shown[0][3].startswith("'swr_cwdgone' is imported from"), \
        proc.stderr
    assert "sitewarden: debug" not in proc.stderr, proc.stderr


@rotated()
def test_check_from_a_deleted_working_directory(guarded_target):
    """``sitewarden check --python <target>`` run from a deleted working directory works,
    reports the shadowed module, and describes ``''`` as a directory that does not
    exist."""
    t = guarded_target
    t.add_shadowed(["swr_cwdgone"])
    argv = [*t.cli_argv, "check", "--python", t.executable, "--json"]
    proc = in_deleted_cwd(t, argv)
    assert "Traceback" not in proc.stderr, shlex.join(argv) + "\n" + proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    shadowed = [c["module"] for c in report["shadowing"]["modules"]]
    assert "swr_cwdgone" in shadowed, report["shadowing"]
    assert report["interpreter"]["cwd"] is None, report["interpreter"]
    entry = report["layout"]["entries"][0]
    assert (entry["path"], entry["class"], entry["exists"], entry["realpath"]) == \
        ("", "script", False, None), entry
    missing = [f["message"] for f in report["findings"] if f["kind"] == "missing-entry"]
    assert missing == ["'' (the working directory, deleted) (sys.path[0], script) does "
                       "not exist"], report["findings"]


# ------------------------------------------------------------------ the probe's bundle


def _bundle_read(payload, data, mode=0o600, via=None):
    """``probe._Bundle.read`` of ``data`` kept as the check bundle of ``payload``, read
    through ``via`` (else ``payload``): the module names it would serve, or None."""
    from sitewarden.probe import runner

    path = runner._Bundle.path(str(payload), "check")
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
    found = runner._Bundle.read(str(via or payload), "check")
    return None if found is None else sorted(found.modules)


def test_the_probes_bundle_is_trusted_only_from_a_private_whole_file(tmp_path):
    """The file of the probe's module code is read only when this user alone owns it and
    its directory, not through a link, and when it holds what a probe writes: module
    names of sitewarden, code objects, paths inside the payload.  Anything else is no
    bundle at all (the modules are imported one by one)."""
    import marshal

    code = compile("X = 1\n", "x", "exec")
    good = marshal.dumps({"sitewarden.detect.x": ("sitewarden/detect/x.py", False, code)})
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert _bundle_read(private, good) == ["sitewarden.detect.x"]
    assert _bundle_read(private, good, mode=0o666) is None
    for junk in (b"", b"\x00garbage", marshal.dumps([1, 2]),
                 marshal.dumps({"os": ("sitewarden/x.py", False, code)}),
                 marshal.dumps({"sitewarden.x": ("/etc/x.py", False, code)}),
                 marshal.dumps({"sitewarden.x": ("sitewarden/../../x.py", False, code)}),
                 marshal.dumps({"sitewarden.x": ("sitewarden/x.py", 1, code)}),
                 marshal.dumps({"sitewarden.x": ("sitewarden/x.py", False, "X = 1")})):
        assert _bundle_read(private, junk) is None, junk
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert _bundle_read(shared, good) is None
    link = tmp_path / "link"
    link.symlink_to(private)
    assert _bundle_read(private, good, via=link) is None


def test_a_forged_bundle_runs_only_from_a_private_file(tmp_path):
    """End to end: a bundle whose ``check`` module would exit 99 stops a probe only when
    it is kept as a probe keeps one (this user's, mode 0600); world-writable, it is
    ignored and the probe imports its modules one by one."""
    import marshal
    import sys

    from sitewarden.cli import payload
    from sitewarden.probe import runner

    root = tmp_path / "payload"
    root.mkdir(mode=0o700)
    payload.write_tree(root, payload.runtime_files())
    root.chmod(0o700)
    forged = marshal.dumps({"sitewarden.probe.check": (
        "sitewarden/detect/check.py", False, compile("raise SystemExit(99)\n", "x", "exec"))})
    path = runner._Bundle.path(str(root), "check")
    results = {}
    for mode in (0o666, 0o600):
        with open(path, "wb") as f:
            f.write(forged)
        os.chmod(path, mode)
        proc = subprocess.run([sys.executable, "-I", "-c", runner.BOOTSTRAP, str(root), "check"],
                              capture_output=True, text=True, cwd="/")
        results[mode] = proc.returncode
        if mode == 0o666:
            assert "findings" in json.loads(proc.stdout), proc.stderr
    assert results == {0o666: 0, 0o600: 99}
