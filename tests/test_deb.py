"""The Debian package (issue 14), installed with apt in the debootstrapped Debian 12, 13 and
sid roots (harness.roots: each test in its own overlay over the cached root, chrooted).

The packages are built once per session by packaging/build-deb (what `make deb` runs): the
version of this checkout, and a rebuild with a bumped version for the upgrade.  Every apt
and dpkg run is offline (a proxy on a closed port); the distro packages a test reinstalls come
from a cache next to the roots, downloaded once with ``apt-get download``.
"""

from __future__ import annotations

import fcntl
import gzip
import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

import sitewarden
from harness import roots, wheels
from harness.fixtures import open_root, running_under_ci

CHECKOUT = Path(__file__).resolve().parent.parent
BUILD = CHECKOUT / "packaging" / "build-deb"

VERSION = sitewarden.__version__
NEXT = VERSION + "+1"  # the upgrade: a rebuild with a bumped version
#: The package's versions: Debian's spelling of the runtime's (build-deb's debian_version).
DEB_VERSION = {v: runpy.run_path(str(BUILD))["debian_version"](v) for v in (VERSION, NEXT)}

#: Every python3.X each root has: the package must guard them all.
PYTHONS = {"bookworm": ("3.11",), "trixie": ("3.13",), "sid": ("3.14", "3.15")}
RELEASE_PARAMS = [pytest.param(r, id=r, marks=[pytest.mark.debian, pytest.mark.roots])
                  for r in roots.RELEASES]

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: Offline: any download goes to a closed port and fails (``--no-download`` would do, but
#: apt rejects it together with a .deb named on the command line).
APT = ["apt-get", "-q", "-y", "-o", "Dpkg::Use-Pty=0", "-o", "Acquire::Check-Valid-Until=false",
       "-o", "Acquire::http::Proxy=http://127.0.0.1:9/"]
ENV = {"PATH": PATH, "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C.UTF-8"}
HTTPLIB2_BROKEN = "requires 'pyparsing"
GUARDS = ("import sys; print(len([f for f in sys.meta_path "
          "if getattr(f, '_sitewarden_finder', False) is True]), "
          "getattr(sys.modules.get('sitewarden'), '__file__', None), "
          "getattr(sys.modules.get('sitewarden'), '__version__', None))")
PACKAGE_INIT = "/usr/lib/python3/dist-packages/sitewarden/__init__.py"
SITE = "/usr/lib/python3/dist-packages"


# ---------------------------------------------------------------- building


#: Who signs the bumped rebuild (``--maintainer``): a fleet's own build.
REBUILDER = "Fleet Builds <python-builds@example.org>"


def build(out: Path, version: str | None = None) -> Path:
    argv = [sys.executable, str(BUILD), "--out", str(out)]
    if version:
        argv += ["--version", version, "--maintainer", REBUILDER]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, cwd=str(CHECKOUT))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


def need_dpkg_deb() -> None:
    if shutil.which("dpkg-deb") is None:
        if running_under_ci():
            pytest.fail("dpkg-deb is required under CI")
        pytest.skip("dpkg-deb is not installed")


_BUILT: dict[str, Path] = {}


@pytest.fixture(scope="session")
def debs(tmp_path_factory) -> dict[str, Path]:
    """{version: .deb} for this checkout's version and the bumped rebuild, under the
    host's temp dir (seen at the same path inside the roots).  Built once per process,
    also when another test module imports this fixture (pytest then holds two)."""
    need_dpkg_deb()
    if not _BUILT:
        out = tmp_path_factory.mktemp("debs")
        out.chmod(0o755)
        _BUILT.update({VERSION: build(out), NEXT: build(out, NEXT)})
    return _BUILT


# ---------------------------------------------------------------- distro .debs, cached


def _debs_dir(release: str) -> Path:
    path = roots.roots_dir().parent / "debs" / release
    path.mkdir(parents=True, exist_ok=True)
    return path


