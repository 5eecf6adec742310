"""The benchmark scenarios of ``benchmarks/run`` (issue: prove sitewarden costs nothing).

``instructions`` (:func:`instruction_counts`) measures every place x configuration by
instruction count.  Its places, chosen with ``SITEWARDEN_BENCH_PLACES`` (comma-separated
names; default: all; the ``roots`` benchmark takes the roots' names too), so that places
can run in parallel processes:

* ``debian``: this machine's Debian 12 ``/usr/bin/python3``, in a private mount namespace;
* ``bookworm``, ``trixie``, ``sid``, ``sid-3.15``: the python3 of the debootstrapped
  roots (sid's python3.15 for ``sid-3.15``), each in an overlay + ``chroot``;
* ``3.8`` ... ``3.13``: the pyenv CPythons, each through a venv of its own.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from bench_lib import (
    Comparison,
    Sample,
    compare_commands,
    compare_instructions,
    instruction_row,
    spawn,
)

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("SITEWARDEN_TEST_CACHE",
                            Path.home() / ".cache" / "sitewarden-tests")) / "bench"


class Skip(Exception):
    pass


def newest_cpython() -> str:
    found = []
    for exe in glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3.*[0-9]")):
        m = re.search(r"versions/3\.(\d+)\.(\d+)/bin/python3\.\d+$", exe)
        if m:
            found.append(((int(m.group(1)), int(m.group(2))), exe))
    if not found:
        return sys.executable
    return max(found)[1]


class Context:
    def __init__(self, tmp: Path, repeat: int, python: str | None) -> None:
        self.tmp = tmp
        self.repeat = repeat
        self.python = python or newest_cpython()
        self.base_env = {k: v for k, v in os.environ.items()
                         if not k.startswith(("PYTHON", "SITEWARDEN_", "PIP_"))}

    def cli(self, *args: str, env: dict[str, str] | None = None) -> None:
        proc = subprocess.run([sys.executable, "-m", "sitewarden", *args], capture_output=True,
                              text=True, env=dict(self.base_env, **(env or {})))
        if proc.returncode != 0:
            raise RuntimeError("sitewarden %s failed: %s" % (" ".join(args), proc.stderr))

    def user_base(self, name: str) -> tuple[Path, dict[str, str]]:
        base = self.tmp / name
        env = dict(self.base_env, PYTHONUSERBASE=str(base))
        out = subprocess.run([self.python, "-c", "import site; print(site.getusersitepackages())"],
                             capture_output=True, text=True, env=env, check=True).stdout.strip()
        Path(out).mkdir(parents=True, exist_ok=True)
        return Path(out), env


def _row(comp: Comparison, target: str = "", note: str = "") -> dict[str, object]:
    row = comp.row()
    row["target"] = target
    row["note"] = note
    return row


def _distutils_hack(site: Path) -> None:
    """setuptools' distutils-precedence.pth + _distutils_hack, from its wheel (reference)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = sorted(CACHE.glob("setuptools-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary=:all:", "setuptools", "-d", str(CACHE)], check=True)
        wheels = sorted(CACHE.glob("setuptools-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as zf:
        for name in zf.namelist():
            if name.startswith("_distutils_hack/") or name == "distutils-precedence.pth":
                zf.extract(name, site)


def startup(ctx: Context) -> list[dict[str, object]]:
    """`python -c pass`: no deployment vs the guard deployed (and setuptools' hook), on the
    newest pyenv CPython (deployed into a temporary user site: PYTHONUSERBASE) and on
    Debian's /usr/bin/python3 (deployed as `sitewarden install` does, into
    /usr/local/lib/python3.X/dist-packages, inside private mount namespaces)."""
    rows = _startup_rows(ctx, _user_site_setups(ctx))
    debian = _debian_setups(ctx)
    if debian is not None:
        try:
            rows.extend(_startup_rows(ctx, debian["setups"]))
        finally:
            debian["close"]()
    return rows


def _user_site_setups(ctx: Context) -> dict[str, object]:
    tag = Path(ctx.python).name
    _, empty = ctx.user_base("ub-empty-" + tag)
    _, guarded = ctx.user_base("ub-guard-" + tag)
    ctx.cli("install", "--python", ctx.python, "--user", env=guarded)
    dh_site, dh = ctx.user_base("ub-distutils-hack-" + tag)
    _distutils_hack(dh_site)
    floor_site, floor = ctx.user_base("ub-floor-" + tag)
    (floor_site / "floor.pth").write_text("import sitewarden_floor\n")
    (floor_site / "sitewarden_floor.py").write_text("")
    subprocess.run([ctx.python, "-m", "compileall", "-q", str(floor_site)], check=True,
                   env=floor)
    return {"label": "", "python": ctx.python, "prefix": [], "empty": empty,
            "guarded": guarded, "distutils_hack": dh, "floor": floor}


def _debian_setups(ctx: Context) -> dict[str, object] | None:
    """Two namespaces over Debian's python: one untouched, one with the guard deployed."""
    if not Path("/usr/bin/python3").exists():
        return None
    _harness()
    from harness.debian_ns import DebianNamespace, available

    ok, _why = available()
    if not ok:
        return None
    plain, guarded = DebianNamespace(), DebianNamespace()
    try:
        proc = guarded.run([sys.executable, "-m", "sitewarden", "install", "--python",
                            "/usr/bin/python3"], env=ctx.base_env)
        if proc.returncode != 0:
            raise RuntimeError("install in the namespace failed: %s" % proc.stderr)
    except BaseException:
        plain.close()
        guarded.close()
        raise

    def enter(ns):
        return [shutil.which("nsenter") or "/usr/bin/nsenter", "-t", str(ns.pid), "-m", "--"]

    env = dict(ctx.base_env)
    setups = {"label": "Debian ", "python": "/usr/bin/python3", "empty": env, "guarded": env,
              "prefix": enter(plain), "prefix_guarded": enter(guarded)}

    def close():
        plain.close()
        guarded.close()

    return {"setups": setups, "close": close}


def _startup_rows(ctx: Context, st: dict[str, object]) -> list[dict[str, object]]:
    python = st["python"]
    pa = st["prefix"]
    pb = st.get("prefix_guarded", pa)
    base_cmd, guard_cmd = [*pa, python], [*pb, python]
    empty, guarded = st["empty"], st["guarded"]
    added = sorted(_modules_via(guard_cmd, guarded) - _modules_via(base_cmd, empty))
    note = "modules added: %s" % (", ".join(added) or "none")
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    a_argv, b_argv = [*base_cmd, "-c", "pass"], [*guard_cmd, "-c", "pass"]
    label = st["label"]
    where = "system site" if label else "user site"
    rows = []
    comp = compare_commands("startup, %sCPython %s (%s): `-c pass`" % (label, version, where),
                            (a_argv, empty), (b_argv, guarded), ctx.repeat)
    rows.append(_row(comp, "<= 1.02", note))
    py_pass = [python, "-c", "pass"]
    ins = compare_instructions("startup, %sCPython %s: instructions (millions)"
                               % (label, version), (py_pass, empty), (py_pass, guarded),
                               prefixes=(pa, pb))
    if ins is not None:
        rows.append(_row(ins, "<= 1.02", "callgrind, PYTHONHASHSEED=0: repeatable"))
    nobc = {"PYTHONDONTWRITEBYTECODE": "1"}
    comp2 = compare_commands("startup, no bytecode writes (PYTHONDONTWRITEBYTECODE=1)",
                             (a_argv, dict(empty, **nobc)), (b_argv, dict(guarded, **nobc)),
                             ctx.repeat)
    rows.append(_row(comp2, "<= 1.02", "bytecode compiled at deploy time"))
    if "floor" in st:
        ins = compare_instructions("reference: a .pth importing an empty module, instructions "
                                   "(millions)", (py_pass, empty), (py_pass, st["floor"]))
        if ins is not None:
            rows.append(_row(ins, "", "the least any module-importing startup hook costs"))
    if "distutils_hack" in st:
        dh = st["distutils_hack"]
        ref = compare_commands("reference: setuptools' distutils-precedence.pth",
                               (a_argv, empty), (a_argv, dh), ctx.repeat)
        rows.append(_row(ref, "", "the _distutils_hack startup hook, same interpreter"))
        ins = compare_instructions("reference: distutils-precedence.pth, instructions "
                                   "(millions)", (py_pass, empty), (py_pass, dh))
        if ins is not None:
            rows.append(_row(ins, "", "callgrind"))
    rss = Comparison("peak RSS of `-c pass` (KiB, not ms)",
                     Sample([float(x) for x in comp.baseline.maxrss_kb]),
                     Sample([float(x) for x in comp.candidate.maxrss_kb]))
    row = _row(rss, "", "")
    row["baseline_ms"] = statistics.median(comp.baseline.maxrss_kb)
    row["candidate_ms"] = statistics.median(comp.candidate.maxrss_kb)
    rows.append(row)
    return rows


def _modules_via(cmd: list[str], env: dict[str, str]) -> set[str]:
    out = subprocess.run([*cmd, "-c", "import sys; print('\\n'.join(sys.modules))"],
                         capture_output=True, text=True, env=env, check=True).stdout
    return set(out.split())


IMPORT_SCRIPT = """\
import sys, time
sys.path.insert(0, sys.argv[1])
t = time.perf_counter()
for i in range(int(sys.argv[2])):
    __import__('bench_mod_%d' % i)
sys.stdout.write(repr(time.perf_counter() - t))
"""


def _in_process(argv: list[str], env: dict[str, str]) -> float:
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout
    return float(out)


def imports(ctx: Context, count: int = 2000) -> list[dict[str, object]]:
    """Importing 2,000 small generated modules, with the finder vs without."""
    mods = ctx.tmp / "mods"
    mods.mkdir(exist_ok=True)
    for i in range(count):
        (mods / ("bench_mod_%d.py" % i)).write_text("X = %d\n" % i)
    _, empty = ctx.user_base("ub-empty")
    _, guarded = ctx.user_base("ub-guard")
    if not (Path(guarded["PYTHONUSERBASE"]) / "lib").exists() or not list(
            Path(guarded["PYTHONUSERBASE"]).rglob("sitewarden.pth")):
        ctx.cli("install", "--python", ctx.python, "--user", env=guarded)
    argv = [ctx.python, "-c", IMPORT_SCRIPT, str(mods), str(count)]
    _in_process(argv, empty)  # compile bytecode once
    a, b = Sample(), Sample()
    for i in range(ctx.repeat):
        pairs = [(empty, a), (guarded, b)] if i % 2 == 0 else [(guarded, b), (empty, a)]
        for env, sample in pairs:
            sample.seconds.append(_in_process(argv, env))
    comp = Comparison("import %d small modules (in-process time)" % count, a, b)
    return [_row(comp, "<= 1.02", "first import after startup included")]


def _harness():
    sys.path.insert(0, str(ROOT / "tests"))
    import harness

    return harness


def installers(ctx: Context) -> list[dict[str, object]]:
    """A refused install (old pip + guard vs pip 23+'s own check) and `pip list`
    in an ordinary process (guard deployed vs not): the hooks' cost."""
    harness = _harness()
    py311 = [i for i in harness.pyenv_interpreters() if i.version[:2] == (3, 11)]
    if not py311:
        raise Skip("needs a CPython 3.11")
    plain = harness.build_hermetic(py311[0], ctx.tmp / "hermetic-plain")
    guarded = harness.build_hermetic(py311[0], ctx.tmp / "hermetic-guarded")
    ctx.cli("install", "--python", str(guarded.executable), env=guarded.env())
    old, new = harness.pip_dir("22.3.1"), harness.pip_dir("24.0")

    def argv(hp, *args):
        return [str(hp.executable), "-m", "pip", *args]

    def env(hp, pip):
        return hp.env({"PYTHONPATH": str(pip), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})

    install = ("install", "--no-index", "six")
    rows = []
    a, b = Sample(), Sample()
    for i in range(max(5, ctx.repeat // 4)):
        runs = [((argv(plain, *install), env(plain, new)), a),
                ((argv(guarded, *install), env(guarded, old)), b)]
        for (cmd, e), sample in (runs if i % 2 == 0 else runs[::-1]):
            secs, code, _ = spawn(cmd, e)
            if code != 1:
                raise RuntimeError("expected a refusal (exit 1), got %d: %s" % (code, cmd))
            sample.seconds.append(secs)
    rows.append(_row(Comparison("refused install: pip 22.3.1 + guard vs pip 24.0 alone", a, b),
                     "", "time to pip's externally-managed-environment error"))
    comp = compare_commands("`pip list` (pip 24.0): guard deployed vs not",
                            (argv(plain, "list"), env(plain, new)),
                            (argv(guarded, "list"), env(guarded, new)),
                            max(5, ctx.repeat // 4))
    rows.append(_row(comp, "<= 1.02", "pip imported, hooks armed, no install"))
    # The same by instruction count (children: a hermetic 3.11+ is a shell script that
    # execs the binary), so the figure survives a busy machine.
    ins = compare_instructions("`pip list` (pip 24.0): guard deployed vs not, instructions "
                               "(millions)", (argv(plain, "list"), env(plain, new)),
                               (argv(guarded, "list"), env(guarded, new)), repeat=1,
                               children=True)
    if ins is not None:
        rows.append(_row(ins, "<= 1.02", "callgrind, PYTHONHASHSEED=0: repeatable"))
    rows.append(_startup_snapshot_row(ctx, guarded, plain, argv, env(plain, new),
                                      str(harness.wheel("six", "1.17.0"))))
    return rows


#: The guard's startup report costs an install that adds no startup file two snapshots of
#: what a start runs (``guard/startup_watch.py``: a listing of each site and ``sys.path``
#: directory, a read of each ``.pth`` and module it follows, a stat per place; no child
#: process): timed in the guarded interpreter, per install, against a whole install
#: (pip 24.0, ``--target``).
SNAPSHOT_SCRIPT = """\
import sys, time
from sitewarden.guard import startup_report as s
n = 200
t = time.perf_counter()
for _ in range(n):
    s.changes(s.snapshot(), s.snapshot())
sys.stdout.write(repr((time.perf_counter() - t) / n))
"""


def _startup_snapshot_row(ctx: Context, guarded, plain, argv, plain_env,
                          wheel: str) -> dict[str, object]:
    a, b = Sample(), Sample()
    for i in range(max(5, ctx.repeat // 4)):
        target = ctx.tmp / ("snapshot-target-%d" % i)
        secs, code, _ = spawn(argv(plain, "install", "--no-index", "--no-deps", "--target",
                                   str(target), wheel), plain_env)
        if code != 0:
            raise RuntimeError("pip install --target failed (%d)" % code)
        a.seconds.append(secs)
        proc = subprocess.run([str(guarded.executable), "-c", SNAPSHOT_SCRIPT],
                              env=guarded.env(), capture_output=True, text=True, check=True)
        b.seconds.append(float(proc.stdout))
    return _row(Comparison("an install that adds no startup file: the startup report's two "
                           "snapshots vs the install itself (pip 24.0)", a, b),
                "<= 0.01", "no child process, no hashing: what every allowed install pays")


#: The first import after startup builds the shadow index (``_watch.started``), so the
#: timed import includes it (``time`` is loaded at startup: importing it reaches no finder).
SHADOW_SCRIPT = """\
import sys, time
assert 'sitewarden._watch' not in sys.modules
t = time.perf_counter()
import shadowed_0
sys.stdout.write(repr(time.perf_counter() - t))
"""

PD_SCRIPT = """\
import sys, time
t = time.perf_counter()
import importlib.metadata as m
m.packages_distributions()
sys.stdout.write(repr(time.perf_counter() - t))
"""


def shadow_index(ctx: Context) -> list[dict[str, object]]:
    """First shadow warning among 600 distro distributions (40 shadowed), vs
    importlib.metadata.packages_distributions() on the same tree."""
    harness = _harness()
    py = [i for i in harness.pyenv_interpreters() if i.version[:2] >= (3, 10)]
    if not py:
        raise Skip("needs CPython 3.10+")
    hp = harness.build_hermetic(py[-1], ctx.tmp / "hermetic-shadow")
    ctx.cli("install", "--python", str(hp.executable), env=hp.env())
    for i in range(600):
        kind = "egg-info" if i % 2 else "dist-info"
        requires = ["shadowed-%d>=1.0" % (i % 40)] if i % 7 == 0 else []
        harness.make_dist(hp.distro_dir, "distro-%d" % i if i >= 40 else "shadowed-%d" % i,
                          "1.0", modules={("distro_%d.py" % i) if i >= 40 else
                                          ("shadowed_%d.py" % i): "X = 1\n"},
                          requires=requires, kind=kind)
    for i in range(40):
        harness.make_dist(hp.local_dir, "shadowed-%d" % i, "2.0",
                          modules={"shadowed_%d.py" % i: "X = 2\n"}, installer="pip")
    env = hp.env()
    argv_sw = [str(hp.executable), "-c", SHADOW_SCRIPT]
    argv_pd = [str(hp.executable), "-c", PD_SCRIPT]
    _in_process(argv_sw, env)
    _in_process(argv_pd, dict(env, SITEWARDEN_DISABLE="1"))
    a, b = Sample(), Sample()
    for _ in range(max(5, ctx.repeat // 2)):
        a.seconds.append(_in_process(argv_pd, dict(env, SITEWARDEN_DISABLE="1")))
        b.seconds.append(_in_process(argv_sw, env))
    comp = Comparison("shadow index + first warning (600 dists, 40 shadowed) vs "
                      "packages_distributions()", a, b)
    rows = [_row(comp, "<= 10 ms", "absolute: %.1f ms" % (statistics.median(b.seconds) * 1e3))]
    # The same by instruction count: the process with the guard vs without it (disabled),
    # so the figure survives a busy machine.  children: a hermetic 3.11+ is a shell script
    # that execs the binary (frozen modules off), which valgrind must follow.
    ins = compare_instructions("shadow index + first warning, instructions (millions)",
                               (argv_sw, dict(env, SITEWARDEN_DISABLE="1")), (argv_sw, env),
                               repeat=1, children=True)
    if ins is not None:
        row = _row(ins, "", "")
        row["note"] = "%+.2fM instructions for the index and the warning" % (
            row["candidate_ms"] - row["baseline_ms"])
        rows.append(row)
    return rows


def _installed_cli(ctx: Context, python: str | None = None, place: _Place | None = None
                   ) -> list[str]:
    """The `sitewarden` command as users install it, run by ``python`` (default: this
    one): a wheel's files in a venv of that interpreter (not the editable development
    install, whose import hook costs every start ~10 ms), started by a script like the
    Debian package's ``/usr/bin/sitewarden`` (:func:`_debian_cli_script`: ``-IS``, its
    directory appended to ``sys.path``; pip's generated scripts also run ``site`` and import
    ``re``, ``python -m`` imports ``runpy``: each ~20M instructions more).  With ``place`` (a
    root's), the venv is made by that place's ``python`` inside it, in a host temp dir
    the place sees at the same path."""
    python = python or sys.executable
    key = python if place is None else "%s:%s" % (place.label, python)
    venv = ctx.tmp / ("cli-venv-%s" % hashlib.sha1(key.encode()).hexdigest()[:8])
    script = venv / "bin" / "sitewarden"

    def run(argv: list[str]) -> str:
        if place is None:
            return subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        proc = place.run(argv)
        if proc.returncode:
            raise RuntimeError("%s: %s" % (" ".join(argv), proc.stderr[-500:]))
        return proc.stdout

    if not script.exists():
        src = ctx.tmp / "cli-src"
        if not src.exists():
            shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
                ".venv", ".git", "build", "*.egg-info", "__pycache__"))
        ctx.tmp.chmod(0o755)  # seen by the roots' interpreters too
        run([python, "-m", "venv", "--without-pip", str(venv)])
        site = run([str(venv / "bin" / "python"), "-c", "import sysconfig; "
                    "print(sysconfig.get_paths()['purelib'])"]).strip()
        import packaging

        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--no-compile", "--target", site, str(src),
                        "packaging==%s" % packaging.__version__], check=True)
        script.write_text(_debian_cli_script(str(venv / "bin" / "python"), site))
        script.chmod(0o755)
    return [str(script)]


def _debian_cli_script(python: str, site: str) -> str:
    """``packaging/build-deb``'s ``/usr/bin/sitewarden``, run by ``python`` with ``site``
    for the package's directory."""
    import importlib.util
    from importlib.machinery import SourceFileLoader

    loader = SourceFileLoader("build_deb", str(ROOT / "packaging" / "build-deb"))
    build = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    saved = list(sys.path)
    try:
        loader.exec_module(build)  # it puts this checkout's src/ first on sys.path
    finally:
        sys.path[:] = saved
    text = build.CLI_SCRIPT.replace("/" + build.SITE, site)
    assert text.startswith("#!/usr/bin/python3 ") and site in text, text
    return text.replace("#!/usr/bin/python3 ", "#!%s " % python, 1)


def check_vs_pip(ctx: Context) -> list[dict[str, object]]:
    """`sitewarden check` vs `pip check` and `pip list` on Debian's system python and
    on the newest pyenv CPython: wall clock (interleaved), and instructions summed over
    the CLI and the probe it starts in the target."""
    if not Path("/usr/bin/python3").exists():
        raise Skip("needs /usr/bin/python3")
    env = dict(ctx.base_env)
    rows = []
    for label, python in (("Debian python", "/usr/bin/python3"),
                          ("CPython %s" % _version_of(ctx.python), ctx.python)):
        check = ([*_installed_cli(ctx, python), "check", "--python", python, "--json"], env)
        spawn(*check)  # the probe's bytecode is written on the first run
        for name, pip_args in (("pip check", ["check"]), ("pip list", ["list"])):
            pip = ([python, "-m", "pip", *pip_args], env)
            comp = _compare_any_status("`sitewarden check` vs `%s` (%s)" % (name, label), pip,
                                       check, max(5, ctx.repeat // 4))
            row = _row(comp, ">= 5x faster than pip check" if name == "pip check" else "",
                       "sitewarden %.1fx faster; CLI installed from a wheel" % (1 / comp.ratio))
            rows.append(row)
        ins = compare_instructions("`sitewarden check` vs `pip check` (%s), instructions "
                                   "(millions)" % label, ([python, "-m", "pip", "check"], env),
                                   check, repeat=1, children=True)
        if ins is not None:
            rows.append(_row(ins, ">= 5x faster than pip check",
                             "sitewarden %.1fx fewer; CLI and probe process summed"
                             % (1 / ins.ratio)))
    return rows


def _version_of(python: str) -> str:
    return subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _compare_any_status(name, baseline, candidate, repeat):
    a, b = Sample(), Sample()
    for i in range(repeat):
        order = ((baseline, a), (candidate, b)) if i % 2 == 0 else ((candidate, b), (baseline, a))
        for (argv, env), sample in order:
            secs, _code, _ = spawn(argv, env)
            sample.seconds.append(secs)
    return Comparison(name, a, b)




# ---------------------------------------------------------------- instruction counts

#: Imports ``count`` generated modules found through ``PYTHONPATH`` (bytecode cached).
IMPORT_ONLY = "import sys\nfor i in range(int(sys.argv[1])):\n    __import__('bench_mod_%d' % i)\n"

#: The least a meta-path finder written in Python can cost: a module that puts itself
#: first on ``sys.meta_path`` with a ``find_spec`` returning None at once ...
FLOOR_FINDER = ("import sys\ndef find_spec(name, path=None, target=None):\n    return None\n"
                "sys.meta_path.insert(0, sys.modules[__name__])\n")
#: ... and with one dict membership test before it does.
FLOOR_FINDER_DICT = ("import sys\nW = {}\ndef find_spec(name, path=None, target=None):\n"
                     "    if name in W:\n        return W[name]\n    return None\n"
                     "sys.meta_path.insert(0, sys.modules[__name__])\n")

#: ``(key, label)`` of what is measured against the baseline, in order.
CONFIGS = [
    ("floor-module", "reference: a .pth importing an empty module"),
    ("floor-finder", "reference: finder floor (first on meta_path, returns None)"),
    ("floor-finder-dict", "reference: finder floor + one dict membership test"),
    ("distutils", "reference: setuptools' distutils-precedence.pth"),
    ("guard-pth", "sitewarden, .pth hook"),
    ("guard-sitecustomize", "sitewarden, sitecustomize hook"),
]
#: Python 3.15+ only (the ``roots`` benchmark, sid's python3.15): the PEP 829 ``.start``
#: file alone, and the ``.pth`` + ``.start`` pair sitewarden deployed before its hook policy.
START_CONFIGS = [
    ("guard-start", "sitewarden, .start alone (--hook start)"),
    ("guard-pair", "sitewarden, .pth + .start (both files deployed)"),
]
#: The baseline's one ``.pth`` file: most systems have one, and reading any costs the same.
COMMENT_PTH = b"# a comment-only .pth\n"

#: ``SITEWARDEN_BENCH_PLACES`` names of the roots' interpreters: (name, release, executable).
ROOT_PLACES = [("bookworm", "bookworm", "/usr/bin/python3"),
               ("trixie", "trixie", "/usr/bin/python3"),
               ("sid", "sid", "/usr/bin/python3"),
               ("sid-3.15", "sid", "/usr/bin/python3.15")]
DEBIAN_NAMES = {"bookworm": "Debian 12", "trixie": "Debian 13", "sid": "Debian sid"}


class _Place:
    """An interpreter whose site directory the benchmark may change: Debian's python
    inside a private mount namespace, an interpreter of a debootstrapped root, or a
    venv of a pyenv CPython."""

    label: str
    python: str
    site: Path  # where the guard and the reference modules go
    #: valgrind's path where :meth:`prefix` runs it (None: this machine's).
    valgrind: str | None = None

    def run(self, argv, env=None) -> subprocess.CompletedProcess:
        raise NotImplementedError

    def prefix(self) -> list[str]:
        return []

    def env(self) -> dict[str, str]:
        raise NotImplementedError

    def write(self, path: Path, data: bytes) -> None:
        raise NotImplementedError

    def remove(self, *paths: Path) -> None:
        self.run(["rm", "-rf", *map(str, paths)])

    def compile(self, *paths: Path) -> None:
        self.run([self.python, "-m", "compileall", "-q", *map(str, paths)])

    def count(self, argv, env=None) -> int | None:
        from bench_lib import instructions

        return instructions(argv, dict(self.env(), **(env or {})), self.prefix(),
                            valgrind=self.valgrind)

    def cli_argv(self) -> list[str]:
        """The sitewarden CLI of this checkout, as runnable by :meth:`run`."""
        return [sys.executable, "-m", "sitewarden"]

    def cli(self, *args: str, env=None) -> None:
        proc = self.run([*self.cli_argv(), *args], env)
        if proc.returncode != 0:
            raise RuntimeError("sitewarden %s: %s" % (" ".join(args), proc.stderr))

    def install(self, hook: str) -> None:
        """The guard deployed as ``sitewarden install --hook HOOK`` does."""
        self.cli("install", "--python", self.python, "--hook", hook)

    def uninstall(self) -> None:
        self.cli("uninstall", "--python", self.python)

    def close(self) -> None:
        pass


class _NamespacePlace(_Place):
    """Debian's python in a mount namespace of the test harness (``self.ns``), with one
    comment-only .pth and nothing else that runs code at startup (this machine's sandbox
    CA hook, setuptools' hook: a reference row of its own, restored for it)."""

    def _one_comment_pth(self, ns) -> None:
        self.ns = ns
        self.python = ns.executable
        self.site = ns.local_dir
        dist = ns.distro_dir
        self.distutils_pth = (dist / "distutils-precedence.pth", None)
        try:
            self.distutils_pth = (dist / "distutils-precedence.pth",
                                  ns.read_bytes(str(dist / "distutils-precedence.pth")))
        except FileNotFoundError:
            pass
        for d in (dist, self.site):
            self.run(["sh", "-c", "rm -f %s/*.pth" % d])
        self.comment_pth = dist / "zz-comment.pth"
        self.write(self.comment_pth, COMMENT_PTH)

    def run(self, argv, env=None):
        return self.ns.run([str(a) for a in argv], env=env)

    def env(self):
        return self.ns.env()

    def write(self, path, data):
        self.ns.write_bytes(str(path), data)

    def distutils(self):
        path, data = self.distutils_pth
        if data is None:
            raise Skip("no distutils-precedence.pth on this Debian")
        self.write(path, data)
        return [path]

    def close(self):
        self.ns.close()


class _DebianPlace(_NamespacePlace):
    def __init__(self) -> None:
        _harness()
        from harness.debian_ns import DebianNamespace

        self._one_comment_pth(DebianNamespace())
        self.label = "Debian 12 %s" % _version(self)

    def prefix(self):
        return ["nsenter", "-t", str(self.ns.pid), "-m", "--"]


class _RootPlace(_NamespacePlace):
    """An interpreter of a debootstrapped Debian root (tests/harness/roots.py: an overlay
    over the cached root, commands ``chroot``ed into it), counted by the root's own
    valgrind; the CLI is the checkout's, run by the root's python3 (``ns.cli``)."""

    valgrind = "/usr/bin/valgrind"

    def __init__(self, release: str, executable: str) -> None:
        _harness()
        from harness.roots import ChrootNamespace, available

        ok, why = available()
        if not ok:
            raise Skip(why)
        ns = ChrootNamespace(release, executable)
        try:
            ns.run(["mkdir", "-p", str(ns.local_dir)])
            self._one_comment_pth(ns)
        except BaseException:
            ns.close()
            raise
        self.version = tuple(ns.python.version[:2])
        other = "" if executable == "/usr/bin/python3" else ", " + Path(executable).name
        self.label = "%s %s (%s root%s)" % (DEBIAN_NAMES[release], _version(self), release,
                                           other)

    def prefix(self):
        return self.ns._enter([], "/")

    def cli_argv(self):
        return list(self.ns.cli)

    def distutils(self):
        paths = super().distutils()
        # Bytecode as the other places have it (sid's python3.15 is not the version
        # python3-setuptools compiled _distutils_hack for).
        self.compile(self.ns.distro_dir / "_distutils_hack")
        return paths


class _VenvPlace(_Place):
    """A pyenv CPython through a virtual environment of its own (``--without-pip``):
    the interpreter as it is (its frozen modules), without this machine's
    site-packages ``.pth`` files.  The guard is deployed by ``sitewarden install
    --python <the pyenv python> --site-dir <the venv's site-packages> --hook HOOK`` with
    ``PYTHONUSERBASE`` set to the venv, whose user site (a site directory of that
    python, so ``--site-dir`` takes it) is then the venv's site-packages.  The CLI
    refuses a venv's python (it names the base), and ``--user`` with the sitecustomize
    hook; this writes what ``install --python <the pyenv python> [--hook HOOK]`` writes
    into the interpreter's own site-packages (sitecustomize: a ``sitecustomize.py`` of
    its own, as for any interpreter without one), compiled by it, where the venv reads
    it, without touching pyenv's directories."""

    def __init__(self, ctx: Context, interp) -> None:
        venv = ctx.tmp / ("instr-venv-" + interp.id)
        subprocess.run([interp.executable, "-m", "venv", "--without-pip", str(venv)],
                       check=True, env=ctx.base_env)
        self.base_env = dict(ctx.base_env, PYTHONUSERBASE=str(ctx.tmp / "instr-no-user"))
        self.python = str(venv / "bin" / "python")
        self.site = Path(self.run([self.python, "-c", "import sysconfig; "
                                   "print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
        self.interp = interp
        self.deploy_env = {"PYTHONUSERBASE": str(venv)}
        self.user_site = Path(self.run([interp.executable, "-c", "import site; print("
                                        "site.getusersitepackages())"],
                                       self.deploy_env).stdout.strip())
        (self.site / "00-comment.pth").write_bytes(COMMENT_PTH)
        self.label = "CPython %s (pyenv, venv)" % _version(self)

    def run(self, argv, env=None):
        return subprocess.run([str(a) for a in argv], env=dict(self.base_env, **(env or {})),
                              capture_output=True, text=True, cwd="/")

    def env(self):
        return self.base_env

    def write(self, path, data):
        Path(path).write_bytes(data)

    def distutils(self):
        before = set(self.site.iterdir())
        _distutils_hack(self.site)
        return sorted(set(self.site.iterdir()) - before)

    def _deploy(self, command: str, *args: str) -> None:
        if self.user_site != self.site:
            raise Skip("the user site of %s with PYTHONUSERBASE=<venv> is %s, not the venv's "
                       "site-packages %s" % (self.interp.executable, self.user_site, self.site))
        self.cli(command, "--python", self.interp.executable, "--site-dir", str(self.site),
                 *args, env=self.deploy_env)

    def install(self, hook):
        self._deploy("install", "--hook", hook)

    def uninstall(self):
        self._deploy("uninstall")


def _version(place: _Place) -> str:
    return place.run([place.python, "-c", "import sys; print(sys.version.split()[0])"]
                     ).stdout.strip()


def _configure(place: _Place, key: str) -> list[Path]:
    """Set ``place`` up as ``key``; returns what to remove afterwards."""
    site = place.site
    if key.startswith("floor"):
        body = {"floor-module": "", "floor-finder": FLOOR_FINDER,
                "floor-finder-dict": FLOOR_FINDER_DICT}[key]
        place.write(site / "sitewarden_floor.py", body.encode())
        place.write(site / "sitewarden_floor.pth", b"import sitewarden_floor\n")
        place.compile(site / "sitewarden_floor.py")
        return [site / "sitewarden_floor.py", site / "sitewarden_floor.pth",
                site / "__pycache__"]
    if key == "distutils":
        paths = place.distutils()
        compiled = [p for p in paths if p.suffix != ".pth"]
        if compiled:
            place.compile(*compiled)
        return paths
    hook = key.split("-", 1)[1]
    if hook == "pair":
        from sitewarden.cli.payload import hook_text

        place.install("start")
        place.write(site / "sitewarden.pth", hook_text("sitewarden.pth").encode())
    else:
        place.install(hook)
    return []


def _unconfigure(place: _Place, key: str, paths: list[Path]) -> None:
    if key.startswith("guard"):
        place.uninstall()  # the .pth of the pair too: uninstall removes both hook files
    elif paths:
        place.remove(*paths)


def modules_dir(ctx: Context, count: int) -> Path:
    """``count`` generated modules (``bench_mod_N``), made once per run."""
    mods = ctx.tmp / "instr-mods"
    if not mods.exists():
        mods.mkdir()
        for i in range(count):
            (mods / ("bench_mod_%d.py" % i)).write_text("X = %d\n" % i)
        mods.chmod(0o755)
        ctx.tmp.chmod(0o755)  # read inside the roots' chroots too
    return mods


def places(ctx: Context, kinds=("debian", "roots", "pyenv")) -> list:
    """``(name, make)`` of every place of ``kinds``, as ``SITEWARDEN_BENCH_PLACES``
    (comma-separated names; default: all) selects them: ``debian`` (Debian 12's
    /usr/bin/python3 in a namespace), ``bookworm``, ``trixie``, ``sid``, ``sid-3.15``
    (the roots' interpreters), ``3.8`` ... ``3.13`` (pyenv CPythons in venvs)."""
    only = [w for w in os.environ.get("SITEWARDEN_BENCH_PLACES", "").split(",") if w]
    found: list = []
    if "debian" in kinds and Path("/usr/bin/python3").exists():
        found.append(("debian", _DebianPlace))
    if "roots" in kinds:
        found += [(name, lambda r=release, e=exe: _RootPlace(r, e))
                  for name, release, exe in ROOT_PLACES]
    if "pyenv" in kinds:
        found += [("%d.%d" % i.version[:2], lambda i=i: _VenvPlace(ctx, i))
                  for i in _harness().pyenv_interpreters() if i.version[:2] >= (3, 8)]
    return [(name, make) for name, make in found if not only or name in only]


def over_places(chosen: list, measure) -> list[dict[str, object]]:
    """``measure(place)``'s rows for each of ``chosen`` (:func:`places`), one place at a
    time (each closed after), printed as they come: a long run."""
    rows = []
    for name, make in chosen:
        started = time.monotonic()
        try:
            place = make()
        except Exception as exc:  # the namespaces need root and unshare
            print("  skipped %s: %s" % (name, exc), file=sys.stderr)
            continue
        try:
            got = measure(place)
            rows.extend(got)
            for row in got:
                print("  %s: x%.4f (%s)" % (row["benchmark"], row["ratio"], row["note"]),
                      file=sys.stderr, flush=True)
        except Exception as exc:
            print("  %s: failed: %s" % (place.label, exc), file=sys.stderr)
        finally:
            place.close()
        print("  %s: %.1f min" % (name, (time.monotonic() - started) / 60), file=sys.stderr,
              flush=True)
    return rows


def instruction_counts(ctx: Context, count: int = 2000) -> list[dict[str, object]]:
    """Instruction counts (callgrind, PYTHONHASHSEED=0) of `-c pass` and of importing
    ``count`` modules through PYTHONPATH, against the same interpreter with one
    comment-only .pth: the guard (both hooks) and the reference rows (the floors,
    setuptools' hook), on Debian's python (namespace), the roots' interpreters (chroot)
    and pyenv CPythons (venvs); ``SITEWARDEN_BENCH_PLACES`` selects (:func:`places`)."""
    mods = modules_dir(ctx, count)
    return over_places(places(ctx), lambda place: instruction_rows(place, mods, count))


def instruction_rows(place: _Place, mods: Path, count: int,
                     configs=CONFIGS) -> list[dict[str, object]]:
    """Two rows per config: `-c pass` and ``count`` imports, against the place as it is
    (one comment-only .pth)."""
    place.compile(mods)
    argv_pass = [place.python, "-c", "pass"]
    argv_imp = [place.python, "-c", IMPORT_ONLY, str(count)]
    imp_env = {"PYTHONPATH": str(mods)}

    def measure():
        return place.count(argv_pass), place.count(argv_imp, imp_env)

    base_pass, base_imp = measure()
    if base_pass is None or base_imp is None:
        proc = place.run(argv_pass)
        raise RuntimeError("no instruction count (valgrind missing, or the interpreter "
                           "failed: %s)" % proc.stderr[-500:])
    rows = []
    for key, label in configs:
        try:
            paths = _configure(place, key)
        except Skip as exc:
            print("  %s, %s: skipped: %s" % (place.label, label, exc), file=sys.stderr)
            continue
        try:
            c_pass, c_imp = measure()
        finally:
            _unconfigure(place, key, paths)
        target = "<= 1.02" if key in ("guard-pth", "guard-sitecustomize") else ""
        per_import = ((c_imp - base_imp) - (c_pass - base_pass)) / count
        for what, b, c, note in (
                ("`-c pass`", base_pass, c_pass, "%+.3fM" % ((c_pass - base_pass) / 1e6)),
                ("import %d modules" % count, base_imp, c_imp,
                 "%+.0f per import (first-import start included)" % per_import)):
            rows.append(instruction_row("%s, %s: %s, instructions (millions)" % (
                place.label, label, what), b, c, target, note))
    return rows


ALL = [
    ("instructions", instruction_counts),
    ("startup", startup),
    ("imports", imports),
    ("installers", installers),
    ("shadow-index", shadow_index),
    ("check", check_vs_pip),
]

_unused = (json, shutil, spawn)
