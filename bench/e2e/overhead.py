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
(median, min–max over ``--rounds``) and the helpers' overhead, ``1 - helpers / plain``, and the
same for the server's CPU time per request (user + system, read from ``/proc`` while the load
runs): on a machine shared with other work, requests per second mostly measure how much CPU the
server was given, its CPU per request what the app costs; overhead there is ``helpers / plain - 1``.

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


def _cell(values: list[float], digits: int = 1) -> str:
    """median (min–max)"""
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


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
    print(
        "| framework | store | rounds | helpers req/s | plain req/s | overhead (req/s) "
        "| helpers server CPU ms/req | plain server CPU ms/req | overhead (CPU) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
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
                    cpu: dict[str, list[float]] = {"helpers": [], "plain": []}
                    for round_ in range(args.rounds):
                        order = ("helpers", "plain") if round_ % 2 == 0 else ("plain", "helpers")
                        for variant in order:
                            run_dir = Path(tempfile.mkdtemp(dir=workdir))
                            first = (PLAIN,) if variant == "plain" else ()
                            result = serve_and_load(fixed, python, 1, url, fake_url, load, run_dir, first)
                            rps[variant].append(result["rps"])
                            if "server_cpu_ms" in result:
                                cpu[variant].append(result["server_cpu_ms"])
                    helpers, plain = statistics.median(rps["helpers"]), statistics.median(rps["plain"])
                    row = (
                        f"| {framework} | {args.store} | {args.rounds} | {_cell(rps['helpers'])} | {_cell(rps['plain'])}"
                        f" | {1 - helpers / plain:.1%} |"
                    )
                    if cpu["helpers"] and cpu["plain"]:
                        more = statistics.median(cpu["helpers"]) / statistics.median(cpu["plain"]) - 1
                        row += f" {_cell(cpu['helpers'], 2)} | {_cell(cpu['plain'], 2)} | {more:.1%} |"
                    else:
                        row += " – | – | – |"
                    print(row, flush=True)
        finally:
            for process in processes:
                stop(process)
    return 0


if __name__ == "__main__":
    sys.exit(main())