def distro_debs(release: str, packages: tuple[str, ...]) -> list[Path]:
    """The .debs of ``packages`` at the versions installed in ``release``'s root, cached
    next to the roots (``apt-get download`` in the root, once; the only network use)."""
    directory = _debs_dir(release)
    installed = roots.installed_packages(roots.ensure_root(release))

    def cached() -> list[Path]:
        found = []
        for name in packages:
            for deb in sorted(directory.glob("%s_*.deb" % name)):
                if unquote(deb.name.split("_")[1]) == installed[name]:
                    found.append(deb)
                    break
        return found

    if len(cached()) == len(packages):
        return cached()
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if len(cached()) != len(packages):
            with roots.ChrootNamespace(release) as ns, tempfile.TemporaryDirectory() as tmp:
                os.chmod(tmp, 0o777)
                wanted = ["%s=%s" % (p, installed[p]) for p in packages]
                proc = ns.run(["apt-get", "-q", "-o", "Acquire::Check-Valid-Until=false",
                               "download", *wanted], env=ENV, cwd=tmp)
                if proc.returncode != 0:
                    msg = "apt-get download %s failed: %s" % (" ".join(wanted), proc.stderr)
                    if running_under_ci():
                        pytest.fail(msg)
                    pytest.skip(msg)
                for deb in Path(tmp).glob("*.deb"):
                    shutil.copy(deb, directory / deb.name)
    return cached()


def put_in_apt_cache(ns, debs: list[Path]) -> list[str]:
    """Copy ``debs`` where apt finds what it would download; their paths in the root."""
    paths = []
    for deb in debs:
        paths.append("/var/cache/apt/archives/" + deb.name)
        ns.write_bytes(paths[-1], deb.read_bytes())
    return paths


# ---------------------------------------------------------------- helpers


@pytest.fixture(params=RELEASE_PARAMS)
def ns(request):
    target = roots.RootTarget(request.param, "/usr/bin/python3")
    namespace = open_root(target)
    try:
        yield namespace
    finally:
        namespace.close()


def run(ns, argv, **kw):
    return ns.run(argv, env={**ENV, **kw.pop("env", {})}, **kw)


def apt(ns, *args: str, ok: bool = True):
    proc = run(ns, [*APT, *args])
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def ours(proc) -> list[str]:
    """What sitewarden printed during an apt run: lines starting with 'sitewarden' (the
    hook's header, a maintainer script's message) and the indented lines after them."""
    out, inside = [], False
    for line in (proc.stdout + "\n" + proc.stderr).splitlines():
        inside = line.startswith("sitewarden") or (inside and line.startswith("  "))
        if inside:
            out.append(line)
    return out


def pythons(ns) -> list[str]:
    return ["/usr/bin/python" + v for v in PYTHONS[ns.release]]


def assert_one_guard(ns, python: str, version: str = VERSION, module: str = PACKAGE_INIT):
    proc = run(ns, [python, "-c", GUARDS])
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.split() == ["1", module, version], (python, proc.stdout)


def install_deb(ns, deb: Path):
    proc = apt(ns, "install", str(deb))
    assert "Setting up sitewarden" in proc.stdout, proc.stdout
    return proc


def digest(ns) -> dict:
    out = {}
    for top in ("/usr", "/etc"):
        out.update({top + "/" + k: v for k, v in ns.tree_digest(top).items()})
    return out


#: Each planted startup hook writes the canary and prints garbage (tests/test_cli_isolation.py).
PLANT = "open('/tmp/swr-canary', 'a').write('%s\\n'); print('GARBAGE from %s')\n"


