"""Benchmark rows for the interpreters of the debootstrapped Debian roots.

For Debian 12's, 13's python3 and sid's python3 and python3.15, each in its root
(``tests/harness/roots.py``: an overlay over the cached root, ``chroot``), by
instruction count (the root's own valgrind, callgrind, ``PYTHONHASHSEED=0``):

* the first ``.pth`` file: no ``.pth`` at all vs one comment-only ``.pth`` (what
  reading any ``.pth`` costs by itself; the roots' own ``distutils-precedence.pth``
  is removed in these namespaces so that the baseline is exactly one ``.pth``);
* ``-c pass``: one comment-only ``.pth`` vs the same plus the guard, deployed by
  ``sitewarden install`` with its default hook for that version; on 3.15 also the
  ``.start`` file (``--hook start``) and the ``.pth`` + ``.start`` pair older
  sitewarden deployed, which is why the default is what it is;
* importing 2,000 small modules (a whole process: start plus imports), same baseline.

Wired into ``benchmarks/run`` as the ``roots`` benchmark; needs root and the cached
roots (``make roots``), skipped otherwise.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable, Dict, List

ROOT = Path(__file__).resolve().parent.parent
IMPORT_2000 = "import sys\nsys.path.insert(0, sys.argv[1])\nfor i in range(2000):\n" \
    "    __import__('bench_mod_%d' % i)\n"
COMMENT_PTH = "# a comment-only .pth: the baseline already reads one .pth file\n"
#: (release, executable): every interpreter of the roots, oldest first.
INTERPRETERS = [("bookworm", "/usr/bin/python3"), ("trixie", "/usr/bin/python3"),
                ("sid", "/usr/bin/python3"), ("sid", "/usr/bin/python3.15")]


class Skip(Exception):
    pass


def _harness():
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    from harness import roots

    return roots


def _instructions(ns, argv: List[str]) -> float:
    """Millions of instructions ``argv`` executes inside ``ns`` (the root's valgrind)."""
    proc = ns.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                  env={"PYTHONHASHSEED": "0"}, timeout=900)
    match = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    if not match:
        raise RuntimeError("callgrind failed in %s: %s" % (ns.id, proc.stderr[-500:]))
    return int(match.group(1)) / 1e6


def _modules(ns, python: str) -> set:
    out = ns.run([python, "-c", "import sys; print('\\n'.join(sys.modules))"]).stdout
    return set(out.split())


def _setup(roots, release: str, python: str, mods: Path,
           prepare: Callable[[object], None]):
    """A namespace over the root: distro .pth removed, ``prepare(ns)`` applied."""
    ns = roots.ChrootNamespace(release, python)
    try:
        ns.run(["sh", "-c", "rm -f /usr/lib/python3/dist-packages/*.pth "
                "/usr/local/lib/python3*/dist-packages/*.pth"])
        prepare(ns)
        ns.run([python, "-c", IMPORT_2000, str(mods)])  # bytecode written once
    except BaseException:
        ns.close()
        raise
    return ns


def _comment_pth(ns) -> None:
    ns.run(["mkdir", "-p", str(ns.local_dir)])
    ns.write_bytes(str(ns.local_dir / "00-baseline.pth"), COMMENT_PTH.encode())


def _guard(*hook: str) -> Callable[[object], None]:
    def prepare(ns) -> None:
        _comment_pth(ns)
        proc = ns.run([*ns.cli, "install", "--python", ns.executable, *hook])
        if proc.returncode != 0:
            raise RuntimeError("install failed in %s: %s" % (ns.id, proc.stderr))
    return prepare


def _pair(ns) -> None:
    """What sitewarden deployed before the hook policy: the .pth and its .start twin."""
    _guard("--hook", "start")(ns)
    from sitewarden.cli.payload import hook_text

    ns.write_bytes(str(ns.local_dir / "sitewarden.pth"), hook_text("sitewarden.pth").encode())


