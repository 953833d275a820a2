"""``claim`` + ``complete`` against each shared store's own floor, and the HTTP middleware's
overhead, measured in one run (issue 19's performance section).

    python bench/store_floor.py [--redis-url URL] [--dsn DSN] [--rounds 10] [--calls 200]
                                [--seconds 3] [--clients 16]

Per call, one client, one connection, loopback TCP:

* **Redis**: claim + complete on a new key (the path of a call that executes: two ``EVALSHA``)
  against two bare ``PING`` round trips on the same client; the same two ``EVALSHA`` sent by
  hand with redis-py (what the backend adds beyond its scripts); a replay (the claim of a
  completed key) against one ``PING``.
* **PostgreSQL**: claim + complete against (a) two bare ``SELECT 1`` round trips on one
  connection; (b) two **durable one-row upserts** on one connection (``INSERT … ON CONFLICT
  (k) DO UPDATE`` into a table with a text primary key, autocommit, the server's default
  ``synchronous_commit = on``: the first inserts a new key, the second updates it, as claim
  and complete do): the floor of any store that must not forget a claim, because each commit
  waits for its WAL flush and ``SELECT 1`` writes nothing; (c) the same two upserts on a
  connection with ``synchronous_commit = off``; also against two durable one-row ``INSERT``s
  into a table without an index (the floor of the earlier runs in bench/RESULTS.md) and
  against its own two statements sent by hand with psycopg; a replay against one
  ``SELECT 1``. Then ``PostgresBackend(..., synchronous_commit="off")`` (it answers before
  the WAL flush: a crash of the server can forget the last claims, docs/runtime.md) against
  (a) and (c).

Within each round the floor and the measured operation alternate every ten calls; a ratio is
the median of the per-round ratios, so load from other processes on the machine (and a slow
disk flush) hits both sides alike.

Throughput: ``--clients`` processes, each with its own backend, doing claim + complete on new
keys for ``--seconds``, against the same number of processes doing the floor's pairs (for
PostgreSQL: two ``SELECT 1``, two durable upserts, and the backend and the upserts with
``synchronous_commit = off``). The runs of a store alternate floor and measured operation.

Middleware: ``IdempotencyMiddleware`` (``bench/http_bench.py``'s app) called in process, per
request, against the bare app, on Redis and PostgreSQL (the store on this host). The figures
through uvicorn are ``bench/http_bench.py``'s.

Without ``--redis-url`` a ``redis-server`` without persistence is started on a free loopback
port; without ``--dsn`` a throwaway PostgreSQL cluster with default settings
(``tests/runtime/pgserver.py``). Both are removed at the end.
"""

from __future__ import annotations

import argparse
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

CHUNK = 10  # calls of one side before the other side's turn, within a round


def paired(
    floor: Callable[[], Callable[[int], object]], measured: Callable[[], Callable[[int], object]], rounds: int, n: int
) -> tuple[float, float, float]:
    """(median ratio, median floor s, median measured s) per call over ``rounds`` rounds.

    Each round makes a fresh pair of callables (new keys) and runs ``n`` calls of each,
    alternating ``CHUNK`` calls of the floor with ``CHUNK`` of the measured operation, so that
    a burst of load from other processes (or a slow disk flush) lands on both sides alike."""
    ratios, floors, values = [], [], []
    for _ in range(rounds):
        f, m = floor(), measured()
        f_total = m_total = 0.0
        for start in range(0, n, CHUNK):
            count = min(CHUNK, n - start)
            f_total += timed(f, count, start) * count
            m_total += timed(m, count, start) * count
        ratios.append(m_total / f_total)
        floors.append(f_total / n)
        values.append(m_total / n)
    return statistics.median(ratios), statistics.median(floors), statistics.median(values)