def assert_command_isolated(ns) -> None:
    """``/usr/bin/sitewarden`` runs nothing of the environment: a ``PYTHONPATH``
    ``sitecustomize``, ``PYTHONSTARTUP``, root's user site ``usercustomize`` and ``.pth``
    (the canary is never written), stdin closed, and ``check --json`` is JSON only."""
    sites = " ".join("/root/.local/lib/python%s/site-packages" % v for v in PYTHONS[ns.release])
    script = ("set -e; mkdir -p /tmp/swr-evil %s; printf %%s \"$1\" > "
              "/tmp/swr-evil/sitecustomize.py; printf %%s \"$2\" > /tmp/swr-evil/startup.py; "
              "for d in %s; do printf %%s \"$3\" > $d/usercustomize.py; printf %%s \"$4\" > "
              "$d/zz-canary.pth; done" % (sites, sites))
    plants = [PLANT % (w, w) for w in ("sitecustomize", "PYTHONSTARTUP", "usercustomize")]
    plants.append("import os; " + PLANT % ("pth", "a .pth"))
    made = run(ns, ["sh", "-c", script, "sh", *plants])
    assert made.returncode == 0, made.stderr
    env = {"PYTHONPATH": "/tmp/swr-evil", "PYTHONSTARTUP": "/tmp/swr-evil/startup.py",
           "HOME": "/root"}
    control = run(ns, ["python3", "-c", "pass"], env=env)
    assert "GARBAGE from sitecustomize" in control.stdout, control.stdout + control.stderr
    run(ns, ["rm", "-f", "/tmp/swr-canary"])
    proc = run(ns, ["sh", "-c", "exec sitewarden check --json --python /usr/bin/python3 <&-"],
               env=env)
    assert proc.returncode in (0, 1), proc.stderr
    printed = [x for x in (proc.stdout + proc.stderr).splitlines() if x.startswith("GARBAGE")]
    assert not printed and not ns.exists("/tmp/swr-canary"), printed
    assert json.loads(proc.stdout)["interpreter"]["executable"] == "/usr/bin/python3"
    run(ns, ["rm", "-rf", "/tmp/swr-evil", *sites.split()])


def warm_up(ns) -> None:
    """Starts that write bytecode of the root's own files (not the package's) happen
    before the tree is taken as 'before'."""
    for python in pythons(ns):
        run(ns, [python, "-c", "import ensurepip"])


# ---------------------------------------------------------------- package in the roots


