"""Interleaved A/B timing of whole commands and in-process snippets.

Benchmarks report ratios against a baseline measured in the same run: each
repetition runs the baseline and the candidate back to back, in alternating
order, so drift and noise on a small shared machine hit both alike.  The
ratio reported is median(candidate)/median(baseline); min and max come from
the per-pair ratios.  Children are started with ``os.posix_spawn`` and reaped
with ``os.wait4`` so that their peak RSS is measured too.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    maxrss_kb: list[int] = field(default_factory=list)


def spawn(argv: list[str], env: dict[str, str]) -> tuple[float, int, int]:
    """Run argv once; (wall seconds, exit status, peak RSS in KiB)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        actions = [
            (os.POSIX_SPAWN_DUP2, devnull, 0),
            (os.POSIX_SPAWN_DUP2, devnull, 1),
            (os.POSIX_SPAWN_DUP2, devnull, 2),
        ]
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
        elapsed = time.perf_counter() - start
    finally:
        os.close(devnull)
    return elapsed, os.waitstatus_to_exitcode(status), usage.ru_maxrss


@dataclass
class Comparison:
    name: str
    baseline: Sample
    candidate: Sample
    unit: str = "ms"

    @property
    def ratios(self) -> list[float]:
        return [c / b for b, c in zip(self.baseline.seconds, self.candidate.seconds) if b > 0]

    @property
    def ratio(self) -> float:
        return statistics.median(self.candidate.seconds) / statistics.median(self.baseline.seconds)

    def row(self) -> dict[str, object]:
        r = sorted(self.ratios)
        scale = 1e3 if self.unit == "ms" else 1.0  # seconds shown as ms; other units as they are
        return {
            "benchmark": self.name,
            "baseline_ms": statistics.median(self.baseline.seconds) * scale,
            "candidate_ms": statistics.median(self.candidate.seconds) * scale,
            "ratio": self.ratio,
            "ratio_min": r[0],
            "ratio_median": statistics.median(r),
            "ratio_max": r[-1],
            "n": len(r),
        }


def compare_commands(name: str, baseline: tuple[list[str], dict[str, str]],
                     candidate: tuple[list[str], dict[str, str]], repeat: int,
                     warmup: int = 3) -> Comparison:
    """Interleave two commands ``repeat`` times; both must exit 0."""
    for _ in range(warmup):
        for argv, env in (baseline, candidate):
            _, code, _ = spawn(argv, env)
            if code != 0:
                raise RuntimeError("%s: %s exited %d" % (name, argv, code))
    a, b = Sample(), Sample()
    for i in range(repeat):
        order = ((baseline, a), (candidate, b)) if i % 2 == 0 else ((candidate, b), (baseline, a))
        for (argv, env), sample in order:
            secs, code, rss = spawn(argv, env)
            if code != 0:
                raise RuntimeError("%s: %s exited %d" % (name, argv, code))
            sample.seconds.append(secs)
            sample.maxrss_kb.append(rss)
    return Comparison(name, a, b)


def table(rows: list[dict[str, object]], columns: list[tuple[str, str, str]]) -> str:
    """A Markdown table: columns are (key, header, format)."""
    head = "| " + " | ".join(h for _, h, _ in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = [
        "| " + " | ".join(fmt.format(row[k]) if k in row else "" for k, _, fmt in columns) + " |"
        for row in rows
    ]
    return "\n".join([head, sep, *body])


def instructions(argv: list[str], env: dict[str, str], prefix: list[str] = (),
                 children: bool = False, valgrind: str | None = None) -> int | None:
    """Instructions executed by ``argv`` under callgrind: repeatable where wall time is not;
    with ``children``, summed over the processes it starts too.  ``prefix``: the command
    to run valgrind under (``nsenter ...``, ``chroot ...``); ``valgrind``: its path there
    (default: this machine's).

    None when valgrind is not installed.
    """
    import re
    import shutil
    import subprocess

    valgrind = valgrind or shutil.which("valgrind")
    if valgrind is None:
        return None
    env = dict(env, PYTHONHASHSEED="0")
    if not children:
        proc = subprocess.run([*prefix, valgrind, "--tool=callgrind",
                               "--callgrind-out-file=/dev/null", *argv],
                              capture_output=True, text=True, env=env)
        match = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
        return int(match.group(1)) if match else None
    import glob
    import tempfile

    # One log per process: a child's stderr may be a pipe its parent reads.
    with tempfile.TemporaryDirectory(prefix="sitewarden-vg-") as logs:
        subprocess.run([*prefix, valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        "--trace-children=yes", "--log-file=%s/%%p.log" % logs, *argv],
                       capture_output=True, text=True, env=env)
        found = [int(n) for log in glob.glob(logs + "/*.log")
                 for n in re.findall(r"Collected\s*:\s*(\d+)", Path(log).read_text())]
    return sum(found) if found else None


def instruction_row(name: str, baseline: int, candidate: int, target: str,
                    note: str) -> dict[str, object]:
    """A row of ``benchmarks/run``'s table from two instruction counts (one repeatable
    value each: min and max are the ratio), shown in millions."""
    ratio = candidate / baseline
    return {"benchmark": name, "baseline_ms": baseline / 1e6, "candidate_ms": candidate / 1e6,
            "ratio": ratio, "ratio_min": ratio, "ratio_max": ratio, "target": target,
            "note": note}


def compare_instructions(name: str, baseline: tuple[list[str], dict[str, str]],
                         candidate: tuple[list[str], dict[str, str]],
                         repeat: int = 3,
                         prefixes: tuple[list[str], list[str]] = ([], []),
                         children: bool = False,
                         valgrind: str | None = None) -> Comparison | None:
    """Interleaved instruction counts (in millions, reported in the ms columns).
    ``prefixes``: commands to run valgrind under (``nsenter ...``), baseline's and
    candidate's; ``valgrind``: its path there (as :func:`instructions`)."""
    a, b = Sample(), Sample()
    for _ in range(repeat):
        for (argv, env), sample, prefix in ((baseline, a, prefixes[0]),
                                            (candidate, b, prefixes[1])):
            n = instructions(argv, env, prefix, children, valgrind)
            if n is None:
                return None
            sample.seconds.append(n / 1e6)
    return Comparison(name, a, b, unit="M instructions")