def timed(fn: Callable[[int], object], n: int, first: int = 0) -> float:
    """Seconds per call of ``fn(i)`` for ``i`` in ``first .. first + n - 1``."""
    start = time.perf_counter()
    for i in range(first, first + n):
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
            reply = client.evalsha(_SHA["claim"], 1, key, 60_000_000, "", "t", 0, 1)
            client.evalsha(_SHA["complete"], 1, key, int(reply[1]), str(i), 600_000_000)

        return one

    for fn in (pings, claim_complete("warm:"), by_hand("warm2:")):
        timed(fn, 50)
    c = store.claim("done-key", lease=60)
    store.complete("done-key", c.fence, "v", ttl=3600)
    rows = [
        (
            "claim+complete",
            paired(lambda: pings, lambda: claim_complete(keys.prefix()), rounds, n),
            "2 x PING",
        ),
        (
            "claim+complete vs its EVALSHAs by hand",
            paired(lambda: by_hand(keys.prefix()), lambda: claim_complete(keys.prefix()), rounds, n),
            "the same scripts, bare redis-py",
        ),
        (
            "replay (claim of a completed key)",
            paired(lambda: lambda _i: client.ping(), lambda: lambda _i: store.claim("done-key", lease=60), rounds, n),
            "1 x PING",
        ),
    ]
    store.close()
    client.close()
    return rows


# ---------------------------------------------------------------------------- PostgreSQL


UPSERT_TABLE = 'CREATE TABLE {} (k text COLLATE "C" PRIMARY KEY, v text NOT NULL, at timestamptz NOT NULL)'
UPSERT = (
    "INSERT INTO {} AS t (k, v, at) VALUES (%s, %s, statement_timestamp()) "
    "ON CONFLICT (k) DO UPDATE SET v = excluded.v, at = excluded.at"
)