def test_install_guards_every_python_and_purge_restores(ns, debs):
    """Install, use (every command, apt runs with the hook, an upgrade), remove, purge:
    ``/usr`` and ``/etc`` are byte for byte what they were before."""
    warm_up(ns)
    before = digest(ns)
    proc = install_deb(ns, debs[VERSION])
    assert ours(proc) == [], proc.stdout

    for python in pythons(ns):
        assert_one_guard(ns, python)
        refused = run(ns, [python, "-m", "ensurepip", "--user"])
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "externally-managed-environment" in refused.stderr
        assert not ns.exists(str(ns.user_base) + "/lib"), "ensurepip --user wrote"
        # Bytecode of every runtime module, compiled by the maintainer script.
        tag = "cpython-3%s" % python.rsplit(".", 1)[1]
        missing = run(ns, ["sh", "-c", "cd /usr/lib/python3/dist-packages/sitewarden && "
                           "for f in $(find . -name '*.py'); do d=$(dirname $f); "
                           "b=$(basename $f .py); [ -f $d/__pycache__/$b.%s.pyc ] || echo $f; "
                           "done" % tag])
        assert missing.stdout == "", "not compiled for %s: %s" % (python, missing.stdout)

    verify = run(ns, ["dpkg", "-V", "sitewarden"])
    assert verify.returncode == 0 and verify.stdout == "", verify.stdout + verify.stderr

    status = run(ns, ["sitewarden", "status", "--all"])
    assert status.returncode == 0, status.stderr
    for python in pythons(ns):
        assert re.search(r"^%s \(Python [0-9.]+.*\): guarded$" % re.escape(python),
                         status.stdout, re.M), status.stdout
    assert "Debian package sitewarden" in status.stdout
    check = run(ns, ["sitewarden", "check", "--all", "--json"])
    assert check.returncode in (0, 1), check.stderr
    # The package's runtime is the command's own, byte for byte (its bytecode compiled by
    # py3compile): the hook is sitewarden's template, and nothing is found in it.
    reports = [i for i in json.loads(check.stdout)["interpreters"] if "startup" in i]
    for item in reports:
        hooks = [f for f in item["startup"]["files"] if f["path"] == SITE + "/sitewarden.pth"]
        assert hooks and hooks[0]["template"] == "sitewarden", (item["interpreter"], hooks)
        assert not [x for x in item["findings"] if x.get("file") == hooks[0]["path"]]
    assert len(reports) >= len(pythons(ns)), reports
    assert_command_isolated(ns)
    man = run(ns, ["sh", "-c", "zcat /usr/share/man/man1/sitewarden.1.gz | head -3"])
    assert "SITEWARDEN" in man.stdout

    # What the package's command and its apt hook keep (the runtime copy the probes run,
    # what they keep between checks) goes to the cache of the user running them, never
    # among the package's files; an upgrade changes nothing there either.
    cached = put_in_apt_cache(ns, distro_debs(ns.release, ("python3-six",)))
    for deb in (debs[VERSION], debs[NEXT]):
        if deb is debs[NEXT]:
            install_deb(ns, deb)
        for argv in (["check"], ["status"], ["check", "--json"], ["status", "--all"]):
            proc = run(ns, ["sitewarden", *argv])
            assert proc.returncode in (0, 1), (argv, proc.stdout + proc.stderr)
        proc = apt(ns, "install", "--reinstall", "python3-six")  # the hook checks each python
        assert ours(proc) == [] and "rror" not in proc.stderr, proc.stdout + proc.stderr
        verify = run(ns, ["dpkg", "-V", "sitewarden"])
        assert verify.returncode == 0 and verify.stdout == "", verify.stdout + verify.stderr
        strays = run(ns, ["find", "/usr/lib/python3/dist-packages", "-maxdepth", "1",
                          "-newer", "/var/lib/dpkg/info/sitewarden.list", "!", "-type", "d"])
        assert strays.stdout == "", strays.stdout
        kept = run(ns, ["sh", "-c", "ls /root/.cache/sitewarden/runtime/*/"])
        assert "dpkg-index-" in kept.stdout and "probe-modules-check-" in kept.stdout, kept.stdout

    # Removed but not purged: the apt hook's conffile stays and must do nothing.
    apt(ns, "remove", "sitewarden")
    for python in pythons(ns):
        proc = run(ns, [python, "-c", GUARDS])
        assert proc.stdout.split() == ["0", "None", "None"], proc.stdout + proc.stderr
    proc = apt(ns, "install", "--reinstall", "python3-six")
    assert ours(proc) == [] and "rror" not in proc.stderr, proc.stdout + proc.stderr
    apt(ns, "purge", "sitewarden")
    run(ns, ["rm", "-f", *cached])
    after = digest(ns)
    six = {k for k in set(before) | set(after) if "/six" in k or "python3-six" in k}
    changed = {k for k in set(before) | set(after)
               if before.get(k) != after.get(k) and k not in six}
    assert changed == set(), sorted(changed)[:20]


@pytest.mark.parametrize("ns", [p for p in RELEASE_PARAMS if p.id == "bookworm"],
                         indirect=True)
def test_purge_removes_the_silence_file_acknowledge_wrote(ns, debs):
    """``/etc/sitewarden/silence`` is no conffile: ``sitewarden acknowledge`` writes it.
    Removing the package keeps it (a reinstall finds the acknowledgements); purging
    removes it, and ``/etc/sitewarden`` with it (Debian policy 10.7.3). The maintainer
    script is the same on every release: Debian 12's root runs it."""
    silence = "/etc/sitewarden/silence"
    install_deb(ns, debs[VERSION])
    local = "/usr/local/lib/python3.11/dist-packages"
    run(ns, ["mkdir", "-p", local])
    ns.write_bytes(local + "/zz_swr_purge.py", b"X = 1\n")
    ns.write_bytes(local + "/zz_swr_purge.pth", b"import zz_swr_purge\n")
    report = json.loads(run(ns, ["sitewarden", "check", "--json"]).stdout)
    (found,) = [f for f in report["findings"] if f["kind"] == "unowned-startup-code"
                and f["file"] == local + "/zz_swr_purge.pth"]
    proc = run(ns, ["sitewarden", "acknowledge", found["id"][:12]])
    assert proc.returncode == 0 and ns.exists(silence), proc.stdout + proc.stderr
    conffiles = run(ns, ["cat", "/var/lib/dpkg/info/sitewarden.conffiles"]).stdout
    assert silence not in conffiles, conffiles
    apt(ns, "remove", "sitewarden")
    assert ns.exists(silence), "remove took the administrator's acknowledgements"
    apt(ns, "purge", "sitewarden")
    assert not ns.exists(silence) and not ns.exists("/etc/sitewarden")


