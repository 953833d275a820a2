#!/usr/bin/env python3
"""A/B one engine change: the same command against two (or more) source trees, alternating, N times.

Why: on a shared machine the load changes from minute to minute, so "before" measured at
02:40 and "after" at 03:10 compare the load, not the code. Alternating the trees in one
run (and reading CPU time as well as wall time) is what lets a tuning step be kept or
dropped on evidence, as issue 6 asks.

Usage::

    python bench/ab.py --before /tmp/dg-before/src [--after src] [--reps 7] [--cwd DIR] -- ARGS...
    python bench/ab.py --tree old=/tmp/a/src --tree new=src --reference "fixit lint ." --cwd DIR -- ARGS...

ARGS are dupguard's (``check --isolated --no-cache -q .``); each run is
``python -P -m dupguard ARGS`` with ``PYTHONPATH`` pointing at one tree (it wins over the
editable install). A before tree is a copy of ``src/`` (plus ``rules/`` next to it, which
``dupguard.rulemeta`` reads) as it was before the change, e.g.
``git archive REV src rules | tar -x -C /tmp/a``. ``--reference`` adds another tool's command,
run in the same rotation, and prints its time over each tree's (how bench/RESULTS.md's
"fixit / dupguard" target moved between two commits, on one machine, in one run).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, run_once, tool_env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before")
    ap.add_argument("--after", default=str(ROOT / "src"))
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH", help="a tree to time (repeatable)")
    ap.add_argument("--reference", metavar="COMMAND", help="another tool's command, timed in the same rotation")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cwd", default=".")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    ns = ap.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    trees = dict(t.split("=", 1) for t in ns.tree) if ns.tree else {}
    if ns.before:
        trees = {"before": ns.before, "after": ns.after, **trees}
    if not trees:
        ap.error("give --before (and --after) or --tree NAME=PATH")
    names = list(trees) + (["reference"] if ns.reference else [])
    samples: dict[str, list] = {k: [] for k in names}
    for rep in range(ns.reps):
        k = rep % len(names)
        for name in names[k:] + names[:k]:  # the order rotates, so that no tree always runs first
            if name == "reference":
                samples[name].append(run_once(shlex.split(ns.reference), Path(ns.cwd)))
                continue
            env = tool_env(PYTHONPATH=str(Path(trees[name]).resolve()))
            samples[name].append(run_once([sys.executable, "-P", "-m", "dupguard", *args], Path(ns.cwd), env))
    med = {
        k: (statistics.median(s.wall for s in ss), statistics.median(s.cpu for s in ss)) for k, ss in samples.items()
    }
    for name, ss in samples.items():
        wall = [s.wall for s in ss]
        rss = max(s.maxrss_kb for s in ss) / 1024
        print(
            f"{name:>9}: wall median {med[name][0]:.3f} s (min {min(wall):.3f}, max {max(wall):.3f}); "
            f"CPU median {med[name][1]:.3f} s (min {min(s.cpu for s in ss):.3f}); peak RSS {rss:.0f} MB; rc {ss[-1].rc}"
        )
    if "before" in samples:
        (b, bc), (a, ac) = med["before"], med["after"]
        print(f" after/before: wall {a / b:.3f}, CPU {ac / bc:.3f}")
        # each rep ran the two trees back to back: their ratio is the least exposed to load swings
        paired = sorted(x.cpu / y.cpu for x, y in zip(samples["after"], samples["before"]))
        print(
            f" after/before, CPU per rep: median {statistics.median(paired):.3f} "
            f"(min {paired[0]:.3f}, max {paired[-1]:.3f})"
        )
    if ns.reference:
        rw, rc = med["reference"]
        for name in trees:
            print(f" reference/{name}: wall {rw / med[name][0]:.2f}, CPU {rc / med[name][1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