def postgres_rows(dsn: str, n: int, rounds: int) -> tuple[list, str, str]:
    conn = psycopg.connect(dsn, autocommit=True)
    version, sync = (
        str((conn.execute(f"SHOW {name}").fetchone() or ("?",))[0]) for name in ("server_version", "synchronous_commit")
    )
    off = psycopg.connect(dsn, autocommit=True)  # floor (c): the same upserts, not waiting for the flush
    off.execute("SET synchronous_commit = off")
    floor_table = f"floor_{uuid.uuid4().hex[:8]}"
    upsert_table = f"upsert_{uuid.uuid4().hex[:8]}"
    conn.execute(f"CREATE TABLE {floor_table} (k text NOT NULL)")
    conn.execute(UPSERT_TABLE.format(upsert_table))
    table = f"bench_{uuid.uuid4().hex[:8]}"
    durable = PostgresBackend(dsn, table=table)
    fast = PostgresBackend(dsn, table=table, synchronous_commit="off")
    keys = Keys()
    insert = f"INSERT INTO {floor_table} (k) VALUES (%s)"
    upsert = UPSERT.format(upsert_table)

    def selects(_i: int) -> None:
        conn.execute("SELECT 1").fetchone()
        conn.execute("SELECT 1").fetchone()

    def commits(_i: int) -> None:
        conn.execute(insert, ("a",))
        conn.execute(insert, ("b",))

    def upserts(on: psycopg.Connection, prefix: str) -> Callable[[int], None]:
        def one(i: int) -> None:
            key = f"{prefix}{i}"
            on.execute(upsert, (key, "pending"))
            on.execute(upsert, (key, str(i)))

        return one

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
            ((fence, *_rest),) = conn.execute(q.claim, (key, key, 60_000_000, None, "t", 0, False, False)).fetchall()
            conn.execute(q.complete, (key, fence, 600_000_000, str(i)))

        return one

    warm = (selects, commits, upserts(conn, "w0:"), upserts(off, "w1:"), claim_complete(durable, "w2:"))
    for fn in (*warm, claim_complete(fast, "w3:"), by_hand("w4:")):
        timed(fn, 50)  # warm up: tables, connections, prepared statements
    c = durable.claim("done-key", lease=60)
    durable.complete("done-key", c.fence, "v", ttl=3600)

    def pair(floor: Callable[[], Callable[[int], object]], store: PostgresBackend) -> tuple[float, float, float]:
        return paired(floor, lambda: claim_complete(store, keys.prefix()), rounds, n)

    rows = [
        ("claim+complete", pair(lambda: selects, durable), "(a) 2 x SELECT 1"),
        ("claim+complete", pair(lambda: upserts(conn, keys.prefix()), durable), "(b) 2 durable one-row upserts"),
        ("claim+complete", pair(lambda: upserts(off, keys.prefix()), durable), "(c) 2 upserts, sync_commit=off"),
        ("claim+complete", pair(lambda: commits, durable), "2 durable one-row INSERTs, no index"),
        ("claim+complete vs its statements by hand", pair(lambda: by_hand(keys.prefix()), durable), "the same SQL"),
        (
            "replay (claim of a completed key)",
            paired(
                lambda: lambda _i: conn.execute("SELECT 1").fetchone(),
                lambda: lambda _i: durable.claim("done-key", lease=60),
                rounds,
                n,
            ),
            "1 x SELECT 1",
        ),
        ('synchronous_commit="off": claim+complete', pair(lambda: selects, fast), "(a) 2 x SELECT 1"),
        (
            'synchronous_commit="off": claim+complete',
            pair(lambda: upserts(off, keys.prefix()), fast),
            "(c) 2 upserts, sync_commit=off",
        ),
    ]
    durable.close()
    fast.close()
    conn.execute(f"DROP TABLE {floor_table}")
    conn.execute(f"DROP TABLE {upsert_table}")
    off.close()
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
    if kind in ("pg-floor", "pg-upserts", "pg-upserts-off"):
        with psycopg.connect(where, autocommit=True) as conn:
            if kind == "pg-upserts-off":
                conn.execute("SET synchronous_commit = off")
            upsert = UPSERT.format(extra)
            while time.monotonic() < deadline:
                if kind == "pg-floor":
                    conn.execute("SELECT 1").fetchone()
                    conn.execute("SELECT 1").fetchone()
                else:
                    conn.execute(upsert, (f"{prefix}{n}", "pending"))
                    conn.execute(upsert, (f"{prefix}{n}", str(n)))
                n += 1
        return n
    if kind == "redis":
        store: RedisBackend | PostgresBackend = RedisBackend(where, prefix=extra)
    else:
        store = PostgresBackend(where, table=extra, synchronous_commit="off" if kind == "postgres-off" else None)
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
        print(
            f"{args.rounds} rounds of {args.calls} calls, floor and measured alternating every {CHUNK}; "
            "ratio = median of the per-round ratios"
        )
        print()
        print(f"Redis {info['redis_version']} on loopback TCP (no persistence), redis-py {redis.__version__}")
        print_rows(redis_rows(redis_url, args.calls, args.rounds))
        print()
        rows, title, table = postgres_rows(dsn, args.calls, args.rounds)
        print(title + ", loopback TCP")
        print_rows(rows)
        print()

        with psycopg.connect(dsn, autocommit=True) as conn:
            upsert_table = f"tpupsert_{uuid.uuid4().hex[:8]}"
            conn.execute(UPSERT_TABLE.format(upsert_table))
        s, c = args.seconds, args.clients
        prefix = f"tp:{uuid.uuid4().hex[:8]}:"
        # floor, measured, floor, measured: the load's drift hits both sides of each ratio
        runs = [
            ("Redis 2 x PING", "redis-floor", redis_url, ""),
            ("Redis claim+complete", "redis", redis_url, prefix),
            ("PostgreSQL 2 x SELECT 1", "pg-floor", dsn, ""),
            ("PostgreSQL 2 durable one-row upserts", "pg-upserts", dsn, upsert_table),
            ("PostgreSQL claim+complete", "postgres", dsn, table),
            ("PostgreSQL 2 upserts, sync_commit=off", "pg-upserts-off", dsn, upsert_table),
            ('PostgreSQL synchronous_commit="off"', "postgres-off", dsn, table),
        ]
        figures = {name: throughput(kind, where, extra, s, c) for name, kind, where, extra in runs}
        print(f"{c} client processes, {s:g} s each, pairs per second (claim+complete, or the floor's pair)")
        versus = {
            "Redis 2 x PING": "Redis claim+complete",
            "PostgreSQL 2 x SELECT 1": "PostgreSQL claim+complete",
            "PostgreSQL 2 durable one-row upserts": "PostgreSQL claim+complete",
            "PostgreSQL 2 upserts, sync_commit=off": 'PostgreSQL synchronous_commit="off"',
        }
        for name, value in figures.items():
            ratio = f"   {value / figures[versus[name]]:.2f}x  ({versus[name]})" if name in versus else ""
            print(f"{name:<44} {value:>10,.0f}{ratio}")
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