def test_apt_hook_reports_what_a_dpkg_run_leaves_shadowed(ns, debs, tmp_path):
    install_deb(ns, debs[VERSION])
    put_in_apt_cache(ns, distro_debs(ns.release, ("python3-six", "python3-httplib2")))

    # Nothing shadowed: nothing of ours.
    proc = apt(ns, "install", "--reinstall", "python3-six")
    assert ours(proc) == [], proc.stdout + proc.stderr

    # A local pyparsing 3.0.1, with the override: shadows the distro's, breaks httplib2.
    whl = tmp_path / wheels.wheel("pyparsing", "3.0.1").name
    shutil.copy(wheels.wheel("pyparsing", "3.0.1"), whl)
    tmp_path.chmod(0o755)
    pip = run(ns, ["/usr/bin/python3", "-m", "pip", "install", "--no-index", "--no-deps",
                   "--break-system-packages", str(whl)])
    assert pip.returncode == 0, pip.stdout + pip.stderr
    local = ns.local_dir.as_posix()

    # A package that the shadowing does not involve: still nothing of ours.
    proc = apt(ns, "install", "--reinstall", "python3-six")
    assert ours(proc) == [], proc.stdout + proc.stderr

    proc = apt(ns, "install", "--reinstall", "python3-httplib2")
    lines = ours(proc)
    text = "\n".join(lines)
    assert lines and lines[0].startswith("sitewarden: ") and "python3-httplib2" in lines[0], text
    default = "/usr/bin/python" + PYTHONS[ns.release][0]
    assert "'pyparsing' is imported from %s/pyparsing (pyparsing 3.0.1)" % local in text
    assert "shadows /usr/lib/python3/dist-packages/pyparsing (pyparsing " in text
    assert re.search(r"breaks httplib2 [0-9.]+ \(python3-httplib2\): requires 'pyparsing",
                     text), text
    assert re.search(r"fix: sitewarden quarantine [0-9a-f]{12} --python %s\n" % default,
                     text + "\n"), text
    assert len(lines) <= 1 + 3 * len(PYTHONS[ns.release]), text

    # The hook's probes run no startup code: a .pth that would mark (or hang) the start
    # of a sitewarden probe (whose argv names its runtime copy) leaves no trace, and the
    # report is the same; other starts (apt's maintainer scripts) may run it.
    trace = local + "/swr-hook-trace"
    ns.write_bytes(local + "/zz-trace.pth", (
        "import sys; 'sitewarden' in str(sys.argv) and (open(%r, 'a').close() or "
        "__import__('time').sleep(3600))\n" % trace).encode())
    started = time.monotonic()
    proc = apt(ns, "install", "--reinstall", "python3-httplib2")
    assert time.monotonic() - started < 120
    assert ours(proc) == lines, proc.stdout + proc.stderr
    assert not ns.exists(trace)
    # A damaged runtime (part of it deleted by hand): the same.
    run(ns, ["rm", "-r", "/usr/lib/python3/dist-packages/sitewarden/cli"])
    proc = apt(ns, "install", "--reinstall", "python3-httplib2")
    assert ours(proc) == [] and "Post-Invoke" not in proc.stderr, proc.stdout + proc.stderr


