"""The test harness itself, against real interpreters, namespaces and PyPI wheels."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from harness import (
    MATRIX,
    DebianNamespace,
    HermeticBuildError,
    all_interpreters,
    build_hermetic,
    debian_system_python,
    interpreters,
    make_dist,
    old_interpreters,
    patch_site,
    pip_dir,
    pip_versions_for,
    pyenv_interpreters,
)
from harness.spread import spread

TESTS = Path(__file__).resolve().parent
PYTHONS = spread(targets="hermetic")


def run_harness(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` with the harness importable, in a fresh process (fresh caches)."""
    full = dict(os.environ, PYTHONPATH=str(TESTS), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, timeout=600, cwd="/")


# -- discovery ---------------------------------------------------------------------------------

def test_discovery():
    found = interpreters()
    assert found, "no CPython >= 3.8 found: install pyenv versions or set SITEWARDEN_TEST_PYTHONS"
    ids = [i.id for i in found]
    assert len(set(ids)) == len(ids)
    for interp in found:
        assert re.fullmatch(r"(cpython|debian)3\.\d+\.\d+", interp.id)
        assert interp.version >= (3, 8) and os.access(interp.executable, os.X_OK)
        assert os.fspath(interp) == interp.executable
    assert all(i.version < (3, 8) for i in old_interpreters())
    assert not any(i.is_debian_system for i in pyenv_interpreters())
    system = debian_system_python()
    if os.path.exists("/etc/debian_version") and os.path.exists("/usr/bin/python3"):
        assert system is not None and system.executable == "/usr/bin/python3"
        assert system.id.startswith("debian") and system.prefix == "/usr"


def test_override_replaces_discovery():
    chosen = [i.executable for i in all_interpreters()[:2]]
    code = "import harness; print(' '.join(i.executable for i in harness.all_interpreters()))"
    proc = run_harness(code, SITEWARDEN_TEST_PYTHONS=os.pathsep.join(chosen))
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == sorted(chosen)
    proc = run_harness(code, SITEWARDEN_TEST_PYTHONS="/no/such/python")
    assert proc.returncode != 0 and "DiscoveryError" in proc.stderr


# -- hermetic interpreters ---------------------------------------------------------------------

SHOW = (
    "import json, site, sys, six, pthmod; print(json.dumps({'path': sys.path,"
    " 'user_site': site.getusersitepackages(), 'six': six.__file__, 'pth': pthmod.X}))"
)


@pytest.mark.parametrize("base", PYTHONS)
def test_hermetic_python(base, make_hermetic):
    real_cache = Path(base.stdlib) / "__pycache__"
    before = (sorted(os.listdir(real_cache)), real_cache.stat().st_mtime_ns)
    py = make_hermetic(base)  # verified on build: prefixes, purelib, stdlib, sys.path order
    exe, prefix = py.place.executable, py.place.prefix
    assert exe.is_file() and not exe.is_symlink() and py.executable == str(exe)
    assert "hermetic fixture" in py.marker.read_text()
    assert exe.parent == prefix / "bin" and prefix.name == "usr"

    # local shadows distro; .pth files of the distro directory are processed (like Debian's)
    make_dist(py.distro_dir, "six", "1.16.0", {"six.py": "V = 'distro'\n"}, kind="egg-info")
    make_dist(py.local_dir, "six", "1.17.0", {"six.py": "V = 'local'\n"}, installer="pip")
    (py.distro_dir / "extra").mkdir()
    (py.distro_dir / "extra" / "pthmod.py").write_text("X = 1\n")
    (py.distro_dir / "zz-extra.pth").write_text("extra\n")
    proc = py.python("-c", SHOW)
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout)
    assert facts["six"] == str(py.local_dir / "six.py") and facts["pth"] == 1
    assert facts["user_site"] == str(py.user_site)
    assert not any(p.startswith(str(py.user_base)) for p in facts["path"])  # not created yet

    # sitewarden's probe runs "-E -S" and imports site itself: the distro dir is still known
    proc = py.python("-E", "-S", "-c", "import site; print(site.getsitepackages())")
    assert proc.stdout.strip() == repr([str(py.local_dir), str(py.distro_dir)]), proc.stderr

    metadata = py.python("-c", "import importlib.metadata as m; print(sorted("
                               "(d.version, d.read_text('INSTALLER')) for d in m.distributions()"
                               " if d.metadata['Name'] == 'six'))")
    assert metadata.stdout.strip() == "[('1.16.0', None), ('1.17.0', 'pip\\n')]", metadata.stderr
    assert (sorted(os.listdir(real_cache)), real_cache.stat().st_mtime_ns) == before


