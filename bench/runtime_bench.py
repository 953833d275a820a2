"""Throughput of the runtime stores and the cost of ``@idempotent``.

    python bench/runtime_bench.py [--redis-url redis://host:port/0] [--seconds 1.5]

Prints, per backend, how many claim+complete pairs per second one thread gets (each pair is
one new key: the path of a call that executes) and how that compares with the memory store;
then the overhead of ``@idempotent`` on the memory store against the same undecorated call,
as ratios, for a call that executes (new key) and for a duplicate (replayed result).

Redis is measured when ``--redis-url`` is given or ``redis-server`` is on PATH (then one is
started on a free loopback port, without persistence, and stopped at the end). Every
measurement is time-boxed, so the whole script stays well under a minute.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dupguard.runtime import MemoryBackend, SQLiteBackend, idempotent


def pairs_per_second(store, seconds: float) -> tuple[float, int]:
    """claim + complete on fresh keys for ``seconds``; (pairs/s, pairs)."""
    n = 0
    prefix = f"bench:{time.monotonic_ns()}:"
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(50):
            key = prefix + str(n)
            claim = store.claim(key, lease=60)
            store.complete(key, claim.fence, {"n": n}, ttl=600)
            n += 1
        if time.perf_counter() >= deadline:
            break
    return n / (time.perf_counter() - start), n


def per_call(fn, seconds: float, repeat: int = 3) -> float:
    """Best-of-``repeat`` seconds per call of ``fn(i)`` over batches for ``seconds`` in total."""
    best = float("inf")
    counter = itertools.count()
    for _ in range(repeat):
        n = 0
        start = time.perf_counter()
        deadline = start + seconds / repeat
        while time.perf_counter() < deadline:
            for _ in range(200):
                fn(next(counter))
            n += 200
        best = min(best, (time.perf_counter() - start) / n)
    return best


def start_redis() -> tuple[subprocess.Popen, str, tempfile.TemporaryDirectory]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tempfile.TemporaryDirectory()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            tmp.name,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as c:
                c.sendall(b"PING\r\n")
                if c.recv(16).startswith(b"+PONG"):
                    return proc, f"redis://127.0.0.1:{port}/0", tmp
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise SystemExit("redis-server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", help="measure this Redis instead of starting one")
    parser.add_argument("--seconds", type=float, default=1.5, help="time per measurement")
    args = parser.parse_args()
    secs = args.seconds

    started = None
    redis_url = args.redis_url
    if redis_url is None and shutil.which("redis-server"):
        try:
            import redis  # noqa: F401
        except ImportError:
            print("redis-server found but the redis package is missing: Redis skipped")
        else:
            started = start_redis()
            redis_url = started[1]

    print(f"dupguard.runtime stores, one thread, {secs:g}s per measurement (Python {sys.version.split()[0]})")
    print()
    print(f"{'backend':<10} {'claim+complete/s':>17} {'vs memory':>10} {'pairs':>8}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        stores = [("memory", MemoryBackend()), ("sqlite", SQLiteBackend(Path(tmp) / "bench.sqlite3"))]
        if redis_url:
            from dupguard.runtime import RedisBackend

            stores.append(("redis", RedisBackend(redis_url, prefix=f"bench:{time.time_ns()}:")))
        try:
            for name, store in stores:
                rate, n = pairs_per_second(store, secs)
                rows.append((name, rate, n))
        finally:
            for _name, store in stores:
                store.close()
    memory_rate = rows[0][1]
    for name, rate, n in rows:
        print(f"{name:<10} {rate:>17,.0f} {rate / memory_rate:>9.3f}x {n:>8,}")
    if not redis_url:
        print("redis      (skipped: no --redis-url and no redis-server on PATH)")

    def plain(i: int) -> int:
        return i * 2

    store = MemoryBackend()
    executes = idempotent(store, key=lambda i: i, scope="bench-new")(plain)
    replays = idempotent(store, key=lambda i: 1, payload=lambda i: None, scope="bench-dup")(plain)
    replays(0)
    base = per_call(plain, secs)
    new = per_call(executes, secs)
    dup = per_call(replays, secs)
    print()
    print("@idempotent on MemoryBackend, per call, against the undecorated call")
    print(f"{'call':<34} {'ratio':>10}")
    print(f"{'undecorated':<34} {1:>9.0f}x")
    print(f"{'decorated, new key (executes)':<34} {new / base:>9.0f}x")
    print(f"{'decorated, same key (replays)':<34} {dup / base:>9.0f}x")
    print(
        f"(absolute, this machine: undecorated {base * 1e9:.0f} ns, new key {new * 1e6:.1f} µs, "
        f"replay {dup * 1e6:.1f} µs per call)"
    )

    if started is not None:
        proc, _url, tmpdir = started
        proc.terminate()
        proc.wait(10)
        tmpdir.cleanup()


if __name__ == "__main__":
    main()