def test_upgrade_keeps_it_active_and_coexists_with_sitewarden_install(ns, debs):
    install_deb(ns, debs[VERSION])
    proc = install_deb(ns, debs[NEXT])
    assert "Unpacking sitewarden (%s) over (%s)" % (DEB_VERSION[NEXT], DEB_VERSION[VERSION]) \
        in proc.stdout, proc.stdout
    assert ours(proc) == [], proc.stdout + proc.stderr
    for python in pythons(ns):
        assert_one_guard(ns, python, NEXT)
    verify = run(ns, ["dpkg", "-V", "sitewarden"])
    assert verify.returncode == 0 and verify.stdout == "", verify.stdout + verify.stderr
    assert not ns.exists("/usr/lib/python3/dist-packages/sitewarden-%s.dist-info" % VERSION)

    # `sitewarden install` where the package guards: says so, deploys nothing.
    python = pythons(ns)[0]
    proc = run(ns, ["sitewarden", "install", "--python", python])
    assert proc.returncode == 0, proc.stderr
    assert "guarded by the Debian package sitewarden %s" % NEXT in proc.stdout
    assert not ns.exists(ns.local_dir.as_posix() + "/sitewarden.pth")
    # Never over the package's files, never removing them.
    for command in ("install", "uninstall"):
        proc = run(ns, ["sitewarden", command, "--python", python, "--site-dir",
                        "/usr/lib/python3/dist-packages"])
        assert proc.returncode == 2 and "Debian package" in proc.stderr, proc.stderr

    proc = run(ns, ["sitewarden", "uninstall", "--python", python])
    assert proc.returncode == 2 and "apt remove sitewarden" in proc.stderr, proc.stderr

    # Deployed anyway, on purpose: one guard, the copy first on sys.path; status lists both.
    local = "/usr/local/lib/python%s/dist-packages" % python.rsplit("python", 1)[1]
    proc = run(ns, ["sitewarden", "install", "--python", python, "--site-dir", local])
    assert proc.returncode == 0 and "note: the Debian package" in proc.stdout, proc.stderr
    assert_one_guard(ns, python, NEXT, module=local + "/sitewarden/__init__.py")
    for other in pythons(ns)[1:]:
        assert_one_guard(ns, other, NEXT)
    status = run(ns, ["sitewarden", "status", "--python", python])
    assert "deployed: %s (sitewarden %s, pth) [loaded]" % (local, NEXT) in status.stdout
    assert ("deployed: /usr/lib/python3/dist-packages (sitewarden %s, Debian package "
            "sitewarden) [silent" % NEXT) in status.stdout, status.stdout
    check = run(ns, ["sitewarden", "check", "--python", python, "--json"])
    report = json.loads(check.stdout)
    own = [c for c in report["shadowing"]["modules"] if c["module"] == "sitewarden"]
    assert [c["severity"] for c in own] == ["info"], own  # one guard runs: not an accident
    assert len(report["guard"]["deployments"]) == 2
    proc = run(ns, ["sitewarden", "uninstall", "--python", python, "--site-dir", local])
    assert proc.returncode == 0, proc.stderr
    assert_one_guard(ns, python, NEXT)
    verify = run(ns, ["dpkg", "-V", "sitewarden"])
    assert verify.returncode == 0 and verify.stdout == "", verify.stdout + verify.stderr


