"""``check-startup``: `sitewarden check` vs `pip check` with a realistic startup inventory.

``check`` reads every startup file of the target, finds each one's owner in dpkg's
database and in the RECORDs beside it, and stats every ``sys.path`` directory and its
parents (issue: "check sees everything that runs at startup").  It must stay at least 5x
faster than ``pip check`` on the same interpreter.  Measured on this machine's Debian 12
``/usr/bin/python3`` in a private mount namespace (the harness's), twice: as the
namespace has it, then with 60 pip-installed distributions (each requiring the one
before, as ``pip check`` checks them) and 11 startup files in ``/usr/local``: Debian's
``distutils-precedence.pth`` restored, setuptools' one owned by a RECORD, three editable
installs' finders, two ``-nspkg.pth``, a coverage ``.pth``, a ``.pth`` of three path
lines and an unowned executable ``.pth``; then, the worst case for ownership, an
unowned ``.pth`` running code in ``/usr/lib/python3/dist-packages``: no ``.list`` names
it, so the probe's index of dpkg's startup files answers (``facts/owners.py``); then
the same with that index out of date (the first check after a dpkg run), with none
(every list read, ~7.6 MB on this machine), and with no analysis kept (every startup line
and module an import line imports compiled and read for what it does).  Wall clock,
interleaved; the CLI installed from a wheel, as ``check`` (``scenarios.check_vs_pip``)
measures it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from scenarios import (
    Context,
    Skip,
    _compare_any_status,
    _DebianPlace,
    _harness,
    _installed_cli,
    _row,
    spawn,
)

N_DISTS = 60
HACK = ("import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
        "== 'local'; enabled and __import__('_distutils_hack').add_shim(); \n")
NSPKG = ("import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join("
         "sys._getframe(1).f_locals['sitedir'], *('%s',));importlib = has_mfs and "
         "__import__('importlib.util');has_mfs and __import__('importlib.machinery');"
         "m = has_mfs and sys.modules.setdefault('%s', importlib.util.module_from_spec("
         "importlib.machinery.PathFinder.find_spec('%s', [os.path.dirname(p)])));"
         "m = m or sys.modules.setdefault('%s', types.ModuleType('%s'));"
         "mp = (m or []) and m.__dict__.setdefault('__path__',[]);"
         "(p not in mp) and mp.append(p)\n")


def _stage(stage: Path, extra: Path) -> None:
    from harness.dists import make_dist

    for i in range(N_DISTS):
        requires = ["bench-dist-%02d>=1.0" % (i - 1)] if i else []
        make_dist(stage, "bench-dist-%02d" % i, "1.%d" % i, requires=requires, installer="pip")
    make_dist(stage, "setuptools", "80.0", {
        "distutils-precedence.pth": HACK,
        "_distutils_hack/__init__.py": "def add_shim():\n    pass\n"}, installer="pip")
    for i in range(3):
        finder = "__editable___bench_edit_%d_1_0_finder" % i
        make_dist(stage, "bench-edit-%d" % i, "1.0", {
            "__editable__.bench_edit_%d-1.0.pth" % i: "import %s; %s.install()\n" % (finder,
                                                                                   finder),
            finder + ".py": "def install():\n    pass\n"}, installer="pip")
    for i in range(2):
        ns_name = "benchns%d" % i
        make_dist(stage, "bench-nspkg-%d" % i, "1.0", {
            "bench_nspkg_%d-1.0-nspkg.pth" % i: NSPKG % ((ns_name,) * 5),
            "%s/part%d/__init__.py" % (ns_name, i): ""}, installer="pip")
    make_dist(stage, "coverage", "7.6", {
        "coverage_startup.pth": "import coverage; coverage.process_startup()\n",
        "coverage/__init__.py": "def process_startup():\n    pass\n"}, installer="pip")
    paths = []
    for i in range(3):
        (extra / ("src%d" % i)).mkdir(parents=True, exist_ok=True)
        paths.append(str(extra / ("src%d" % i)))
    (stage / "zz-paths.pth").write_text("".join(p + "\n" for p in paths))
    (stage / "zz-unowned.pth").write_text("import sys; sys.bench_unowned = 1\n")


def stage_startup_files(ctx: Context) -> Path:
    """A directory holding the distributions and startup files above (once per run),
    readable by every place, to copy into a site directory."""
    stage, extra = ctx.tmp / "startup-stage", ctx.tmp / "startup-extra"
    if not stage.exists():
        stage.mkdir()
        _stage(stage, extra)
        for d in (stage, extra, ctx.tmp):
            d.chmod(0o755)
    return stage


#: The worst case again, the first check after a dpkg run: the probe's index of dpkg's
#: startup files is out of date (its first line no longer matches the database), so
#: every list is stat()ed and the changed ones read.  A ``sh`` and a ``sed`` start are
#: in the time.  The index is in the CLI's private cache, under the namespace's HOME.
STALE = "the same, first check after a dpkg run (index brought up to date)"
INDEXES = '"$HOME"/.cache/sitewarden/runtime/*/dpkg-index-*'
STALE_SH = 'for f in %s; do sed -i "1s/^/x/" "$f"; done; exec "$@"' % INDEXES
#: ...and with no index at all (a new sitewarden's first check): every list read.
NO_INDEX = "the same, first check of a new sitewarden (no index yet)"
NO_INDEX_SH = 'rm -f %s; exec "$@"' % INDEXES
#: ...and with no analysis kept (a new sitewarden's, or a new interpreter's, first check):
#: every startup line and every module they import compiled and read for what it does.
NO_MEMO = "the same, first check without kept analyses (every line and module read anew)"
MEMOS = '"$HOME"/.cache/sitewarden/runtime/*/startup-*'
NO_MEMO_SH = 'rm -f %s; exec "$@"' % MEMOS


def benchmark(ctx: Context) -> list[dict[str, object]]:
    if not Path("/usr/bin/python3").exists():
        raise Skip("needs /usr/bin/python3")
    _harness()
    try:
        place = _DebianPlace()
    except Exception as exc:  # no unshare, not root
        raise Skip("Debian namespace: %s" % exc) from None
    rows = []
    try:
        cli = _installed_cli(ctx, "/usr/bin/python3")
        enter = [shutil.which(place.prefix()[0]) or place.prefix()[0], *place.prefix()[1:]]
        check = ([*enter, *cli, "check", "--python", place.python, "--json"],
                 place.env())
        pip = ([*enter, place.python, "-m", "pip", "check"], place.env())
        repeat = max(5, ctx.repeat // 4)
        for label in ("as the namespace has it", "60 distributions, 11 startup files",
                      "and an unowned .pth running code in /usr/lib/python3/dist-packages",
                      STALE, NO_INDEX, NO_MEMO):
            if label.startswith("60"):
                stage = stage_startup_files(ctx)
                place.distutils()
                place.run(["cp", "-a", "%s/." % stage, str(place.site)])
            elif label.startswith("and"):
                place.write(place.ns.distro_dir / "zz-unowned-distro.pth",
                            b"import sys; sys.bench_unowned_distro = 1\n")
            spawn(*check)  # the probe's bytecode is written on the first run
            argv, target = check[0], ">= 5x faster than pip check"
            if label in (STALE, NO_INDEX, NO_MEMO):
                script = {STALE: STALE_SH, NO_INDEX: NO_INDEX_SH, NO_MEMO: NO_MEMO_SH}[label]
                argv, target = [*enter, "/bin/sh", "-c", script, "sh", *argv[len(enter):]], ""
            comp = _compare_any_status("`sitewarden check` vs `pip check` (Debian 12, %s)"
                                       % label, pip, (argv, check[1]), repeat)
            rows.append(_row(comp, target, "sitewarden %.1fx faster" % (1 / comp.ratio)))
    finally:
        place.close()
    return rows
