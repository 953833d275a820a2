"""What ``IdempotencyMiddleware`` adds to a request, against the same app without it.

    python bench/http_bench.py [--redis-url redis://host:port/0] [--requests 200] [--rounds 5]

Two measurements, in one run, for the middleware on ``MemoryBackend``, ``SQLiteBackend`` (a
file in a temporary directory) and ``RedisBackend`` (a ``redis-server`` on this host: the one
at ``--redis-url``, or one started on a free loopback port without persistence when
``redis-server`` is on PATH; ``redis`` wraps a URL, so each store call runs in a worker
thread, and ``redis-async`` wraps a ``redis.asyncio`` client, whose calls are native):

1. **Through uvicorn** (one worker per configuration, all started up front), sequential
   requests from one keep-alive ``httpx`` client: milliseconds per request for ``POST``s with
   a new key each (the request runs: claim, heartbeat lease, store the response) and for
   duplicates of one key (the stored response is replayed), and the ratio to the bare app.
   Rounds alternate the configurations, so load from other processes on the machine spreads
   over all of them; each figure is the median over the rounds.
2. **In process** (the ASGI app called directly, no network): microseconds the middleware adds
   to a request, which is the middleware's own cost without the HTTP server around it.

The endpoint is a plain ASGI app returning a small JSON body: the cheapest possible request,
so the ratios are the worst case; a real endpoint (a database write, a model call) makes them
smaller. Every measurement is bounded; the whole script takes well under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dupguard.runtime import IdempotencyMiddleware, MemoryBackend, RedisBackend, SQLiteBackend

BODY = b'{"order":"ord_123","status":"created"}'


async def endpoint(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    while (await receive()).get("more_body"):
        pass
    await send(
        {
            "type": "http.response.start",
            "status": 201,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": BODY})


def open_store(spec: dict):
    if spec["kind"] == "memory":
        return MemoryBackend()
    if spec["kind"] == "sqlite":
        return SQLiteBackend(spec["where"])
    if spec["kind"] == "postgres":  # a DSN: each store call runs in a worker thread
        from dupguard.runtime import PostgresBackend

        return PostgresBackend(spec["where"], table=f"bench_{uuid.uuid4().hex[:8]}")
    prefix = f"bench:{uuid.uuid4().hex[:8]}:"
    if spec["kind"] == "redis-async":  # native async calls: no worker-thread hop per operation
        import redis.asyncio

        return RedisBackend(redis.asyncio.Redis.from_url(spec["where"]), prefix=prefix)
    return RedisBackend(spec["where"], prefix=prefix)


def build_app(spec: dict):
    if spec["kind"] == "bare":
        return endpoint
    return IdempotencyMiddleware(endpoint, open_store(spec), ttl=600, lease=30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------- servers


def serve(spec_json: str, port: int) -> None:
    import uvicorn

    uvicorn.run(build_app(json.loads(spec_json)), host="127.0.0.1", port=port, log_level="warning", access_log=False)


class Server:
    def __init__(self, name: str, spec: dict) -> None:
        self.name = name
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", json.dumps(spec), "--port", str(self.port)],
            start_new_session=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/orders"

    def wait(self, httpx) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url.replace("/orders", "/"), timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError(f"the {self.name} server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start_redis() -> tuple[subprocess.Popen, str, tempfile.TemporaryDirectory]:
    port = free_port()
    tmp = tempfile.TemporaryDirectory()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        + ["--dir", tmp.name],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, url, tmp
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


# ---------------------------------------------------------------------------- measurements


def over_http(servers: list[Server], requests: int, rounds: int) -> dict[str, dict[str, float]]:
    """Median ms per request, per server, for new keys and for duplicates."""
    import httpx

    samples: dict[str, dict[str, list[float]]] = {s.name: {"new": [], "replay": []} for s in servers}
    with httpx.Client(timeout=30) as client:
        for server in servers:  # warm up: connection, first-request paths, SQLite schema
            for _ in range(20):
                client.post(server.url, content=b"{}", headers={"Idempotency-Key": uuid.uuid4().hex})
        for r in range(rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for server in order:
                keys = [uuid.uuid4().hex for _ in range(requests)]
                start = time.perf_counter()
                for key in keys:
                    client.post(server.url, content=b"{}", headers={"Idempotency-Key": key})
                samples[server.name]["new"].append((time.perf_counter() - start) / requests * 1000)
                start = time.perf_counter()
                for _ in range(requests):
                    client.post(server.url, content=b"{}", headers={"Idempotency-Key": keys[0]})
                samples[server.name]["replay"].append((time.perf_counter() - start) / requests * 1000)
    return {name: {k: statistics.median(v) for k, v in kinds.items()} for name, kinds in samples.items()}


def in_process(spec: dict, requests: int, duplicate: bool) -> float:
    """Best-of-3 µs per request with the ASGI app called directly."""
    app = build_app(spec)

    async def one(key: bytes) -> None:
        sent = False

        async def receive():
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def send(message):
            pass

        scope = {"type": "http", "method": "POST", "path": "/orders", "query_string": b""}
        scope["headers"] = [(b"idempotency-key", key)]
        await app(scope, receive, send)

    async def batch() -> float:
        keys = [b"dup"] * requests if duplicate else [uuid.uuid4().hex.encode() for _ in range(requests)]
        start = time.perf_counter()
        for key in keys:
            await one(key)
        return (time.perf_counter() - start) / requests * 1e6

    async def run() -> float:
        await one(b"dup")  # warm up, and store the duplicate's response
        return min([await batch() for _ in range(3)])

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--redis-url")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.serve:
        serve(ns.serve, ns.port)
        return 0
    import httpx

    redis_proc = tmp_redis = None
    redis_url = ns.redis_url
    if redis_url is None and shutil.which("redis-server"):
        redis_proc, redis_url, tmp_redis = start_redis()
    workdir = tempfile.TemporaryDirectory()
    specs = {
        "bare": {"kind": "bare"},
        "memory": {"kind": "memory"},
        "sqlite": {"kind": "sqlite", "where": os.path.join(workdir.name, "idem.sqlite3")},
    }
    if redis_url:
        specs["redis"] = {"kind": "redis", "where": redis_url}
        specs["redis-async"] = {"kind": "redis-async", "where": redis_url}
    servers = [Server(name, spec) for name, spec in specs.items()]
    try:
        for server in servers:
            server.wait(httpx)
        started = time.perf_counter()
        http = over_http(servers, ns.requests, ns.rounds)
        print(
            f"Through uvicorn (1 worker each), one keep-alive client, {ns.requests} sequential POSTs x "
            f"{ns.rounds} rounds, median ms per request; load average {os.getloadavg()[0]:.2f}:"
        )
        print(f"{'store':>11}  {'new key':>9}  {'ratio':>6}  {'duplicate':>9}  {'ratio':>6}")
        base = http["bare"]["new"]
        for name, figures in http.items():
            print(
                f"{name:>11}  {figures['new']:9.3f}  {figures['new'] / base:5.2f}x  "
                f"{figures['replay']:9.3f}  {figures['replay'] / base:5.2f}x"
            )
        print()
        print("In process (the ASGI app called directly), best of 3, microseconds per request:")
        bare = in_process(specs["bare"], ns.requests * 5, duplicate=False)
        print(f"{'bare':>11}  {bare:9.1f}")
        for name, spec in specs.items():
            if name == "bare":
                continue
            new = in_process(spec, ns.requests * 2, duplicate=False)
            dup = in_process(spec, ns.requests * 2, duplicate=True)
            print(f"{name:>11}  new key {new:8.1f} (+{new - bare:7.1f})  duplicate {dup:8.1f} (+{dup - bare:7.1f})")
        print(f"\n(measured in {time.perf_counter() - started:.1f} s)")
    finally:
        for server in servers:
            server.stop()
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(10)
            tmp_redis.cleanup()  # type: ignore[union-attr]
        workdir.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