@pytest.mark.debian
@pytest.mark.roots
def test_python_installed_later_gets_its_bytecode(debs):
    """sid: python3.15 removed, then installed again after the package (the dpkg trigger)."""
    packages = ("python3.15-minimal", "python3.15")
    ns = open_root(roots.RootTarget("sid", "/usr/bin/python3"))
    try:
        install_deb(ns, debs[VERSION])
        count = ["sh", "-c", "find /usr/lib/python3/dist-packages/sitewarden "
                 "-name '*.cpython-315.pyc' | wc -l"]
        assert int(run(ns, count).stdout) > 0
        proc = run(ns, ["dpkg", "--purge", "--force-depends", "python3.15-venv", *packages])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert not ns.exists("/usr/bin/python3.15")
        assert int(run(ns, count).stdout) == 0  # the trigger removed bytecode left for it
        proc = run(ns, ["dpkg", "-i", *put_in_apt_cache(ns, distro_debs("sid", packages))])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Processing triggers for sitewarden" in proc.stdout, proc.stdout
        missing = run(ns, ["sh", "-c", "cd /usr/lib/python3/dist-packages/sitewarden && "
                           "for f in $(find . -name '*.py'); do d=$(dirname $f); "
                           "b=$(basename $f .py); [ -f $d/__pycache__/$b.cpython-315.pyc ] "
                           "|| echo $f; done"])
        assert missing.stdout == "", missing.stdout
        assert_one_guard(ns, "/usr/bin/python3.15")
    finally:
        ns.close()


# ---------------------------------------------------------------- the .deb itself


def test_build_is_reproducible_and_holds_the_deployed_runtime(debs, tmp_path):
    again = build(tmp_path)
    assert again.read_bytes() == debs[VERSION].read_bytes()
    assert again.name == "sitewarden_%s_all.deb" % DEB_VERSION[VERSION]
    listing = subprocess.run(["dpkg-deb", "--contents", str(again)], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    epoch = subprocess.run(["git", "-C", str(CHECKOUT), "log", "-1", "--format=%ct"],
                           capture_output=True, text=True, check=True).stdout.strip()
    stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime(int(epoch)))
    assert all(" root/root " in line and stamp in line for line in listing), listing[:3]
    paths = {line.split(" ./", 1)[1] for line in listing}
    from sitewarden.cli import deploy, payload

    site = "usr/lib/python3/dist-packages/"
    assert {site + rel for rel in payload.runtime_files()} <= paths
    assert {site + name for name in deploy.HOOK_FILES["pth"]} <= paths
    assert not [p for p in paths if "__pycache__" in p or p.endswith(".pyc")]
    info = subprocess.run(["dpkg-deb", "--field", str(again), "Version", "Depends"],
                          capture_output=True, text=True, check=True).stdout
    assert "Version: %s\n" % DEB_VERSION[VERSION] in info and "Depends: python3:any" in info
    # Whoever builds it for a fleet signs it: --maintainer (the bumped rebuild's).
    field = subprocess.run(["dpkg-deb", "--field", str(debs[NEXT]), "Maintainer"],
                           capture_output=True, text=True, check=True).stdout
    assert field.strip() == REBUILDER, field
    log = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(debs[NEXT])], capture_output=True,
                         check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(log)) as tar:
        entry = tar.extractfile("./usr/share/doc/sitewarden/changelog.gz").read()
    assert " -- %s  " % REBUILDER in gzip.decompress(entry).decode().split("\n\n")[2]


def test_lintian_reports_no_error(debs):
    if shutil.which("lintian") is None:
        if running_under_ci():
            pytest.fail("lintian is required under CI")
        pytest.skip("lintian is not installed")
    proc = subprocess.run(["lintian", "--fail-on", "error", str(debs[VERSION])],
                          capture_output=True, text=True, timeout=600)
    errors = [line for line in proc.stdout.splitlines() if line.startswith("E:")]
    assert proc.returncode == 0 and errors == [], proc.stdout + proc.stderr


def test_machine_interpreters_are_real_and_counted_once(tmp_path):
    from sitewarden.cli.targets import machine_interpreters

    elf = os.path.realpath(sys.executable)
    shutil.copy(elf, tmp_path / "python3.99")
    (tmp_path / "python3").symlink_to("python3.99")
    (tmp_path / "python3.98").write_text("#!/bin/sh\nexec python3 \"$@\"\n")
    (tmp_path / "python3.98").chmod(0o755)
    shutil.copy(elf, tmp_path / "python3.99-config")
    found = machine_interpreters((str(tmp_path),))
    assert found == [(str(tmp_path / "python3.99"), [str(tmp_path / "python3")])]

