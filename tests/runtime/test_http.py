"""``IdempotencyMiddleware`` through a real uvicorn server and httpx (see ``http_app.py``).

One server per store (memory, SQLite, Redis, PostgreSQL) serves the single-worker tests; the
cross-worker tests start ``uvicorn --workers 2`` on one SQLite file, on Redis and on PostgreSQL. Every execution of the
endpoint appends a line to a file, so "ran once" is counted from the side effect itself.
A few behaviours that need no network (key parsing, store failure, response policy) run the
middleware in-process through ``httpx.ASGITransport``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from dupguard.runtime import IdempotencyMiddleware, MemoryBackend, RedisBackend, SQLiteBackend
from dupguard.runtime.http import parse_idempotency_key

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Uvicorn:
    """``python -m uvicorn http_app:app`` on a free loopback port, in its own process group."""

    def __init__(self, store: dict, effects: Path, workers: int = 1) -> None:
        self.port = free_port()
        self.workers = workers
        self.env = {**os.environ, "DUPGUARD_HTTP_TEST": json.dumps({"store": store, "effects": str(effects)})}
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Uvicorn:
        cmd = [sys.executable, "-m", "uvicorn", "http_app:app", "--app-dir", str(HERE)]
        cmd += ["--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"]
        if self.workers > 1:
            cmd += ["--workers", str(self.workers)]
        self.proc = subprocess.Popen(cmd, env=self.env, start_new_session=True, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        pids: set[str] = set()
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"uvicorn exited: {self.proc.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                # a fresh connection each time, so that every worker is seen answering
                pids.add(httpx.get(f"{self.url}/pid", timeout=1).text)
                if len(pids) >= self.workers or time.monotonic() > deadline - 50:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("uvicorn did not answer within 60s")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:  # pragma: no cover
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)


def store_spec(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> dict:
    if kind == "memory":
        return {"kind": "memory"}
    if kind == "sqlite":
        return {"kind": "sqlite", "where": str(tmp_path / "idem.sqlite3")}
    if kind == "postgres":
        return {"kind": "postgres", "where": request.getfixturevalue("postgres_dsn"), "table": f"http_{fresh()[:8]}"}
    url = request.getfixturevalue("redis_url")
    return {"kind": "redis", "where": url, "prefix": f"http:{uuid.uuid4().hex[:8]}:"}


@pytest.fixture(scope="module", params=["memory", "sqlite", "redis", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp(f"http-{request.param}")
    (tmp / "effects").mkdir()
    if request.param == "redis":
        redis_server = request.getfixturevalue("redis_server")
        spec = {"kind": "redis", "where": redis_server.url, "prefix": f"http:{uuid.uuid4().hex[:8]}:"}
    elif request.param == "postgres":
        dsn = request.getfixturevalue("postgres_server").dsn
        spec = {"kind": "postgres", "where": dsn, "table": f"http_{uuid.uuid4().hex[:8]}"}
    elif request.param == "sqlite":
        spec = {"kind": "sqlite", "where": str(tmp / "idem.sqlite3")}
    else:
        spec = {"kind": "memory"}
    srv = Uvicorn(spec, tmp / "effects").start()
    srv.effects = tmp / "effects"  # type: ignore[attr-defined]
    yield srv
    srv.stop()


def effects(srv, tag: str) -> int:
    path = srv.effects / tag
    return len(path.read_text().splitlines()) if path.exists() else 0


def order(tag: str, **extra) -> dict:
    return {"tag": tag, "amount": 10, **extra}


def fresh() -> str:
    return uuid.uuid4().hex


async def burst(url: str, n: int, key: str, body: dict, headers: dict | None = None) -> list[httpx.Response]:
    """``n`` identical requests at once, each on its own connection."""
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        return await asyncio.gather(
            *(client.post(url, json=body, headers={"Idempotency-Key": key, **(headers or {})}) for _ in range(n))
        )


# ---------------------------------------------------------------------------- one worker


def test_first_request_runs_and_a_retry_replays_it_byte_for_byte(server):
    tag, key = fresh(), fresh()
    first = httpx.post(f"{server.url}/orders", json=order(tag), headers={"Idempotency-Key": key})
    assert first.status_code == 201 and "idempotent-replayed" not in first.headers
    assert effects(server, tag) == 1
    again = httpx.post(f"{server.url}/orders", json=order(tag), headers={"Idempotency-Key": f'"{key}"'})
    assert again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content  # the stored body, not a second order
    assert again.headers["x-order-id"] == first.headers["x-order-id"]
    assert again.headers["content-type"] == first.headers["content-type"]
    assert effects(server, tag) == 1


def test_without_a_key_every_request_runs(server):
    tag = fresh()
    for _ in range(2):
        assert httpx.post(f"{server.url}/orders", json=order(tag)).status_code == 201
    assert effects(server, tag) == 2


def test_concurrent_duplicates_wait_for_the_first_and_run_once(server):
    tag, key = fresh(), fresh()
    responses = asyncio.run(burst(f"{server.url}/orders", 8, key, order(tag, delay=0.5)))
    assert [r.status_code for r in responses] == [201] * 8
    assert len({r.content for r in responses}) == 1
    assert sum(r.headers.get("idempotent-replayed") == "true" for r in responses) == 7
    assert effects(server, tag) == 1


def test_a_reused_key_with_another_payload_gets_422(server):
    tag, key = fresh(), fresh()
    url = f"{server.url}/orders"
    assert httpx.post(url, json=order(tag), headers={"Idempotency-Key": key}).status_code == 201
    other = httpx.post(url, json=order(tag, amount=20), headers={"Idempotency-Key": key})
    assert other.status_code == 422
    assert other.headers["content-type"] == "application/problem+json"
    assert other.json()["status"] == 422
    assert effects(server, tag) == 1


def test_conflict_mode_answers_409_while_the_first_runs(server):
    tag, key = fresh(), fresh()
    url = f"{server.url}/conflict/orders"

    async def scenario():
        async with httpx.AsyncClient(timeout=30) as client:
            first = asyncio.create_task(client.post(url, json=order(tag, delay=1.0), headers={"Idempotency-Key": key}))
            await asyncio.sleep(0.3)
            second = await client.post(url, json=order(tag, delay=1.0), headers={"Idempotency-Key": key})
            return await first, second

    first, second = asyncio.run(scenario())
    assert first.status_code == 201
    assert second.status_code == 409
    assert 1 <= int(second.headers["retry-after"]) <= 5
    later = httpx.post(url, json=order(tag, delay=1.0), headers={"Idempotency-Key": key})
    assert later.status_code == 201 and later.content == first.content
    assert effects(server, tag) == 1


def test_keys_are_scoped_per_principal(server):
    tag, key = fresh(), fresh()
    url = f"{server.url}/orders"
    alice = httpx.post(url, json=order(tag), headers={"Idempotency-Key": key, "Authorization": "Bearer alice"})
    bob = httpx.post(url, json=order(tag), headers={"Idempotency-Key": key, "Authorization": "Bearer bob"})
    assert alice.status_code == bob.status_code == 201
    assert alice.json()["order"] != bob.json()["order"]  # bob never sees alice's response
    assert effects(server, tag) == 2
    replay = httpx.post(url, json=order(tag), headers={"Idempotency-Key": key, "Authorization": "Bearer bob"})
    assert replay.content == bob.content and replay.headers["idempotent-replayed"] == "true"
    assert effects(server, tag) == 2


def test_a_required_key_that_is_missing_or_malformed_gets_400(server):
    tag = fresh()
    url = f"{server.url}/required/orders"
    missing = httpx.post(url, json=order(tag))
    assert missing.status_code == 400 and "Idempotency-Key" in missing.json()["detail"]
    bad = httpx.post(url, json=order(tag), headers={"Idempotency-Key": '"unterminated'})
    assert bad.status_code == 400
    assert effects(server, tag) == 0
    assert httpx.post(url, json=order(tag), headers={"Idempotency-Key": fresh()}).status_code == 201
    assert effects(server, tag) == 1


def test_a_5xx_or_4xx_releases_the_key_so_a_retry_runs(server):
    url = f"{server.url}/orders"
    for status in (503, 400):
        tag, key = fresh(), fresh()
        first = httpx.post(url, json=order(tag, status=status), headers={"Idempotency-Key": key})
        assert first.status_code == status
        retry = httpx.post(url, json=order(tag, status=status), headers={"Idempotency-Key": key})
        assert retry.status_code == status and "idempotent-replayed" not in retry.headers
        assert effects(server, tag) == 2


def test_methods_outside_the_list_pass_through(server):
    key = fresh()
    responses = [httpx.get(f"{server.url}/pid", headers={"Idempotency-Key": key}) for _ in range(2)]
    assert all(r.status_code == 200 and "idempotent-replayed" not in r.headers for r in responses)


# ---------------------------------------------------------------------------- two workers


@pytest.mark.parametrize("kind", ["sqlite", "redis", "postgres"])
def test_two_uvicorn_workers_sharing_a_store_run_each_key_once(kind, request, tmp_path):
    (tmp_path / "effects").mkdir()
    srv = Uvicorn(store_spec(kind, request, tmp_path), tmp_path / "effects", workers=2).start()
    srv.effects = tmp_path / "effects"  # type: ignore[attr-defined]
    try:
        crossed = 0
        for _ in range(6):
            tag, key = fresh(), fresh()
            responses = asyncio.run(burst(f"{srv.url}/orders", 12, key, order(tag, delay=0.4)))
            assert [r.status_code for r in responses] == [201] * 12
            assert len({r.content for r in responses}) == 1
            assert effects(srv, tag) == 1
            if len({r.headers["x-served-by"] for r in responses}) == 2:
                crossed += 1
                if crossed == 2:
                    break
        assert crossed >= 1, "the kernel never spread a burst over both workers"
        # and a duplicate long after, on whichever worker, replays
        again = httpx.post(f"{srv.url}/orders", json=order(tag, delay=0.4), headers={"Idempotency-Key": key})
        assert again.content == responses[0].content and effects(srv, tag) == 1
    finally:
        srv.stop()


# ---------------------------------------------------------------------------- in-process


@pytest.mark.parametrize(
    "raw,key",
    [
        (b'"abc-123"', "abc-123"),
        (b"abc-123", "abc-123"),
        (b' "a \\"quoted\\" key" ', 'a "quoted" key'),
        (b'"k";param=1', "k"),
        (b'"k", "j"', None),  # a list: which key?
        (b"a,b", None),
        (b'""', None),
        (b"", None),
        (b'"no end', None),
        (b'"bad \\n escape"', None),
        ("caf\u00e9".encode(), None),
        (b"x" * 256, None),
    ],
)
def test_parse_idempotency_key(raw, key):
    assert parse_idempotency_key([raw]) == key


def test_the_header_sent_twice_is_malformed():
    assert parse_idempotency_key([b"a", b"a"]) is None


class Effects:
    """A tiny ASGI endpoint with a side-effect counter, for in-process tests."""

    def __init__(self, status: int = 201, size: int = 10) -> None:
        self.calls = 0
        self.status = status
        self.size = size

    async def __call__(self, scope, receive, send):
        self.calls += 1
        await send({"type": "http.response.start", "status": self.status, "headers": [(b"x-n", b"%d" % self.calls)]})
        await send({"type": "http.response.body", "body": b"x" * self.size, "more_body": False})


def post(app, key: str = "k1", body: bytes = b"{}") -> httpx.Response:
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            return await client.post("/pay", content=body, headers={"Idempotency-Key": key})

    return asyncio.run(go())


def test_keep_response_can_replay_client_errors():
    endpoint = Effects(status=402)
    app = IdempotencyMiddleware(endpoint, MemoryBackend(), keep_response=lambda status: status < 500)
    assert post(app).status_code == 402
    replay = post(app)
    assert replay.status_code == 402 and replay.headers["idempotent-replayed"] == "true"
    assert endpoint.calls == 1


def test_a_response_too_large_to_keep_is_sent_but_not_replayed():
    endpoint = Effects(size=5000)
    app = IdempotencyMiddleware(endpoint, MemoryBackend(), max_response_bytes=1000)
    first = post(app)
    assert first.status_code == 201 and len(first.content) == 5000
    again = post(app)
    assert again.status_code == 409 and "too large" in again.json()["detail"]
    assert endpoint.calls == 1  # processed once; never run again


def test_an_unreachable_store_answers_503_and_runs_nothing():
    endpoint = Effects()
    store = RedisBackend(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=0.5)
    app = IdempotencyMiddleware(endpoint, store)
    response = post(app)
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
    assert endpoint.calls == 0


def test_an_app_that_raises_gives_the_key_back(tmp_path):
    store = SQLiteBackend(tmp_path / "store.sqlite3")
    calls = []

    async def broken(scope, receive, send):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    app = IdempotencyMiddleware(broken, store)
    with pytest.raises(RuntimeError):
        post(app)
    assert post(app).content == b"ok" and len(calls) == 2
    store.close()


def test_a_request_body_over_the_limit_gets_413():
    endpoint = Effects()
    app = IdempotencyMiddleware(endpoint, MemoryBackend(), max_request_bytes=100)
    assert post(app, body=b"x" * 101).status_code == 413
    assert endpoint.calls == 0


def test_a_store_lost_after_the_request_ran_does_not_hold_its_response_back(make_redis_server):
    """The response goes out after a second of trying to record it; the middleware keeps
    trying (until the lease would end) only after the client has it."""
    server = make_redis_server()
    store = RedisBackend(server.url, socket_timeout=0.5)

    async def endpoint(scope, receive, send):
        server.kill()  # the store goes away while the request runs
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    app = IdempotencyMiddleware(endpoint, store, lease=3.0)
    sent: list[tuple[float, dict]] = []
    requests = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive():
        return requests.pop() if requests else {"type": "http.disconnect"}

    async def send(message):
        sent.append((time.monotonic(), message))

    headers = [(b"idempotency-key", b"k-lost")]
    scope = {"type": "http", "method": "POST", "path": "/pay", "query_string": b"", "headers": headers}
    started = time.monotonic()
    asyncio.run(app(scope, receive, send))
    returned = time.monotonic() - started
    assert [m["type"] for _, m in sent] == ["http.response.start", "http.response.body"]
    assert sent[-1][1]["body"] == b"done"
    assert sent[-1][0] - started < 2.0  # out after about a second, not after the 3 s lease
    assert returned >= 2.5  # and the middleware went on trying to record it afterwards