def test_hermetic_marker_is_the_one_pip_reads(make_hermetic):
    if not pyenv_interpreters():
        pytest.skip("no CPython 3.8+ besides the system one")
    base = pyenv_interpreters()[-1]
    env = {"PYTHONPATH": str(pip_dir("24.0"))}
    marked, unmarked = make_hermetic(base), make_hermetic(base.executable, marker=None)
    make_dist(marked.distro_dir, "python-apt", "2.6.0", {"apt/__init__.py": ""}, kind="egg-info")
    make_dist(marked.local_dir, "requests", "2.31.0", requires=["idna>=2.5"])

    proc = marked.python("-m", "pip", "install", "--no-index", "nothing-at-all", env=env)
    assert proc.returncode != 0 and "externally-managed-environment" in proc.stderr
    assert "hermetic fixture" in proc.stderr
    proc = unmarked.python("-m", "pip", "install", "--no-index", "nothing-at-all", env=env)
    assert proc.returncode != 0 and "externally-managed" not in proc.stderr
    assert "nothing-at-all" in proc.stderr

    listing = marked.python("-m", "pip", "list", "--format=json", env=env)
    names = {d["name"]: d["version"] for d in json.loads(listing.stdout)}
    assert names["python-apt"] == "2.6.0" and names["requests"] == "2.31.0", listing.stderr
    show = marked.python("-m", "pip", "show", "requests", env=env)
    assert "Requires: idna" in show.stdout and str(marked.local_dir) in show.stdout


def test_hermetic_refusals(tmp_path):
    if not pyenv_interpreters():
        pytest.skip("no CPython 3.8+ besides the system one")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(HermeticBuildError, match="not empty"):
        build_hermetic(pyenv_interpreters()[0], tmp_path / "full")
    system = debian_system_python()
    if system is not None:
        with pytest.raises(HermeticBuildError, match="debian_ns"):
            build_hermetic(system, tmp_path / "debian")
    with pytest.raises(HermeticBuildError, match="exactly one"):
        patch_site("def getsitepackages(prefixes=None):\n    pass\n", tmp_path, tmp_path)


# -- Debian namespace --------------------------------------------------------------------------

@pytest.mark.debian
def test_debian_namespace_is_private(debian_ns):
    dist = "/usr/lib/python3/dist-packages"
    target = dist + "/sitewarden_ns_probe.py"
    host_before = (sorted(os.listdir(dist)), os.stat(dist).st_mtime_ns)
    assert debian_ns.exists(debian_ns.marker.as_posix())

    debian_ns.write_bytes(target, b"WHERE = 'namespace'\n")
    assert debian_ns.read_bytes(target) == b"WHERE = 'namespace'\n"
    proc = debian_ns.run(["/usr/bin/python3", "-c", "import sitewarden_ns_probe as m, site;"
                          "print(m.WHERE, site.getusersitepackages())"])
    assert proc.returncode == 0, proc.stderr
    where, user_site = proc.stdout.split()
    assert where == "namespace" and user_site.startswith(str(debian_ns.user_base))
    mode, digest = debian_ns.tree_digest(dist)["sitewarden_ns_probe.py"]
    assert mode & 0o170000 == 0o100000 and len(digest) == 64
    assert not os.path.exists(target)

    etc = "/etc/python%s" % debian_ns.interp.short_version
    for path in ("/usr/local/bin/sw-x", etc + "/sw-x", "/usr/share/sw-x"):
        proc = debian_ns.run(["sh", "-c", "echo > %s" % path])
        if path == "/usr/share/sw-x":  # not overlaid: the read-only root stops it
            assert proc.returncode != 0 and "Read-only" in proc.stderr
        elif os.path.isdir(os.path.dirname(path)):
            assert proc.returncode == 0, proc.stderr
        assert not os.path.exists(path)

    with DebianNamespace() as other:  # another test's namespace starts from the real state
        assert not other.exists(target)
    debian_ns.close()
    assert not os.path.exists(target) and not debian_ns.place.tmp.exists()
    assert (sorted(os.listdir(dist)), os.stat(dist).st_mtime_ns) == host_before


