"""Benchmark rows only the interpreters of the debootstrapped Debian roots have.

For Debian 12's, 13's python3 and sid's python3 and python3.15, each in its root
(``tests/harness/roots.py``: an overlay over the cached root, ``chroot``), by
instruction count (the root's own valgrind, callgrind, ``PYTHONHASHSEED=0``):

* the first ``.pth`` file: no ``.pth`` at all vs one comment-only ``.pth`` (what
  reading any ``.pth`` costs by itself; the roots' own ``distutils-precedence.pth``
  is removed in these namespaces so that the baseline is exactly one ``.pth``);
* on 3.15 (PEP 829): the ``.start`` file alone (``--hook start``) and the ``.pth`` +
  ``.start`` pair older sitewarden deployed, which is why the default hook is what it
  is: `-c pass` and importing 2,000 small modules, as the ``instructions`` benchmark
  measures every other configuration.

The rows every interpreter has (the reference rows, the guard with each hook) are
the ``instructions`` benchmark's (``scenarios.instruction_counts``), which measures
these interpreters too.  ``SITEWARDEN_BENCH_PLACES`` selects the roots here as there
(``bookworm``, ``trixie``, ``sid``, ``sid-3.15``; comma-separated).

And ``check-roots``: `sitewarden check --json` against `pip check` on each root's
interpreter as the root has it (Debian's ``distutils-precedence.pth`` back, no other
``.pth``), then with ``check-startup``'s 60 distributions and startup files: wall clock
(interleaved, timed inside the root by its python3) and instructions summed over the CLI
and its probe.  The CLI is installed from a wheel into a venv of the root's ``python3``,
as the Debian package runs it (``/usr/bin/sitewarden``, the default ``python3``, whatever
interpreter it checks).

Wired into ``benchmarks/run`` as the ``roots`` and ``check-roots`` benchmarks; need root
and the cached roots (``make roots``), skipped otherwise.  Alone:
``python benchmarks/roots_rows.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List

import scenarios
from bench_lib import Comparison, Sample, compare_instructions, instruction_row

Skip = scenarios.Skip
COUNT = 2000


def _first_pth(place) -> Dict[str, object]:
    """`-c pass` with no .pth at all vs with the place's one comment-only .pth."""
    argv = [place.python, "-c", "pass"]
    one = place.count(argv)
    place.remove(place.comment_pth)
    try:
        none = place.count(argv)
    finally:
        place.write(place.comment_pth, scenarios.COMMENT_PTH)
    if one is None or none is None:
        raise RuntimeError("no instruction count: %s" % place.run(argv).stderr[-500:])
    return instruction_row("%s: first .pth read (`-c pass`, M instructions)" % place.label,
                           none, one, "", "no .pth vs one comment-only .pth")


def benchmark(ctx) -> List[Dict[str, object]]:
    """``benchmarks/run``'s entry point."""
    mods = scenarios.modules_dir(ctx, COUNT)

    def measure(place) -> List[Dict[str, object]]:
        rows = [_first_pth(place)]
        if place.version >= (3, 15):
            rows += scenarios.instruction_rows(place, mods, COUNT, scenarios.START_CONFIGS)
        return rows

    chosen = scenarios.places(ctx, kinds=("roots",))
    if not chosen:
        raise Skip("no root selected (SITEWARDEN_BENCH_PLACES)")
    return scenarios.over_places(chosen, measure)


CHECK_TARGET = ">= 5x faster than pip check"

#: Times interleaved pairs inside the root, run by its own python3 (``-I -S``): one
#: ``nsenter``/``chroot`` for the whole loop, not one in every time.  Argv: the number of
#: pairs, then the two commands as JSON; prints both lists of seconds as JSON.
PAIRS = r"""
import json, os, sys, time
def spawn(argv):
    fd = os.open(os.devnull, os.O_RDWR)
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, fd, n) for n in (0, 1, 2)])
    os.waitpid(pid, 0)
    seconds = time.perf_counter() - start
    os.close(fd)
    return seconds
a, b = json.loads(sys.argv[2]), json.loads(sys.argv[3])
ta, tb = [], []
for i in range(int(sys.argv[1])):
    for argv, got in ((a, ta), (b, tb)) if i % 2 == 0 else ((b, tb), (a, ta)):
        got.append(spawn(argv))
print(json.dumps([ta, tb]))
"""


def _check_vs_pip(ctx, place, cli, label) -> List[Dict[str, object]]:
    env = place.env()
    check = [*cli, "check", "--python", place.python, "--json"]
    pip = [place.python, "-m", "pip", "check"]
    # Both answer (a check that fails fast would flatter it); the first runs also
    # write the bytecode and the CLI's runtime cache.
    report = place.run(check)
    if "findings" not in json.loads(report.stdout or "{}"):
        raise RuntimeError("sitewarden check: %s" % report.stderr[-500:])
    if place.run(pip).returncode not in (0, 1):
        raise RuntimeError("pip check does not run: %s" % place.run(pip).stderr[-500:])
    proc = place.run(["/usr/bin/python3", "-I", "-S", "-c", PAIRS,
                      str(max(5, ctx.repeat // 2)), json.dumps(pip), json.dumps(check)])
    if proc.returncode:
        raise RuntimeError("timing in the root: %s" % proc.stderr[-500:])
    ta, tb = json.loads(proc.stdout)
    name = "`sitewarden check` vs `pip check` (%s, %s)" % (place.label, label)
    comp = Comparison(name, Sample(seconds=ta), Sample(seconds=tb))
    rows = [scenarios._row(comp, CHECK_TARGET, "sitewarden %.1fx faster; CLI installed "
                           "from a wheel, run by the root's python3" % (1 / comp.ratio))]
    prefix = place.prefix()
    ins = compare_instructions(name + ", instructions (millions)", (pip, env), (check, env),
                               repeat=1, prefixes=(prefix, prefix), children=True,
                               valgrind=place.valgrind)
    if ins is not None:
        rows.append(scenarios._row(ins, CHECK_TARGET, "sitewarden %.1fx fewer; CLI and "
                                   "probe process summed" % (1 / ins.ratio)))
    return rows


def check_benchmark(ctx) -> List[Dict[str, object]]:
    """``benchmarks/run``'s ``check-roots``: `sitewarden check` vs `pip check` in each root,
    as debootstrap made it, then with ``check-startup``'s 60 pip-installed distributions
    and startup files in its ``/usr/local``."""
    from startup_rows import stage_startup_files

    def measure(place) -> List[Dict[str, object]]:
        place.distutils()  # the root as installed: Debian's own .pth and nothing else
        place.remove(place.comment_pth)
        cli = scenarios._installed_cli(ctx, "/usr/bin/python3", place)
        rows = _check_vs_pip(ctx, place, cli, "as installed")
        stage = stage_startup_files(ctx)
        place.run(["cp", "-a", "%s/." % stage, str(place.site)])
        rows += _check_vs_pip(ctx, place, cli, "60 distributions, 11 startup files")
        return rows

    chosen = scenarios.places(ctx, kinds=("roots",))
    if not chosen:
        raise Skip("no root selected (SITEWARDEN_BENCH_PLACES)")
    return scenarios.over_places(chosen, measure)


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sitewarden-roots-bench-") as d:
        for r in benchmark(scenarios.Context(Path(d), 1, None)):
            print("| %s | %.2f | %.2f | %.3f | %s | %s |" % (
                r["benchmark"], r["baseline_ms"], r["candidate_ms"], r["ratio"], r["target"],
                r["note"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
