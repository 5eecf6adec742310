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

Wired into ``benchmarks/run`` as the ``roots`` benchmark; needs root and the cached
roots (``make roots``), skipped otherwise.  Alone: ``python benchmarks/roots_rows.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List

import scenarios
from bench_lib import instruction_row

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