def rows(tmp: Path, row: Callable[..., Dict[str, object]]) -> List[Dict[str, object]]:
    """The rows (``row(name, baseline, candidate, target, note)`` builds one)."""
    try:
        roots = _harness()
    except ImportError as exc:
        raise Skip("the test harness is not importable: %s" % exc) from None
    ok, why = roots.available()
    if not ok:
        raise Skip(why)
    mods = tmp / "roots-mods"
    mods.mkdir(exist_ok=True)
    mods.chmod(0o755)
    tmp.chmod(0o755)
    for i in range(2000):
        (mods / ("bench_mod_%d.py" % i)).write_text("X = %d\n" % i)
    out: List[Dict[str, object]] = []
    for release, python in INTERPRETERS:
        try:
            roots.ensure_root(release)
        except roots.RootError as exc:
            raise Skip(str(exc)) from None
        setups = {"none": lambda ns: None, "pth": _comment_pth, "guard": _guard()}
        spaces: Dict[str, object] = {}
        try:
            for name, prepare in setups.items():
                spaces[name] = _setup(roots, release, python, mods, prepare)
            version = ".".join(map(str, spaces["pth"].python.version))
            label = "%s %s" % (release, version)
            hook = "start" if spaces["pth"].python.version[:2] >= (3, 18) else "pth"
            count = {k: _instructions(ns, [python, "-c", "pass"]) for k, ns in spaces.items()}
            out.append(row("%s: first .pth read (`-c pass`, M instructions)" % label,
                           count["none"], count["pth"], "",
                           "no .pth vs one comment-only .pth"))
            added = sorted(_modules(spaces["guard"], python) - _modules(spaces["pth"], python))
            out.append(row("%s: startup `-c pass` (M instructions)" % label, count["pth"],
                           count["guard"], "<= 1.02",
                           "baseline: one .pth; guard: .%s hook; modules added: %s"
                           % (hook, ", ".join(added) or "none")))
            if spaces["pth"].python.version[:2] >= (3, 15):
                for name, prepare, what in (
                        ("start", _guard("--hook", "start"), ".start alone (--hook start)"),
                        ("pair", _pair, ".pth + .start (sitewarden before the hook policy)")):
                    spaces[name] = _setup(roots, release, python, mods, prepare)
                    n = _instructions(spaces[name], [python, "-c", "pass"])
                    more = sorted(_modules(spaces[name], python) - _modules(spaces["pth"],
                                                                            python))
                    out.append(row("%s: startup `-c pass`, %s (M instructions)"
                                   % (label, what), count["pth"], n, "",
                                   "%d modules added" % len(more)))
            imp = {k: _instructions(spaces[k], [python, "-c", IMPORT_2000, str(mods)])
                   for k in ("pth", "guard")}
            out.append(row("%s: import 2000 small modules (M instructions)" % label,
                           imp["pth"], imp["guard"], "<= 1.02",
                           "whole process; baseline: one .pth"))
        finally:
            for ns in spaces.values():
                ns.close()
        print("  %s done" % label, file=sys.stderr, flush=True)
    return out


def row(name: str, a: float, b: float, target: str, note: str) -> Dict[str, object]:
    """A row of ``benchmarks/run``'s table (instruction counts: one repeatable value)."""
    return {"benchmark": name, "baseline_ms": a, "candidate_ms": b, "ratio": b / a,
            "ratio_min": b / a, "ratio_max": b / a, "target": target, "note": note}


def benchmark(ctx) -> List[Dict[str, object]]:
    """``benchmarks/run``'s entry point (``ctx.tmp``: its temporary directory)."""
    return rows(Path(ctx.tmp), row)


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sitewarden-roots-bench-") as d:
        for r in rows(Path(d), row):
            print("| %s | %.2f | %.2f | %.3f | %s | %s |" % (
                r["benchmark"], r["baseline_ms"], r["candidate_ms"], r["ratio"], r["target"],
                r["note"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
