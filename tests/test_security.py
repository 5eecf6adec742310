"""The security posture the README states, tested (issue #6, property 6).

- The CLI runs no code from its working directory in target interpreters.
- The probe's private cache (``~/.cache/sitewarden/runtime``) is used only when the
  current user owns it and nobody else can write to it.
- ``--hook sitecustomize`` refuses to edit a sitecustomize that is not a ``.py`` file.
- Deployed files are not writable by other users, whatever the umask.
- No code is executed from the marker, metadata or environment: they are data.

Each runs on every CPython 3.8+ (hermetic) and Debian's python (namespace) where the
target matters; the cache is the CLI's own and is tested once.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from harness import make_dist, pip_dir, pyenv_interpreters
from harness.cli import CLI
from harness.figures import record
from harness.nobody import NOBODY

NEWEST = pyenv_interpreters()[-1]


# ------------------------------------------------------------------ the working directory


def _booby_trapped(directory: Path, canary: Path, names) -> None:
    """Modules in ``directory`` that the CLI's subprocesses would import if the current
    directory were on their ``sys.path``: each leaves ``canary``."""
    for name in names:
        (directory / (name + ".py")).write_text(
            "open(%r, 'a').write(%r)\n" % (str(canary), name + "\n"))


def test_install_compiles_without_the_working_directory(bare_target):
    """``install`` compiles the runtime with the target itself: a ``py_compile.py`` in the
    directory the CLI runs in (as root, maybe /tmp) must not run."""
    t = bare_target
    cwd = t.tmp / "cwd"
    cwd.mkdir()
    canary = t.tmp / "CANARY-cwd"
    # Only a module the compile step imports and the probe does not (the probe's own
    # exposure is test_probe_runs_no_code_from_the_working_directory).
    _booby_trapped(cwd, canary, ["py_compile"])
    proc = t.cli("install", "--python", t.executable, cwd=str(cwd))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = canary.read_text().split() if canary.exists() else []
    record("security: no code run from the working directory (install)", t.label, 1, len(ran))
    assert ran == []


def test_probe_runs_no_code_from_the_working_directory(make_hermetic, tmp_path):
    hp = make_hermetic(NEWEST)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    canary = tmp_path / "CANARY-probe"
    data_name = subprocess.run(
        [str(hp.executable), "-I", "-c",
         "import sysconfig; print(sysconfig._get_sysconfigdata_name())"],
        env=hp.env(), capture_output=True, text=True, check=True).stdout.strip()
    # What the probes import, and what parsing the marker (configparser, re) and writing
    # JSON (json, _json, __future__) would: ``check`` runs its probe in this directory.
    _booby_trapped(cwd, canary, ["sysconfig", "site", "json", "_json", "__future__", "re",
                                 "enum", "configparser", "warnings", "threading", data_name])
    for command in ("status", "check"):
        proc = subprocess.run([*CLI, command, "--python", str(hp.executable)], cwd=str(cwd),
                              env=hp.env(), capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, (
            command, proc.stdout + proc.stderr)
        assert not canary.exists(), (command, canary.read_text())


# ------------------------------------------------------------------ the probe's cache


def _cache_root(base: Path) -> Path:
    return base / "sitewarden" / "runtime"


@pytest.mark.parametrize("case", [
    "fresh", "group-writable", "world-writable", "parent world-writable", "other owner",
    "a symbolic link", "parent a symbolic link", "not a directory"])
def test_probe_cache_used_only_when_private(tmp_path, monkeypatch, case):
    from sitewarden.cli import payload

    base = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    root = _cache_root(base)
    if case != "fresh":
        assert Path(payload._private_cache_dir()) == root
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if case == "group-writable":
        root.chmod(0o770)
    elif case == "world-writable":
        root.chmod(0o777)
    elif case == "parent world-writable":
        root.parent.chmod(0o777)
    elif case == "other owner":
        if os.geteuid() != 0:
            pytest.skip("needs root to give the directory away")
        os.chown(root, NOBODY, NOBODY)
    elif case == "a symbolic link":
        root.rmdir()
        root.symlink_to(elsewhere)
    elif case == "parent a symbolic link":
        root.rmdir()
        root.parent.rmdir()
        (elsewhere / "runtime").mkdir(mode=0o700)
        root.parent.symlink_to(elsewhere)
    elif case == "not a directory":
        root.rmdir()
        root.write_text("")
    found = payload._private_cache_dir()
    found = None if found is None else Path(found)
    if case == "fresh":
        st = os.lstat(root)
        assert found == root and stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
        assert stat.S_IMODE(st.st_mode) == 0o700
    else:
        assert found is None
    # Whatever the cache, the payload the probe runs is this user's, and only theirs to write.
    used = Path(payload.payload_dir())
    st = os.lstat(used)
    assert st.st_uid == os.geteuid() and not st.st_mode & 0o022
    assert (found is not None) == (used.parent == root)


def test_no_cache_in_a_system_tree(tmp_path, monkeypatch):
    """Whoever runs the CLI, however HOME and XDG_CACHE_HOME are set, nothing is kept
    under /usr or /etc (the runtime then runs from a temporary copy); the probe side
    refuses such a directory too, whatever a CLI passes it."""
    from sitewarden.cli import payload
    from sitewarden.facts import private_cache

    link = tmp_path / "cache-link"
    link.symlink_to("/usr/lib/python3")
    for xdg, home in (("/usr/lib/python3/dist-packages", str(tmp_path)),
                      ("/etc/sitewarden", str(tmp_path)), (str(link), str(tmp_path)),
                      ("", "/usr/lib/python3/dist-packages"), ("relative", "/usr")):
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        monkeypatch.setenv("HOME", home)
        assert payload._private_cache_dir() is None, (xdg, home)
    assert not os.path.lexists("/usr/lib/python3/dist-packages/sitewarden/runtime")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # not absolute: ignored (XDG spec)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert payload._private_cache_dir() == str(tmp_path / ".cache" / "sitewarden" / "runtime")
    for system in ("/usr/lib/python3/dist-packages", "/usr", "/etc/python3.11"):
        assert private_cache.private_directory(system) is None, system
    tmp_path.chmod(0o700)
    assert private_cache.private_directory(str(tmp_path)) == str(tmp_path)


def test_old_runtime_copies_are_pruned(tmp_path, monkeypatch):
    """Each use marks a runtime copy as used; making a new one removes the copies beyond
    the two most recently used others and those unused for two weeks, and what a killed
    CLI left staging, never a copy or a staging directory used in the last ten minutes."""
    import shutil
    import time

    from sitewarden.cli import payload

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = _cache_root(tmp_path)
    current = Path(payload.payload_dir())
    os.utime(current, (1, 1))
    assert Path(payload.payload_dir()) == current
    assert time.time() - current.stat().st_mtime < 60, "a use marks it used"
    now = time.time()
    ages = {"0.1.0-forgotten": 15 * 86400, "0.1.0-hour": 3600, "0.1.0-two": 7200,
            "0.1.0-three": 10800, "0.1.0-running": 60, ".staging-killed": 7200,
            ".staging-now": 10}
    for name, age in ages.items():
        (root / name / "sitewarden").mkdir(parents=True)
        os.utime(root / name, (now - age, now - age))
    shutil.rmtree(current)  # the sources changed: a new copy is made
    assert Path(payload.payload_dir()) == current
    assert sorted(os.listdir(root)) == sorted(
        [current.name, "0.1.0-running", "0.1.0-hour", ".staging-now"])


def _plant(base: Path, canary: Path) -> Path:
    """A runtime in the cache, under the key the CLI will look for, that leaves ``canary``."""
    from sitewarden.cli import payload

    key = payload.cache_key()
    planted = _cache_root(base) / key / "sitewarden"
    planted.mkdir(parents=True)
    (planted / "__init__.py").write_text("open(%r, 'w').write('planted')\n" % str(canary))
    return planted


@pytest.mark.parametrize("unsafe", ["world-writable", "other owner"])
def test_cli_never_runs_a_runtime_from_an_unsafe_cache(make_hermetic, tmp_path, unsafe):
    """A runtime planted in a cache someone else could write to is never run by the
    probe (and the fallback temporary copy is removed when the CLI exits); planted in a
    private cache, it would be (the control)."""
    hp = make_hermetic(NEWEST)
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    tried = 0
    for safe in (True, False):
        base = tmp_path / ("cache-safe" if safe else "cache-unsafe")
        canary = tmp_path / ("CANARY-safe" if safe else "CANARY-unsafe")
        _plant(base, canary)
        for d in (base / "sitewarden", _cache_root(base)):
            d.chmod(0o700)
        if not safe:
            if unsafe == "world-writable":
                _cache_root(base).chmod(0o777)
            else:
                os.chown(_cache_root(base), NOBODY, NOBODY)
        proc = subprocess.run([*CLI, "status", "--python", str(hp.executable), "--json"],
                              env=hp.env({"XDG_CACHE_HOME": str(base),
                                          "TMPDIR": str(private_tmp)}),
                              capture_output=True, text=True, timeout=300, cwd="/")
        tried += 1
        if safe:
            assert canary.exists(), "control: a private cache is used, planted code and all"
        else:
            assert not canary.exists(), "code planted in an unsafe cache was run"
            assert proc.returncode == 1, proc.stderr  # probed: not guarded (no error, 2)
            json.loads(proc.stdout)
            assert list(private_tmp.iterdir()) == [], "the temporary runtime was left behind"
    record("security: probe cache only when private", "cli", tried, 0, cache=unsafe)


def test_a_check_keeps_what_the_next_one_reuses_in_its_private_cache(make_hermetic, tmp_path):
    """A check keeps its verdicts on the target's startup lines, and the code of the
    probe's modules, in the payload it ran from (this user's alone, mode 0600), and the
    next check, reading them, reports the same startup code."""
    hp = make_hermetic(NEWEST)
    (hp.local_dir / "swr-kept.pth").write_text("import swr_kept_missing_xyz\n")
    base = tmp_path / "cache"
    reports = []
    for _ in range(2):
        proc = subprocess.run([*CLI, "check", "--python", str(hp.executable), "--json"],
                              env=hp.env({"XDG_CACHE_HOME": str(base)}),
                              capture_output=True, text=True, timeout=300, cwd="/")
        assert proc.returncode == 1, proc.stderr
        reports.append(json.loads(proc.stdout))
    assert reports[0]["startup"] == reports[1]["startup"]
    assert [f for f in reports[1]["findings"] if f["kind"] == "startup-line-fails"
            and "swr_kept_missing_xyz" in f["message"]], reports[1]["findings"]
    (lines,) = _cache_root(base).glob("*/startup-lines-*")
    (modules,) = _cache_root(base).glob("*/probe-modules-check-*")  # the probe's code
    for kept in (lines, modules):
        st = os.lstat(kept)
        assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o600


# ------------------------------------------------------------------ --hook sitecustomize


def test_sitecustomize_hook_refuses_a_non_py_sitecustomize(bare_target):
    """The interpreter's sitecustomize is bytecode only, or an extension module:
    ``install --hook sitecustomize`` refuses (one line, exit 2) and changes nothing."""
    t = bare_target
    ext = t.python("-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
    suffix = ext.stdout.strip()
    assert suffix.endswith(".so"), ext.stderr
    stdlib_sc = t.stdlib / "sitecustomize.py"  # Debian's (a link to /etc): must not be found
    t.put(stdlib_sc, "absent")
    source = t.tmp / "sitecustomize_src.py"
    source.write_text("X = 1\n")
    source.chmod(0o644)
    tried = 0
    for name in ("sitecustomize.pyc", "sitecustomize" + suffix):
        path = t.local_dir / name
        if name.endswith(".pyc"):
            proc = t.python("-c", "import py_compile, sys; py_compile.compile(sys.argv[1], "
                            "cfile=sys.argv[2], doraise=True)", str(source), str(path))
            assert proc.returncode == 0, proc.stderr
        else:
            t.put(path, "file", b"\x7fELF not really")
        before = t.digest(t.local_dir)
        proc = t.cli("install", "--python", t.executable, "--hook", "sitecustomize")
        tried += 1
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "not a .py file" in proc.stderr and name in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert t.digest(t.local_dir) == before
        t.put(path, "absent")
    record("security: sitecustomize hook refuses non-.py", t.label, tried, 0)


# ------------------------------------------------------------------ modes

_MODES = r"""
import json, os, stat, sys
out = {}
for top in sys.argv[1:]:
    if not os.path.lexists(top):
        continue
    paths = [top]
    for dirpath, dirs, files in os.walk(top):
        paths += [os.path.join(dirpath, n) for n in dirs + files]
    for p in paths:
        out[p] = stat.S_IMODE(os.lstat(p).st_mode), os.path.isdir(p)
