"""What the helpers of a fixed app cost per turn, by store: CPU, store round trips, thread hops.

``overhead.py`` measures the helpers inside the real apps, where the framework's own work is
most of each request and a shared machine moves requests per second by ±20% from one round to
the next. This script isolates the part the helpers add, in one process, so that it can be
measured to a few microseconds: each turn does what the code ``dupguard fix --unsafe-fixes``
writes into ``apps/*_before.py`` does around the framework's run (``asession_lease`` on the
user, the adapter's ``attempt`` keyed by the request id, and for the turns that refund, one
tool call through the adapter's gate, which the ``ToolCallLedger`` records), with the tool and
the model replaced by nothing. The mix is the load's (``load.py``: of a user's 6 requests, 4
ask for a refund); ``--concurrency`` turns run at once on one event loop, as under uvicorn.

Per store it prints the CPU time and the wall time per turn (``time.process_time``: every
thread of the process, so work handed to worker threads counts), the store operations per turn
(each one round trip to Redis and one committed statement in SQLite) and the hops to a worker
thread per turn (``asyncio.to_thread``). ``none`` runs the same turns without any helper: the
loop's own cost, to subtract.

    python bench/e2e/helpers_cost.py                       # memory, SQLite, and Redis if redis-server is on PATH
    python bench/e2e/helpers_cost.py --turns 20000 --stores sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "src"))
sys.path.insert(0, str(HERE))

from dupguard.runtime import ToolCallLedger, asession_lease
from dupguard.runtime.adapters._core import AdapterGuard

OPERATIONS = ("claim", "complete", "release", "renew", "get", "incr")


def counted(store, counts: collections.Counter):
    """Count the store's async operations as the helpers of an async app call them (one each:
    an async method that runs the sync one in a thread is not counted twice)."""
    for name in OPERATIONS:
        original = getattr(store, f"a{name}")

        async def wrapper(*args, _original=original, _name=name, **kwargs):
            counts[_name] += 1
            return await _original(*args, **kwargs)

        setattr(store, f"a{name}", wrapper)
    return store


async def refund(order_id: str) -> str:
    await asyncio.sleep(0)
    return f"refunded {order_id}"


async def run_turns(
    store, turns: int, concurrency: int, users: int, counts: collections.Counter
) -> tuple[float, float]:
    """``turns`` turns (after a warm-up); returns (CPU seconds, wall seconds)."""
    guard = AdapterGuard(ledger=ToolCallLedger(store, scope="helpers_cost")) if store is not None else None
    run = os.urandom(4).hex()
    gate = asyncio.Semaphore(concurrency)

    async def turn(i: int) -> None:
        user = f"u{i % users}"
        refunds = i % 6 not in (0, 5)  # the load's mix: a greeting, 4 refunds, a question
        arguments = json.dumps({"order_id": f"{user}-{i}"})
        async with gate:
            if guard is None:
                if refunds:
                    await refund(arguments)
                return
            async with asession_lease(store, user), guard.attempt(f"{run}-{user}-r{i}"):
                if refunds:
                    await guard.gate.arun("refund_order", arguments, f"call_{i}", lambda: refund(arguments))

    await asyncio.gather(*(turn(-1 - i) for i in range(min(turns, 500))))  # warm-up: connections, imports
    counts.clear()
    to_thread = asyncio.to_thread

    async def hop(fn, *args, **kwargs):
        counts["thread hops"] += 1
        return await to_thread(fn, *args, **kwargs)

    asyncio.to_thread = hop
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(turn(i) for i in range(turns)))
        return time.process_time() - cpu, time.perf_counter() - wall
    finally:
        asyncio.to_thread = to_thread


@contextlib.contextmanager
def redis_server():
    """A private redis-server on a free port (no persistence), or ``None`` when not installed."""
    if shutil.which("redis-server") is None:
        yield None
        return
    from run import free_port, stop, wait_port

    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_port(port, server)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(server)


def make_store(kind: str, path: Path, redis_url: str | None):
    """A new store of ``kind`` (each run its own, so that no record of an earlier run is found)."""
    from dupguard.runtime import MemoryBackend, RedisBackend, SQLiteBackend

    if kind == "none":
        return None
    if kind == "memory":
        return MemoryBackend()
    if kind == "sqlite":
        return SQLiteBackend(path)
    if kind == "redis":
        store = RedisBackend(redis_url)
        store._sync.flushdb()
        return store
    raise SystemExit(f"unknown store {kind!r}: none, memory, sqlite or redis")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="none,memory,sqlite,redis")
    parser.add_argument("--turns", type=int, default=6000)
    parser.add_argument("--repeat", type=int, default=5, help="runs per store (median, min–max)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--users", type=int, default=40)
    args = parser.parse_args(argv)
    print("| store | CPU µs/turn | wall µs/turn | store operations/turn | thread hops/turn |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dupguard-helpers-cost-") as tmp, redis_server() as redis_url:
        for kind in args.stores.split(","):
            if kind == "redis" and redis_url is None:
                print("| redis | (no redis-server on PATH) | | | |")
                continue
            cpu_us, wall_us, ops = [], [], ""
            for attempt in range(args.repeat):
                counts: collections.Counter = collections.Counter()
                store = make_store(kind, Path(tmp) / f"store-{attempt}.db", redis_url)
                if store is not None:
                    counted(store, counts)
                try:
                    cpu, wall = asyncio.run(run_turns(store, args.turns, args.concurrency, args.users, counts))
                finally:
                    if store is not None:
                        store.close()
                cpu_us.append(1e6 * cpu / args.turns)
                wall_us.append(1e6 * wall / args.turns)
                per_turn = {name: count / args.turns for name, count in sorted(counts.items()) if name != "thread hops"}
                ops = ", ".join(f"{name} {value:.2f}" for name, value in per_turn.items()) or "none"
                ops = f"{sum(per_turn.values()):.2f} ({ops})" if per_turn else ops
                hops = counts["thread hops"] / args.turns
            print(
                f"| {kind} | {statistics.median(cpu_us):.0f} ({min(cpu_us):.0f}–{max(cpu_us):.0f})"
                f" | {statistics.median(wall_us):.0f} ({min(wall_us):.0f}–{max(wall_us):.0f}) | {ops} | {hops:.2f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
