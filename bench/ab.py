#!/usr/bin/env python3
"""A/B one engine change: the same command against two source trees, alternating, N times.

Why: on a shared machine the load changes from minute to minute, so "before" measured at
02:40 and "after" at 03:10 compare the load, not the code. Alternating the two trees in one
run (and reading CPU time as well as wall time) is what lets a tuning step be kept or
dropped on evidence, as issue 6 asks.

Usage::

    python bench/ab.py --before /tmp/dg-before/src [--after src] [--reps 7] [--cwd DIR] -- ARGS...

ARGS are dupguard's (``check --isolated --no-cache -q .``); each run is
``python -P -m dupguard ARGS`` with ``PYTHONPATH`` pointing at one tree (it wins over the
editable install). The before tree is a copy of ``src/`` (plus ``rules/`` next to it, which
``dupguard.rulemeta`` reads) with the engine files as they were before the change.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, run_once, tool_env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=str(ROOT / "src"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cwd", default=".")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    ns = ap.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    trees = {"before": ns.before, "after": ns.after}
    samples: dict[str, list] = {k: [] for k in trees}
    for rep in range(ns.reps):
        for name in ("before", "after") if rep % 2 == 0 else ("after", "before"):
            env = tool_env(PYTHONPATH=str(Path(trees[name]).resolve()))
            samples[name].append(run_once([sys.executable, "-P", "-m", "dupguard", *args], Path(ns.cwd), env))
    for name, ss in samples.items():
        wall = [s.wall for s in ss]
        cpu = [s.cpu for s in ss]
        rss = max(s.maxrss_kb for s in ss) / 1024
        print(
            f"{name:>6}: wall median {statistics.median(wall):.3f} s (min {min(wall):.3f}, max {max(wall):.3f}); "
            f"CPU median {statistics.median(cpu):.3f} s (min {min(cpu):.3f}); peak RSS {rss:.0f} MB; rc {ss[-1].rc}"
        )
    b, a = (statistics.median(s.wall for s in samples[k]) for k in ("before", "after"))
    bc, ac = (statistics.median(s.cpu for s in samples[k]) for k in ("before", "after"))
    print(f" after/before: wall {a / b:.3f}, CPU {ac / bc:.3f}")
    # each rep ran the two trees back to back: their ratio is the least exposed to load swings
    paired = sorted(x.cpu / y.cpu for x, y in zip(samples["after"], samples["before"]))
    print(
        f" after/before, CPU per rep: median {statistics.median(paired):.3f} (min {paired[0]:.3f}, max {paired[-1]:.3f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
