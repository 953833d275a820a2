"""The cost of ``PostgresBackend`` against the floor of PostgreSQL itself, measured in one run.

    python bench/postgres_bench.py [--dsn DSN] [--rounds 12] [--pairs 200] [--seconds 3]

Per call (one client, one connection, loopback TCP):

* **floor**: two bare ``SELECT 1`` round trips on one psycopg connection — what any two
  statements cost before the server does any work;
* **claim + complete** on a new key (the path of a call that executes): two statements that
  each write and commit one row;
* **replay**: ``claim`` of a completed key (the path of a duplicate), against one ``SELECT 1``;
* **the backend's own overhead**: claim + complete against the very same two statements sent
  by hand with psycopg on one connection.

Rounds alternate floor and measured operation, and the ratio reported is the median of the
per-round ratios, so that load from other processes on the machine hits both sides alike.
Each claim+complete is measured twice: with the server's default ``synchronous_commit = on``
(each commit waits for its WAL flush: the durable setting the backend documents) and with
``synchronous_commit = off`` set on the backend's connections (no flush wait; a server crash
may lose the last few hundred milliseconds of completions), which separates the cost of the
statements from the cost of the disk.

Throughput: 16 client processes, each with its own ``PostgresBackend``, doing claim+complete
on new keys for ``--seconds``, against 16 processes doing ``SELECT 1`` pairs.

Without ``--dsn`` a throwaway cluster is made with ``initdb`` and started on a free loopback
port (``tests/runtime/pgserver.py``), with PostgreSQL's default settings, and removed at the end.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "runtime"))

import psycopg

from dupguard.runtime import PostgresBackend


def floor_pairs(conn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        conn.execute("SELECT 1").fetchone()
        conn.execute("SELECT 1").fetchone()
    return (time.perf_counter() - start) / n


def floor_single(conn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        conn.execute("SELECT 1").fetchone()
    return (time.perf_counter() - start) / n


def claim_complete(store: PostgresBackend, prefix: str, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        key = f"{prefix}{i}"
        claim = store.claim(key, lease=60)
        store.complete(key, claim.fence, {"n": i}, ttl=600)
    return (time.perf_counter() - start) / n


def raw_statements(conn, store: PostgresBackend, prefix: str, n: int) -> float:
    """The backend's two statements issued by hand on one connection: what the backend
    costs beyond the statements it sends (parameter handling, connection checkout, results)."""
    q = store._q
    start = time.perf_counter()
    for i in range(n):
        key = f"{prefix}{i}"
        ((_s, fence, *_rest),) = conn.execute(
            q.claim, {"key": key, "lease": 60_000_000, "payload": None, "token": "t"}
        ).fetchall()
        conn.execute(q.complete, {"key": key, "fence": fence, "ttl": 600_000_000, "result": str(i)}).fetchall()
    return (time.perf_counter() - start) / n


def replays(store: PostgresBackend, key: str, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        store.claim(key, lease=60)
    return (time.perf_counter() - start) / n


def no_flush_wait(dsn: str):
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SET synchronous_commit = off")
    return conn


def paired(floor, measured, rounds: int) -> tuple[float, float, float]:
    """(median ratio, median floor s, median measured s) over alternating rounds."""
    ratios, floors, values = [], [], []
    for _ in range(rounds):
        f = floor()
        m = measured()
        ratios.append(m / f)
        floors.append(f)
        values.append(m)
    return statistics.median(ratios), statistics.median(floors), statistics.median(values)


def _client(args: tuple[str, str, float, str]) -> int:
    dsn, table, seconds, kind = args
    n = 0
    if kind == "floor":
        with psycopg.connect(dsn, autocommit=True) as conn:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                conn.execute("SELECT 1").fetchone()
                conn.execute("SELECT 1").fetchone()
                n += 1
        return n
    store = PostgresBackend(dsn, table=table)
    prefix = f"tp:{uuid.uuid4().hex}:"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        key = f"{prefix}{n}"
        claim = store.claim(key, lease=60)
        store.complete(key, claim.fence, n, ttl=600)
        n += 1
    store.close()
    return n


def throughput(dsn: str, table: str, seconds: float, kind: str, clients: int = 16) -> float:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(clients) as pool:
        counts = pool.map(_client, [(dsn, table, seconds, kind)] * clients)
    return sum(counts) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="measure this server instead of a throwaway cluster")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--pairs", type=int, default=200, help="calls per round")
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each throughput run")
    args = parser.parse_args()

    server = None
    dsn = args.dsn
    if dsn is None:
        from pgserver import PostgresServer

        server = PostgresServer().start()
        dsn = server.dsn
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            sync = conn.execute("SHOW synchronous_commit").fetchone()[0]
            floor_pairs(conn, 50)  # warm up (and let psycopg prepare)
            table = f"bench_{uuid.uuid4().hex[:8]}"
            durable = PostgresBackend(dsn, table=table)
            fast = PostgresBackend(functools.partial(no_flush_wait, dsn), table=table)
            claim_complete(durable, "warm:", 50)
            claim_complete(fast, "warm2:", 50)
            fast_conn = no_flush_wait(dsn)
            raw_statements(fast_conn, fast, "warm3:", 50)
            c = durable.claim("done-key", lease=60)
            durable.complete("done-key", c.fence, "v", ttl=3600)
            n = args.pairs
            counter = iter(range(10**9))

            def fresh() -> str:
                return f"k{next(counter)}:"

            print(f"PostgreSQL {version} on loopback TCP (synchronous_commit = {sync}), psycopg {psycopg.__version__}")
            print(f"{args.rounds} alternating rounds of {n} calls; ratio = median of the per-round ratios")
            print()
            print(f"{'operation':<44} {'per call':>10} {'floor':>10} {'ratio':>7}")
            rows = [
                (
                    "claim+complete, synchronous_commit=on",
                    paired(lambda: floor_pairs(conn, n), lambda: claim_complete(durable, fresh(), n), args.rounds),
                    "2 x SELECT 1",
                ),
                (
                    "claim+complete, synchronous_commit=off",
                    paired(lambda: floor_pairs(conn, n), lambda: claim_complete(fast, fresh(), n), args.rounds),
                    "2 x SELECT 1",
                ),
                (
                    "claim+complete vs its statements by hand",
                    paired(
                        lambda: raw_statements(fast_conn, fast, fresh(), n),
                        lambda: claim_complete(fast, fresh(), n),
                        args.rounds,
                    ),
                    "the same SQL, bare psycopg",
                ),
                (
                    "replay (claim of a completed key)",
                    paired(lambda: floor_single(conn, n), lambda: replays(durable, "done-key", n), args.rounds),
                    "1 x SELECT 1",
                ),
            ]
            for name, (ratio, floor, value), floor_name in rows:
                print(f"{name:<44} {value * 1e6:>8.0f}µs {floor * 1e6:>8.0f}µs {ratio:>6.2f}x   (floor: {floor_name})")
            durable.close()
            fast.close()
            fast_conn.close()

        print()
        tp_floor = throughput(dsn, table, args.seconds, "floor")
        tp = throughput(dsn, table, args.seconds, "claim")
        print(f"16 client processes, {args.seconds:g}s each")
        print(f"{'claim+complete pairs/s':<44} {tp:>10,.0f}")
        print(f"{'SELECT 1 pairs/s (floor)':<44} {tp_floor:>10,.0f}   ratio {tp_floor / tp:.2f}x")
    finally:
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
