"""The helpers' cost: the fixed app against itself with ``dupguard.runtime`` swapped for plain code.

``dupguard fix --unsafe-fixes`` makes the fixed app from ``apps/<framework>_before.py``; it is then
served twice per round under uvicorn (1 worker), against the scripted model at zero latency and
with no faults, so that the app's own work is all there is to measure:

* **helpers**: as fixed (``dupguard.runtime``: the adapter's guarded tools and run, the session
  lease, the store named by ``DUPGUARD_STORE``);
* **plain**: the same file with ``plain/`` first on ``PYTHONPATH``, whose ``dupguard.runtime``
  stand-ins do what an app without the helpers does (the framework's own run, the tools as they
  are, no lease, no store).

The order of the two alternates between rounds; the table gives each one's requests per second
(median, min–max over ``--rounds``) and the helpers' overhead, ``1 - helpers / plain``.

    python bench/e2e/overhead.py                        # OpenAI Agents, SQLite store, 5 rounds
    python bench/e2e/overhead.py --frameworks llamaindex --python-llamaindex /tmp/venv-li/bin/python
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from load import Load
from run import fake_model, make_fixed, python_for, serve_and_load, stop, stores

PLAIN = HERE / "plain"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default="openai_agents")
    parser.add_argument("--store", default="sqlite", choices=("sqlite", "redis", "memory"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--requests", type=int, default=6, help="requests per user")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--python-llamaindex", help="interpreter with llama-index-core and llama-index-llms-openai")
    parser.add_argument("--python-openai_agents", help="interpreter with openai-agents")
    args = parser.parse_args(argv)
    load = Load(users=args.users, requests_per_user=args.requests, concurrency=args.concurrency)
    print("| framework | store | helpers req/s | plain req/s | overhead |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dupguard-overhead-") as tmp:
        workdir = Path(tmp)
        urls, processes = stores([args.store] if args.store != "memory" else [], workdir)
        url = urls.get(args.store, "memory:")
        try:
            with fake_model(workdir, error_rate=0.0, stall_rate=0.0, min_latency=0.0, max_latency=0.0) as fake_url:
                for framework in args.frameworks.split(","):
                    python = python_for(framework, args)
                    fixed, _remaining = make_fixed(
                        HERE / "apps" / f"{framework}_before.py", workdir / framework, python
                    )
                    rps: dict[str, list[float]] = {"helpers": [], "plain": []}
                    for round_ in range(args.rounds):
                        order = ("helpers", "plain") if round_ % 2 == 0 else ("plain", "helpers")
                        for variant in order:
                            run_dir = Path(tempfile.mkdtemp(dir=workdir))
                            first = (PLAIN,) if variant == "plain" else ()
                            result = serve_and_load(fixed, python, 1, url, fake_url, load, run_dir, first)
                            rps[variant].append(result["rps"])
                    helpers, plain = statistics.median(rps["helpers"]), statistics.median(rps["plain"])
                    print(
                        f"| {framework} | {args.store} | {helpers:.1f} ({min(rps['helpers']):.1f}–{max(rps['helpers']):.1f})"
                        f" | {plain:.1f} ({min(rps['plain']):.1f}–{max(rps['plain']):.1f}) | {1 - helpers / plain:.1%} |",
                        flush=True,
                    )
        finally:
            for process in processes:
                stop(process)
    return 0


if __name__ == "__main__":
    sys.exit(main())