print(json.dumps(out))
"""


def test_deployed_files_are_not_writable_by_others(bare_target):
    """Deployed under ``umask 000`` (system site with each hook, and the user site):
    every file written is 0644, every directory 0755."""
    t = bare_target
    umask0 = ["sh", "-c", 'umask 000 && exec "$@"', "sh"]
    user_site = t.python("-c", "import site; print(site.getusersitepackages())").stdout.strip()
    checked, bad = 0, []
    for args, site in ((("--hook", "pth"), str(t.local_dir)),
                       (("--hook", "sitecustomize"), str(t.local_dir)),
                       (("--user",), user_site)):
        proc = t.run([*umask0, *t.cli_argv, "install", "--python", t.executable, *args])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        manifest = json.loads(t.read_bytes(Path(site) / "sitewarden" / "_deployment.json"))
        paths = [os.path.join(site, f) for f in manifest["files"]]
        if manifest.get("sitecustomize"):
            paths.append(manifest["sitecustomize"]["path"])
        paths += manifest.get("created_dirs", [])
        # An existing sitecustomize (Debian's conffile) keeps its own mode.
        edited = [] if (manifest.get("sitecustomize") or {}).get("created", True) else [
            manifest["sitecustomize"]["path"]]
        modes = json.loads(t.root(_MODES, os.path.join(site, "sitewarden"), *paths).stdout)
        for path, (mode, is_dir) in modes.items():
            checked += 1
            exact = 0o755 if is_dir else 0o644
            if mode & 0o022 or (path not in edited and mode != exact):
                bad.append((path, oct(mode)))
        uninstall = ["--user"] if "--user" in args else []
        proc = t.cli("uninstall", "--python", t.executable, *uninstall)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    record("security: deployed files not writable by others", t.label, checked, len(bad))
    assert not bad, bad


# ------------------------------------------------------------------ data, never code


def test_no_code_executed_from_marker_metadata_or_environment(guarded_target):
    """Code in the marker, in metadata (every field the guard reads) and in environment
    values is data: neither startup, a shadowed import, a refusal, ``status`` nor
    ``check`` runs it."""
    t = guarded_target
    canary = t.tmp / "CANARY"
    run = "__import__('os').system('touch %s')" % canary
    payload = "%s; $(touch %s); `touch %s`" % (run, canary, canary)

    def distro(stage):
        make_dist(stage, "swc_target", "1.0", {"swc_target.py": ""})
        make_dist(stage, "swc_consumer", "1.0", {"swc_consumer.py": ""}, requires=[
            "swc_target<2; python_version > '3' and %s" % run, "swc_target (<2) ; " + run,
            "swc_target @ file:///%s" % canary, "swc_target<2; " + payload])
        make_dist(stage, "swc_egg", "1.0", {"swc_egg.py": ""}, kind="egg-info",
                  requires=["swc_target<2", "[:%s]" % run, "swc_target<3"])
        meta = stage / "swc_evil-1.0.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text("Name: %s\nVersion: %s\nRequires-Dist: %s\n"
                                       % (payload, payload, payload))
        (meta / "RECORD").write_text("%s,,\n" % payload)
        (meta / "top_level.txt").write_text(payload + "\nswc_target\n")

    def local(stage):
        make_dist(stage, "swc_target", "2.0", {"swc_target.py": ""}, installer=payload)
        (stage / "swc_target-2.0.dist-info" / "direct_url.json").write_text(
            '{"url": "%s"}' % run)

    t.copy_in(distro, t.distro_dir)
    t.copy_in(local, t.local_dir)
    t.put(t.marker, "file", ("[externally-managed]\nError=%s\nError-C=%s\n"
                             % (payload, payload)).encode())
    env = {"SITEWARDEN_SILENCE": payload, "SITEWARDEN_DISABLE": "0",
           "PIP_BREAK_SYSTEM_PACKAGES": payload, "LANG": payload, "LC_MESSAGES": payload}
    # pip itself rejects a PIP_BREAK_SYSTEM_PACKAGES that is not a boolean (exit 2).
    pip_env = {**env, "PYTHONPATH": str(pip_dir("22.3.1")), "PIP_NO_CACHE_DIR": "1",
               "PIP_BREAK_SYSTEM_PACKAGES": "0"}
    runs = [
        ([t.executable, "-c", "import swc_target, swc_consumer, swc_egg"], env, 0, "swc_target"),
        ([t.executable, "-m", "ensurepip"], env, 1, "externally-managed-environment"),
        ([t.executable, "-m", "pip", "install", "--no-index", "six"], pip_env, 1,
         "externally-managed-environment"),
        # status exits as check's gate decides: 1, the same findings (the shadow)
        ([*t.cli_argv, "status", "--python", t.executable, "--json"], env, 1, "swc_target"),
        ([*t.cli_argv, "check", "--python", t.executable, "--json"], env, 1, "swc_target"),
    ]
    failures = []
    for argv, e, status, seen in runs:
        proc = t.run(argv, env=e)
        # Each run got as far as reading the booby-trapped data.
        if proc.returncode != status or (seen not in proc.stdout + proc.stderr
                                         and not argv[-1].endswith("json")):
            failures.append((argv[-2:], proc.returncode, proc.stderr[-500:]))
    record("security: no code run from marker/metadata/environment", t.label, len(runs),
           int(canary.exists()) + len(failures))
    assert not canary.exists()
    assert not failures, failures
