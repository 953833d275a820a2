"""RedisBackend's async methods on the event loop (``dupguard.runtime.backends._resp``), against a real
redis-server: no worker thread, one pipelined connection per loop, cancellation, a server that
dies and comes back, several loops, URLs with a password, a database and a unix socket, and a
runtime without redis-py."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
import uuid
import warnings

import pytest

from dupguard.runtime import RedisBackend, StoreError
from dupguard.runtime.backends._resp import parse_url


def _store(url: str, **kwargs) -> RedisBackend:
    return RedisBackend(url, prefix=f"ra:{uuid.uuid4().hex[:8]}:", **kwargs)


def _clients(redis_url: str) -> int:
    import redis

    admin = redis.Redis.from_url(redis_url)
    try:
        return len(admin.client_list()) - 1  # not the admin itself
    finally:
        admin.close()


def test_async_operations_start_no_thread_and_share_one_connection_per_loop(redis_url):
    """Each async operation writes its script and reads the reply on the loop: no worker thread
    is ever started (``asyncio.to_thread`` would start the loop's executor), and 64 concurrent
    operations on one loop go over one connection, pipelined."""
    store = _store(redis_url)
    before = _clients(redis_url)

    async def main() -> tuple[int, int, int]:
        threads = threading.active_count()
        claims = await asyncio.gather(*(store.aclaim(f"k{i % 8}", lease=30) for i in range(64)))
        won = [c for c in claims if c.acquired]
        assert len(won) == 8 and len({c.fence for c in claims if c.status == "busy"}) <= 8
        for i, claim in enumerate(won):
            assert await store.arenew(f"k{i}", claim.fence, lease=30) == 30
        await asyncio.gather(*(store.acomplete(f"k{i}", c.fence, i, ttl=60) for i, c in enumerate(won)))
        assert [(await store.aget(f"k{i}")).result for i in range(8)] == list(range(8))
        assert sorted(await asyncio.gather(*(store.aincr("n") for _ in range(32)))) == list(range(1, 33))
        other = await store.aclaim("free", lease=30)
        assert await store.arelease("free", other.fence) is True
        connections = await asyncio.to_thread(_clients, redis_url)  # the test's own hop, at the end
        return threads, threading.active_count() - 1, connections

    try:
        threads_before, threads_during, connections = asyncio.run(main())
        assert threads_during == threads_before, "an async operation started a thread"
        assert connections == before + 1, f"{connections - before} connections for one loop"
        assert _clients(redis_url) == before, "asyncio.run() ended the loop: its connection must be closed"
    finally:
        store.close()


def test_a_cancelled_call_never_leaves_its_reply_for_the_next_command(redis_url):
    """Cancel calls while their command is in flight, before and in the middle of the reply (a
    32 MB result arrives in many reads); every later command on the loop's connection still
    gets its own reply, never the cancelled one's."""
    import redis

    admin = redis.Redis.from_url(redis_url)
    store = _store(redis_url)
    big = "x" * (32 * 1024 * 1024)

    async def main() -> None:
        first = asyncio.create_task(store.aget("small"))
        await asyncio.sleep(0)  # the first caller is cancelled while the loop's connection opens
        first.cancel()
        assert await store.aget("small") is None  # it opens all the same, for the next caller
        small = await store.aclaim("small", lease=30)
        await store.acomplete("small", small.fence, "small result", ttl=60)
        large = await store.aclaim("large", lease=30)
        await store.acomplete("large", large.fence, big, ttl=60)

        # in flight, no reply yet: the server is paused
        admin.client_pause(400)
        task = asyncio.create_task(store.aclaim("other", lease=30))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        record = await store.aget("small")  # queued behind the cancelled claim's reply
        assert record is not None and record.result == "small result"
        assert (await store.aclaim("other", lease=30)).status == "busy"  # the cancelled claim did run

        # in the middle of a long reply, at several points
        for delay in (0.0, 0.001, 0.005, 0.02, 0.05):
            task = asyncio.create_task(store.aget("large"))
            await asyncio.sleep(delay)
            task.cancel()
            try:
                got = await task
            except asyncio.CancelledError:
                pass
            else:  # the reply was complete before the cancellation
                assert got.result == big
            record, counted = await asyncio.gather(store.aget("small"), store.aincr(f"n{delay}"))
            assert record.result == "small result" and counted == 1

    try:
        asyncio.run(main())
    finally:
        store.close()
        admin.close()


def test_a_timeout_fails_the_calls_in_flight_and_the_next_call_connects_again(redis_url):
    import redis

    admin = redis.Redis.from_url(redis_url)
    store = _store(redis_url, socket_timeout=0.2)

    async def main() -> None:
        first = await store.aclaim("k1", lease=30)
        await store.acomplete("k1", first.fence, "one", ttl=60)
        resumes = time.monotonic() + 1.0
        admin.client_pause(1000)
        results = await asyncio.gather(*(store.aclaim(f"p{i}", lease=30) for i in range(3)), return_exceptions=True)
        assert all(isinstance(r, StoreError) and r.retryable for r in results), results
        await asyncio.sleep(max(0.0, resumes - time.monotonic()) + 0.1)
        assert (await store.aget("k1")).result == "one"
        assert (await store.aclaim("k2", lease=30)).acquired

    try:
        asyncio.run(main())
    finally:
        store.close()
        admin.close()


def test_server_restart_raises_store_error_then_recovers(make_redis_server):
    """The server dies: calls raise ``StoreError`` (retryable), never hang or raise a socket error;
    when it is back, the next call connects again and its scripts are loaded again (``NOSCRIPT``,
    then ``EVAL``) on the restarted server."""
    server = make_redis_server("--appendonly", "yes", "--appendfsync", "always")
    store = _store(server.url)

    async def main() -> None:
        held = await store.aclaim("held", lease=60)
        assert held.acquired
        server.kill()
        for call in (
            lambda: store.aclaim("down", lease=30),
            lambda: store.acomplete("held", held.fence, "x", ttl=60),
            lambda: store.aget("held"),
        ):
            with pytest.raises(StoreError) as info:
                await call()
            assert info.value.retryable
        await asyncio.to_thread(server.start)
        busy = await store.aclaim("held", lease=30)
        assert busy.status == "busy" and busy.fence == held.fence
        await store.acomplete("held", held.fence, "once", ttl=60)
        assert (await store.aget("held")).result == "once"

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_two_loops_in_two_threads_each_use_a_connection_of_their_own(redis_url):
    store = _store(redis_url)
    before = _clients(redis_url)
    both_running = threading.Barrier(3)
    measured = threading.Event()
    won: list[bool] = []
    errors: list[BaseException] = []

    async def loop_main() -> None:
        claims = await asyncio.gather(*(store.aclaim("shared", lease=30) for _ in range(16)))
        won.extend(c.acquired for c in claims)
        both_running.wait(10)
        await asyncio.to_thread(measured.wait, 10)
        assert (await store.aget("shared")).state == "pending"

    def run() -> None:
        try:
            asyncio.run(loop_main())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        both_running.wait(10)
        during = _clients(redis_url)
        measured.set()
        for t in threads:
            t.join(30)
        assert not errors, errors
        assert won.count(True) == 1 and len(won) == 32
        assert during == before + 2, f"{during - before} connections for two loops"
        assert _clients(redis_url) == before
    finally:
        measured.set()
        store.close()


def test_a_loop_closed_without_asyncio_run_does_not_break_the_next_loop(redis_url):
    store = _store(redis_url)
    try:
        loop = asyncio.new_event_loop()
        claim = loop.run_until_complete(store.aclaim("k", lease=30))
        loop.close()  # no shutdown_asyncgens: the connection is left behind with its loop
        assert asyncio.run(store.aget("k")).fence == claim.fence
    finally:
        store.close()
        with warnings.catch_warnings():  # its socket closes when collected (and says so, as asyncio does)
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_makes_its_own_connection(redis_url):
    """A process forked while a loop of its parent holds a connection (a loop in another thread)
    must not use the parent's socket (the replies would go to whichever process reads first):
    the child connects again, and the parent's connection goes on serving the parent."""
    store = _store(redis_url)
    ready, forked = threading.Event(), threading.Event()
    parent: list = []

    async def background() -> None:
        claim = await store.aclaim("k", lease=30)
        await store.acomplete("k", claim.fence, "parent", ttl=60)
        ready.set()
        await asyncio.to_thread(forked.wait, 30)
        parent.extend(await asyncio.gather(*(store.aincr("n") for _ in range(200))))

    async def child() -> bool:
        got = await asyncio.gather(*(store.aget("k") for _ in range(200)))
        return all(r.result == "parent" for r in got) and await store.aincr("c") == 1

    thread = threading.Thread(target=asyncio.run, args=(background(),))
    thread.start()
    try:
        assert ready.wait(30)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = 0 if asyncio.run(child()) else 2
                store.close()
            finally:
                os._exit(code)
        forked.set()
        thread.join(30)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        assert sorted(parent) == list(range(1, 201))
    finally:
        forked.set()
        thread.join(30)
        store.close()


def test_urls_with_a_password_a_database_and_a_unix_socket(make_redis_server, tmp_path):
    sock = tmp_path / "redis.sock"
    import redis

    server = make_redis_server("--save", "", "--unixsocket", str(sock))
    admin = redis.Redis(port=server.port)
    admin.config_set("requirepass", "s3cr:t")  # after start: the fixture's start-up PING has no password
    admin.close()
    for url in (
        f"redis://:s3cr%3At@127.0.0.1:{server.port}/3",
        f"redis://default:s3cr%3At@127.0.0.1:{server.port}/0",
        f"unix://{sock}?db=5&password=s3cr%3At",
    ):
        assert parse_url(url) is not None
        store = _store(url)
        try:
            claim = asyncio.run(store.aclaim("k", lease=30))
            assert claim.acquired
            assert store.get("k").fence == claim.fence  # the sync path (redis-py) sees the same database
        finally:
            store.close()
    wrong = _store(f"redis://:nope@127.0.0.1:{server.port}/0")
    try:
        with pytest.raises(StoreError):
            asyncio.run(wrong.aget("k"))
    finally:
        wrong.close()


def test_parse_url_reads_what_redis_py_reads_and_leaves_the_rest_to_the_thread_path():
    t = parse_url("redis://u%40x:p%2Fw@example.com:6380/2")
    assert (t.host, t.port, t.db, t.username, t.password, t.tls) == ("example.com", 6380, 2, "u@x", "p/w", None)
    assert parse_url("redis://localhost").port == 6379 and parse_url("redis://localhost").db == 0
    assert parse_url("redis://h/1?db=4").db == 4
    assert parse_url("unix:///run/r.sock?db=3").path == "/run/r.sock"
    tls = parse_url("rediss://h:6380/0?ssl_cert_reqs=none").tls
    assert tls is not None and not tls.check_hostname
    assert parse_url("rediss://h/0").tls.check_hostname
    for unsupported in (
        "redis://h/0?health_check_interval=3",  # an option this client does not implement
        "redis://h/0?ssl_cert_reqs=none",  # TLS options without TLS
        "redis://h/x",
        "redis://h:port/0",
        "rediss://h/0?ssl_cert_reqs=maybe",
        "http://h/0",
    ):
        assert parse_url(unsupported) is None, unsupported


def test_an_unsupported_url_still_works_through_worker_threads(redis_url):
    store = _store(redis_url + "?health_check_interval=30")
    try:

        async def main() -> None:
            claim = await store.aclaim("k", lease=30)
            await store.acomplete("k", claim.fence, [1], ttl=60)
            assert (await store.aget("k")).result == [1]

        asyncio.run(main())
    finally:
        store.close()


def test_the_async_methods_need_no_redis_package(redis_url, tmp_path):
    """The runtime stays standard library only: without redis-py a backend made from a URL runs
    its async methods, and its sync methods say what to install."""
    code = f"""
import asyncio, sys
sys.modules["redis"] = None  # import redis fails
from dupguard.runtime import RedisBackend
store = RedisBackend({redis_url!r}, prefix="nopy:{uuid.uuid4().hex[:8]}:")
async def main():
    c = await store.aclaim("k", lease=30)
    await store.acomplete("k", c.fence, "ok", ttl=60)
    return (await store.aget("k")).result
print(asyncio.run(main()))
try:
    store.claim("k", lease=30)
except ImportError as exc:
    print("sync:", exc)
try:
    RedisBackend({redis_url!r} + "?health_check_interval=3")
except ImportError as exc:
    print("thread path:", exc)
store.close()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "ok"
    assert lines[1].startswith("sync:") and "pip install" in lines[1]
    assert lines[2].startswith("thread path:") and "pip install" in lines[2]


def _certificates(directory) -> tuple[str, str, str]:
    """A throwaway authority and a server certificate for 127.0.0.1 and localhost (openssl)."""

    def openssl(command: str) -> None:  # no argument has a space
        subprocess.run(["openssl", *command.split()], cwd=directory, check=True, capture_output=True, timeout=60)

    (directory / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=ca")
    openssl("req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=x")
    openssl(
        "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile san.ext"
    )
    return str(directory / "ca.pem"), str(directory / "server.pem"), str(directory / "server.key")


def test_rediss_urls_verify_the_server_as_redis_py_does(make_redis_server, tmp_path):
    """TLS on the loop's connection: the certificate is checked against ``ssl_ca_certs`` (or the
    system's authorities, which do not know this one: ``StoreError``), unless ``ssl_cert_reqs=none``."""
    import shutil
    import socket

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not on PATH")
    ca, cert, key = _certificates(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        tls_port = s.getsockname()[1]
    tls = ("--tls-port", str(tls_port), "--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca)
    make_redis_server("--save", "", *tls, "--tls-auth-clients", "no")
    for url in (
        f"rediss://127.0.0.1:{tls_port}/1?ssl_ca_certs={ca}",
        f"rediss://127.0.0.1:{tls_port}/1?ssl_cert_reqs=none",
    ):
        store = _store(url)
        try:
            claim = asyncio.run(store.aclaim("k", lease=30))
            assert claim.acquired and store.get("k").fence == claim.fence
        finally:
            store.close()
    unknown = _store(f"rediss://127.0.0.1:{tls_port}/1")
    try:
        with pytest.raises(StoreError, match="(?i)certificate"):
            asyncio.run(unknown.aget("k"))
    finally:
        unknown.close()


def test_a_server_that_never_answers_raises_store_error_in_time():
    """A peer that accepts connections and never answers (a listening socket, no Redis behind it):
    the call and the connection's set-up (AUTH) each fail with ``StoreError`` after
    ``socket_timeout``, never hang."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        for url in (f"redis://127.0.0.1:{port}/0", f"redis://:pw@127.0.0.1:{port}/0"):
            store = RedisBackend(url, socket_timeout=0.3)
            try:
                started = time.monotonic()
                with pytest.raises(StoreError) as info:
                    asyncio.run(store.aget("k"))
                assert info.value.retryable and time.monotonic() - started < 3, url
            finally:
                store.close()
