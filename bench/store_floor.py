"""``claim`` + ``complete`` against each shared store's own floor, and the HTTP middleware's
overhead, measured in one run (issue 19's performance section).

    python bench/store_floor.py [--redis-url URL] [--dsn DSN] [--rounds 10] [--calls 200]
                                [--seconds 3] [--clients 16]

Per call, one client, one connection, loopback TCP:

* **Redis**: claim + complete on a new key (the path of a call that executes: two ``EVALSHA``)
  against two bare ``PING`` round trips on the same client; the same two ``EVALSHA`` sent by
  hand with redis-py (what the backend adds beyond its scripts); a replay (the claim of a
  completed key) against one ``PING``.
* **PostgreSQL**: claim + complete against two bare ``SELECT 1`` round trips on the same
  connection; against two **durable one-row commits** (``INSERT`` of one row into a table
  without an index, autocommit, the server's default ``synchronous_commit = on``): the floor
  of any store that must not forget a claim, because each commit waits for its WAL flush and
  ``SELECT 1`` writes nothing; against its own two statements sent by hand with psycopg; a
  replay against one ``SELECT 1``. For reference only, the same backend on connections with
  ``synchronous_commit = off`` (the backend never does this itself: a server crash would
  forget the last claims, and their side effects would run again).

Rounds alternate the floor and the measured operation; a ratio is the median of the
per-round ratios, so load from other processes on the machine hits both sides alike.

Throughput: ``--clients`` processes, each with its own backend, doing claim + complete on new
keys for ``--seconds``, against the same number of processes doing the floor's pairs.

Middleware: ``IdempotencyMiddleware`` (``bench/http_bench.py``'s app) called in process, per
request, against the bare app, on Redis and PostgreSQL (the store on this host). The figures
through uvicorn are ``bench/http_bench.py``'s.

Without ``--redis-url`` a ``redis-server`` without persistence is started on a free loopback
port; without ``--dsn`` a throwaway PostgreSQL cluster with default settings
(``tests/runtime/pgserver.py``). Both are removed at the end.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "runtime"))
sys.path.insert(0, str(ROOT / "bench"))

import psycopg
import redis

from dupguard.runtime import PostgresBackend, RedisBackend
from dupguard.runtime.backends.redis import _SHA


def paired(floor: Callable[[], float], measured: Callable[[], float], rounds: int) -> tuple[float, float, float]:
    """(median ratio, median floor s, median measured s) over alternating rounds."""
    ratios, floors, values = [], [], []
    for _ in range(rounds):
        f = floor()
        m = measured()
        ratios.append(m / f)
        floors.append(f)
        values.append(m)
    return statistics.median(ratios), statistics.median(floors), statistics.median(values)


def timed(fn: Callable[[int], object], n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) / n


class Keys:
    def __init__(self) -> None:
        self.n = 0

    def prefix(self) -> str:
        self.n += 1
        return f"{uuid.uuid4().hex[:6]}:{self.n}:"


# ---------------------------------------------------------------------------- Redis


def redis_rows(url: str, n: int, rounds: int) -> list[tuple[str, tuple[float, float, float], str]]:
    client = redis.Redis.from_url(url)
    store = RedisBackend(url, prefix=f"bench:{uuid.uuid4().hex[:8]}:")
    keys = Keys()

    def pings(_i: int) -> None:
        client.ping()
        client.ping()

    def claim_complete(prefix: str) -> Callable[[int], None]:
        def one(i: int) -> None:
            key = f"{prefix}{i}"
            claim = store.claim(key, lease=60)
            store.complete(key, claim.fence, {"n": i}, ttl=600)

        return one

    def by_hand(prefix: str) -> Callable[[int], None]:
        def one(i: int) -> None:
            key = store._key(f"{prefix}{i}")
            reply = client.evalsha(_SHA["claim"], 1, key, 60_000_000, "", "t")
            client.evalsha(_SHA["complete"], 1, key, int(reply[1]), str(i), 600_000_000)

        return one

    for fn in (pings, claim_complete("warm:"), by_hand("warm2:")):
        timed(fn, 50)
    c = store.claim("done-key", lease=60)
    store.complete("done-key", c.fence, "v", ttl=3600)
    rows = [
        (
            "claim+complete",
            paired(lambda: timed(pings, n), lambda: timed(claim_complete(keys.prefix()), n), rounds),
            "2 x PING",
        ),
        (
            "claim+complete vs its EVALSHAs by hand",
            paired(lambda: timed(by_hand(keys.prefix()), n), lambda: timed(claim_complete(keys.prefix()), n), rounds),
            "the same scripts, bare redis-py",
        ),
        (
            "replay (claim of a completed key)",
            paired(
                lambda: timed(lambda _i: client.ping(), n),
                lambda: timed(lambda _i: store.claim("done-key", lease=60), n),
                rounds,
            ),
            "1 x PING",
        ),
    ]
    store.close()
    client.close()
    return rows


# ---------------------------------------------------------------------------- PostgreSQL


def no_flush_wait(dsn: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SET synchronous_commit = off")
    return conn


def postgres_rows(dsn: str, n: int, rounds: int) -> tuple[list, str, str]:
    conn = psycopg.connect(dsn, autocommit=True)
    version = conn.execute("SHOW server_version").fetchone()[0]
    sync = conn.execute("SHOW synchronous_commit").fetchone()[0]
    floor_table = f"floor_{uuid.uuid4().hex[:8]}"
    conn.execute(f"CREATE TABLE {floor_table} (k text NOT NULL)")
    table = f"bench_{uuid.uuid4().hex[:8]}"
    durable = PostgresBackend(dsn, table=table)
    fast = PostgresBackend(functools.partial(no_flush_wait, dsn), table=table)
    keys = Keys()
    insert = f"INSERT INTO {floor_table} (k) VALUES (%s)"

    def selects(_i: int) -> None:
        conn.execute("SELECT 1").fetchone()
        conn.execute("SELECT 1").fetchone()

    def commits(_i: int) -> None:
        conn.execute(insert, ("a",))
        conn.execute(insert, ("b",))

    def claim_complete(store: PostgresBackend, prefix: str) -> Callable[[int], None]:
        def one(i: int) -> None:
            key = f"{prefix}{i}"
            claim = store.claim(key, lease=60)
            store.complete(key, claim.fence, {"n": i}, ttl=600)

        return one

    def by_hand(prefix: str) -> Callable[[int], None]:
        q = durable._q

        def one(i: int) -> None:
            key = f"{prefix}{i}"
            ((_s, fence, *_rest),) = conn.execute(
                q.claim, {"key": key, "lease": 60_000_000, "payload": None, "token": "t"}
            ).fetchall()
            conn.execute(q.complete, {"key": key, "fence": fence, "ttl": 600_000_000, "result": str(i)}).fetchall()

        return one

    for fn in (selects, commits, claim_complete(durable, "w1:"), claim_complete(fast, "w2:"), by_hand("w3:")):
        timed(fn, 50)  # warm up: tables, connections, prepared statements
    c = durable.claim("done-key", lease=60)
    durable.complete("done-key", c.fence, "v", ttl=3600)
    rows = [
        (
            "claim+complete",
            paired(lambda: timed(selects, n), lambda: timed(claim_complete(durable, keys.prefix()), n), rounds),
            "2 x SELECT 1",
        ),
        (
            "claim+complete",
            paired(lambda: timed(commits, n), lambda: timed(claim_complete(durable, keys.prefix()), n), rounds),
            "2 durable one-row INSERTs",
        ),
        (
            "claim+complete vs its statements by hand",
            paired(
                lambda: timed(by_hand(keys.prefix()), n),
                lambda: timed(claim_complete(durable, keys.prefix()), n),
                rounds,
            ),
            "the same SQL, bare psycopg",
        ),
        (
            "replay (claim of a completed key)",
            paired(
                lambda: timed(lambda _i: conn.execute("SELECT 1").fetchone(), n),
                lambda: timed(lambda _i: durable.claim("done-key", lease=60), n),
                rounds,
            ),
            "1 x SELECT 1",
        ),
        (
            "reference: claim+complete, sync_commit=off",
            paired(lambda: timed(selects, n), lambda: timed(claim_complete(fast, keys.prefix()), n), rounds),
            "2 x SELECT 1 (NOT durable)",
        ),
    ]
    durable.close()
    fast.close()
    conn.execute(f"DROP TABLE {floor_table}")
    conn.close()
    return rows, f"PostgreSQL {version} (synchronous_commit = {sync}), psycopg {psycopg.__version__}", table


# ---------------------------------------------------------------------------- throughput


def _client(args: tuple[str, str, str, float]) -> int:
    kind, where, extra, seconds = args
    n = 0
    prefix = f"tp:{uuid.uuid4().hex}:"
    deadline = time.monotonic() + seconds
    if kind == "redis-floor":
        client = redis.Redis.from_url(where)
        while time.monotonic() < deadline:
            client.ping()
            client.ping()
            n += 1
        client.close()
        return n
    if kind in ("pg-floor", "pg-durable-floor"):
        with psycopg.connect(where, autocommit=True) as conn:
            while time.monotonic() < deadline:
                if kind == "pg-floor":
                    conn.execute("SELECT 1").fetchone()
                    conn.execute("SELECT 1").fetchone()
                else:
                    conn.execute(f"INSERT INTO {extra} (k) VALUES (%s)", (prefix,))
                    conn.execute(f"INSERT INTO {extra} (k) VALUES (%s)", (prefix,))
                n += 1
        return n
    store = RedisBackend(where, prefix=extra) if kind == "redis" else PostgresBackend(where, table=extra)
    while time.monotonic() < deadline:
        key = f"{prefix}{n}"
        claim = store.claim(key, lease=60)
        store.complete(key, claim.fence, n, ttl=600)
        n += 1
    store.close()
    return n


def throughput(kind: str, where: str, extra: str, seconds: float, clients: int) -> float:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(clients) as pool:
        counts = pool.map(_client, [(kind, where, extra, seconds)] * clients)
    return sum(counts) / seconds


# ---------------------------------------------------------------------------- main


def print_rows(rows: list) -> None:
    print(f"{'operation':<44} {'per call':>10} {'floor':>10} {'ratio':>7}")
    for name, (ratio, floor, value), floor_name in rows:
        print(f"{name:<44} {value * 1e6:>8.0f}µs {floor * 1e6:>8.0f}µs {ratio:>6.2f}x   (floor: {floor_name})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url")
    parser.add_argument("--dsn")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200, help="calls per round")
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each throughput run")
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()

    from runtime_bench import start_redis

    started_redis = pg_server = None
    redis_url, dsn = args.redis_url, args.dsn
    if redis_url is None:
        started_redis = start_redis()
        redis_url = started_redis[1]
    if dsn is None:
        from pgserver import PostgresServer

        pg_server = PostgresServer().start()
        dsn = pg_server.dsn
    began = time.perf_counter()
    try:
        info = redis.Redis.from_url(redis_url).info("server")
        print(
            f"Load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; Python {sys.version.split()[0]}"
        )
        print(f"{args.rounds} alternating rounds of {args.calls} calls; ratio = median of the per-round ratios")
        print()
        print(f"Redis {info['redis_version']} on loopback TCP (no persistence), redis-py {redis.__version__}")
        print_rows(redis_rows(redis_url, args.calls, args.rounds))
        print()
        rows, title, table = postgres_rows(dsn, args.calls, args.rounds)
        print(title + ", loopback TCP")
        print_rows(rows)
        print()

        with psycopg.connect(dsn, autocommit=True) as conn:
            floor_table = f"tpfloor_{uuid.uuid4().hex[:8]}"
            conn.execute(f"CREATE TABLE {floor_table} (k text NOT NULL)")
        s, c = args.seconds, args.clients
        prefix = f"tp:{uuid.uuid4().hex[:8]}:"
        figures = {
            "redis floor": throughput("redis-floor", redis_url, "", s, c),
            "redis": throughput("redis", redis_url, prefix, s, c),
            "pg floor": throughput("pg-floor", dsn, "", s, c),
            "pg durable floor": throughput("pg-durable-floor", dsn, floor_table, s, c),
            "pg": throughput("postgres", dsn, table, s, c),
        }
        print(f"{c} client processes, {s:g} s each, pairs per second (claim+complete, or the floor's pair)")
        print(f"{'Redis claim+complete':<44} {figures['redis']:>10,.0f}")
        print(
            f"{'Redis 2 x PING':<44} {figures['redis floor']:>10,.0f}   {figures['redis floor'] / figures['redis']:.2f}x"
        )
        print(f"{'PostgreSQL claim+complete':<44} {figures['pg']:>10,.0f}")
        print(
            f"{'PostgreSQL 2 x SELECT 1':<44} {figures['pg floor']:>10,.0f}   {figures['pg floor'] / figures['pg']:.2f}x"
        )
        print(
            f"{'PostgreSQL 2 durable one-row INSERTs':<44} {figures['pg durable floor']:>10,.0f}   "
            f"{figures['pg durable floor'] / figures['pg']:.2f}x"
        )
        print()

        from http_bench import in_process

        specs = {
            "bare": {"kind": "bare"},
            "redis": {"kind": "redis", "where": redis_url},
            "redis-async": {"kind": "redis-async", "where": redis_url},
            "postgres": {"kind": "postgres", "where": dsn},
        }
        requests = args.calls * 2
        bare = in_process(specs["bare"], requests * 5, duplicate=False)
        print("IdempotencyMiddleware in process (the ASGI app called directly), best of 3, µs per request")
        print(f"{'bare app':<14} {bare:9.1f}")
        for name, spec in specs.items():
            if name == "bare":
                continue
            new = in_process(spec, requests, duplicate=False)
            dup = in_process(spec, requests, duplicate=True)
            print(f"{name:<14} new key {new:8.1f} (+{new - bare:7.1f})  duplicate {dup:8.1f} (+{dup - bare:7.1f})")
        print(f"\n(measured in {time.perf_counter() - began:.0f} s; load average at end {os.getloadavg()[0]:.2f})")
    finally:
        if started_redis is not None:
            proc, _url, tmp = started_redis
            proc.terminate()
            proc.wait(10)
            tmp.cleanup()
        if pg_server is not None:
            pg_server.cleanup()


if __name__ == "__main__":
    main()