# -- wheels ------------------------------------------------------------------------------------

def test_wheel_cache_downloads_once(tmp_path):
    code = "import harness; print(harness.pip_wheel('9.0.3'))"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd="/",
                              env=dict(os.environ, PYTHONPATH=str(TESTS),
                                       SITEWARDEN_TEST_CACHE=str(tmp_path)))
             for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    paths = {out.strip() for out, _ in outputs}
    assert paths == {str(tmp_path / "pip-9.0.3-py2.py3-none-any.whl")}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "pip-9.0.3-py2.py3-none-any.whl"]
    with zipfile.ZipFile(paths.pop()) as whl:
        assert "pip/__init__.py" in whl.namelist()
    mtime = (tmp_path / "pip-9.0.3-py2.py3-none-any.whl").stat().st_mtime_ns
    again = run_harness(code, SITEWARDEN_TEST_CACHE=str(tmp_path))
    assert again.stdout.strip() == str(tmp_path / "pip-9.0.3-py2.py3-none-any.whl")
    assert (tmp_path / "pip-9.0.3-py2.py3-none-any.whl").stat().st_mtime_ns == mtime


def _requires_python(tree: Path) -> str:
    """Requires-Python from the METADATA of an extracted wheel."""
    text = next(tree.glob("*.dist-info/METADATA")).read_text(encoding="utf-8")
    return next((line.split(":", 1)[1].strip() for line in text.splitlines()
                 if line.startswith("Requires-Python:")), "")


@pytest.mark.parametrize("base", PYTHONS)
def test_pip_matrix(base, make_hermetic):
    """Every version listed for this Python starts; every fixed one left out does not."""
    from packaging.specifiers import SpecifierSet

    expected = pip_versions_for(base.version)
    fixed = [v for v in MATRIX if not v.endswith("*")]
    assert any(v.startswith("25.") for v in expected)  # the latest lines were resolved
    py = make_hermetic(base)
    tried = {v: pip_dir(v) for v in sorted(set(expected) | set(fixed))}
    procs = {v: subprocess.Popen([py.executable, "-m", "pip", "--version"], cwd="/",
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=py.env({"PYTHONPATH": str(whl)}))
             for v, whl in tried.items()}
    started = set()
    for v, proc in procs.items():
        out, _ = proc.communicate(timeout=300)
        if proc.returncode == 0:
            assert out.startswith("pip %s from %s" % (v, tried[v]))
            started.add(v)
    admitted = {v for v, tree in tried.items()
                if SpecifierSet(_requires_python(tree)).contains(".".join(map(str, base.version)))}
    assert started & admitted == set(expected)


# -- the fast subset (harness/fast.py) ---------------------------------------------------------

def collected(*args: str) -> list:
    """The node ids ``pytest --collect-only`` lists for this checkout with ``args``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0",
                           "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, env=env, timeout=600,
                          cwd=TESTS.parent)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_fast_covers_every_function_and_every_interpreter():
    from harness import TARGETS
    from harness.fast import SLOW_MODULES, target_ids, target_of

    def function(nodeid):
        return nodeid.partition("[")[0].partition("@")[0]

    full, fast = collected(), collected("--fast")
    assert len(fast) < len(full) and set(fast) <= set(full)
    assert sorted(map(function, fast)) == sorted(set(map(function, full)))  # each once
    targets = target_ids()
    assert {t.id for t in TARGETS} <= set(targets) and any(t.startswith("cpython") for t in targets)
    chosen = {target_of(nodeid.partition("[")[2].rpartition("]")[0], targets) for nodeid in fast}
    assert set(targets) <= chosen, sorted(set(targets) - chosen)
    assert collected("--fast") == fast  # computed the same way every time

    not_slow = collected("-m", "not slow")
    slow = {Path(n.partition("::")[0]).stem for n in set(full) - set(not_slow)}
    assert slow == SLOW_MODULES
