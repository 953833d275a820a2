"""The store contract, run unchanged against MemoryBackend, SQLiteBackend and a real Redis."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time

import pytest

from dupguard.runtime import LeaseLost, MemoryBackend, SQLiteBackend, StoreError
from dupguard.runtime.backends.memory import default_backend


def test_claim_busy_done_and_replay(backend):
    first = backend.claim("k", lease=5, payload="p1")
    assert first.acquired and first.fence > 0 and first.payload == "p1"
    busy = backend.claim("k", lease=5, payload="p2")
    assert busy.status == "busy" and busy.fence == first.fence and busy.payload == "p1"
    assert 0 < busy.remaining <= 5

    backend.complete("k", first.fence, {"rows": (1, 2), 3: None}, ttl=30)
    done = backend.claim("k", lease=5)
    # results are JSON: tuples come back as lists, keys as strings, in every backend
    assert done.status == "done" and done.result == {"rows": [1, 2], "3": None}
    assert done.fence == first.fence and done.payload == "p1" and 25 < done.remaining <= 30
    record = backend.get("k")
    assert record.state == "done" and record.result == {"rows": [1, 2], "3": None}
    assert backend.get("missing") is None


def test_takeover_after_expiry_gets_higher_fence_and_fences_out_the_old_owner(backend):
    old = backend.claim("k", lease=0.15)
    time.sleep(0.2)
    new = backend.claim("k", lease=5)
    assert new.acquired and new.fence > old.fence

    for late_write in (
        lambda: backend.complete("k", old.fence, "late", ttl=30),
        lambda: backend.renew("k", old.fence, lease=5),
        lambda: backend.release("k", old.fence),
    ):
        with pytest.raises(LeaseLost):
            late_write()
    assert backend.get("k").fence == new.fence and backend.get("k").state == "pending"

    backend.complete("k", new.fence, "fresh", ttl=30)
    with pytest.raises(LeaseLost):  # completed under another fence: still refused
        backend.complete("k", old.fence, "late", ttl=30)
    assert backend.claim("k", lease=5).result == "fresh"


def test_renew_keeps_the_lease_and_complete_is_idempotent_for_its_fence(backend):
    c = backend.claim("k", lease=0.2)
    for _ in range(3):
        time.sleep(0.1)
        assert backend.renew("k", c.fence, lease=0.2) == 0.2
    assert backend.claim("k", lease=1).status == "busy"  # 0.3 s later, still held
    backend.complete("k", c.fence, 1, ttl=30)
    backend.complete("k", c.fence, 2, ttl=30)  # a retried complete: accepted, first value stays
    assert backend.get("k").result == 1
    with pytest.raises(LeaseLost):  # nothing left to renew
        backend.renew("k", c.fence, lease=1)


def test_owner_may_finish_after_its_lease_ran_out_if_nobody_took_over(backend):
    c = backend.claim("k", lease=0.1)
    time.sleep(0.15)
    backend.complete("k", c.fence, "ok", ttl=30)
    assert backend.get("k").result == "ok"


def test_fenced_write_recreates_a_record_the_store_forgot(backend):
    # what an owner sees after a store lost its data (a Redis restart without persistence):
    # its fence still proves the grant, and nobody else holds the key
    backend.renew("gone", 12345, lease=5)
    assert backend.get("gone").state == "pending" and backend.get("gone").fence == 12345
    assert backend.claim("gone", lease=5).status == "busy"
    backend.complete("gone", 12345, "kept", ttl=30)
    assert backend.get("gone").result == "kept"
    backend.complete("other", 777, "kept too", ttl=30)
    assert backend.claim("other", lease=1).result == "kept too"


def test_release_frees_the_key_and_the_next_fence_is_higher(backend):
    c = backend.claim("k", lease=5)
    assert backend.release("k", c.fence) is True
    assert backend.release("k", c.fence) is False  # nothing left to release
    assert backend.get("k") is None
    again = backend.claim("k", lease=5)
    assert again.acquired and again.fence > c.fence
    assert backend.release("nothing", 1) is False


def test_unencodable_result_is_refused_before_the_store_changes(backend):
    c = backend.claim("k", lease=5)
    with pytest.raises(TypeError):
        backend.complete("k", c.fence, object(), ttl=30)
    assert backend.get("k").state == "pending"
    backend.complete("k", c.fence, None, ttl=30)
    assert backend.get("k").state == "done" and backend.get("k").result is None


def test_expired_result_lets_the_key_run_again(backend):
    c = backend.claim("k", lease=5)
    backend.complete("k", c.fence, "v", ttl=0.1)
    time.sleep(0.15)
    assert backend.get("k") is None
    again = backend.claim("k", lease=5)
    assert again.acquired and again.fence > c.fence


def test_counters_are_atomic_and_windowed(backend):
    assert backend.incr("n") == 1
    assert backend.incr("n", 5) == 6
    assert backend.incr("w", ttl=0.1) == 1
    assert backend.incr("w", ttl=0.1) == 2
    time.sleep(0.15)
    assert backend.incr("w", ttl=0.1) == 1

    results: list[int] = []
    lock = threading.Lock()

    def bump() -> None:
        for _ in range(25):
            value = backend.incr("shared")
            with lock:
                results.append(value)

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(1, 201))  # every increment seen exactly once


def test_exactly_one_of_many_concurrent_claims_wins(backend):
    barrier = threading.Barrier(32)
    claims = []

    def claim() -> None:
        barrier.wait()
        claims.append(backend.claim("hot", lease=5))

    threads = [threading.Thread(target=claim) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [c for c in claims if c.acquired]
    assert len(winners) == 1
    assert {c.fence for c in claims} == {winners[0].fence}


def test_async_methods(backend):
    async def main() -> None:
        c = await backend.aclaim("a", lease=5)
        assert c.acquired
        assert (await backend.aclaim("a", lease=5)).status == "busy"
        assert await backend.arenew("a", c.fence, lease=5) == 5
        await backend.acomplete("a", c.fence, [1], ttl=30)
        assert (await backend.aget("a")).result == [1]
        with pytest.raises(LeaseLost):
            await backend.arelease("a", c.fence + 1)
        d = await backend.aclaim("b", lease=5)
        assert await backend.arelease("b", d.fence) is True
        assert await backend.aincr("n", 2) == 2

    asyncio.run(main())


def test_completion_wakes_registered_waiters(backend):
    c = backend.claim("k", lease=5)
    fut = backend.waiters.register("k")
    assert not fut.done()
    backend.complete("k", c.fence, 1, ttl=5)
    assert fut.done()
    fut2 = backend.waiters.register("j")
    backend.release("j", backend.claim("j", lease=5).fence)
    assert fut2.done()


def test_sqlite_backends_on_one_file_share_records_and_wakeups(tmp_path):
    a = SQLiteBackend(tmp_path / "s.db")
    b = SQLiteBackend(tmp_path / "s.db")
    try:
        c = a.claim("k", lease=5)
        assert b.claim("k", lease=5).status == "busy"
        fut = b.waiters.register("k")
        a.complete("k", c.fence, "x", ttl=5)
        assert fut.done() and b.get("k").result == "x"
        assert a.path and a.get("k").state == "done"
        journal = a._run("PRAGMA journal_mode", ())[0][0]
        assert journal == "wal"
    finally:
        a.close()
        b.close()


def test_sqlite_file_of_an_earlier_version_gets_the_new_columns_and_sweeps_keep_abandoned_rows(tmp_path):
    """A file made before claims kept abandoned records (no keep_us, taken_from) is upgraded
    when it is opened, its rows intact; the sweep then deletes what expired but keeps an
    abandoned row for its keep."""
    import sqlite3

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """CREATE TABLE dupguard_records (key TEXT PRIMARY KEY, state TEXT NOT NULL, fence INTEGER NOT NULL,
                   expires_at INTEGER NOT NULL, payload TEXT, result TEXT, owner TEXT) WITHOUT ROWID;
               INSERT INTO dupguard_records VALUES ('old', 'done', 7, 9000000000000000, NULL, '"kept"', NULL);"""
        )
    conn.close()
    store = SQLiteBackend(path, sweep_every=4)
    assert store.claim("old", lease=30).result == "kept"
    abandoned = store.claim("abandoned", lease=0.05, keep=30)
    store.claim("not kept", lease=0.05)
    time.sleep(0.1)
    store.claim("a", lease=30)  # the fourth claim of this thread: a sweep
    rows = {key for (key,) in sqlite3.connect(path).execute("SELECT key FROM dupguard_records")}
    assert rows == {"old", "abandoned", "a"}
    taken = store.claim("abandoned", lease=30)
    assert taken.acquired and taken.expired_holder == abandoned.fence


def test_sqlite_errors_are_store_errors(tmp_path):
    store = SQLiteBackend(tmp_path / "s.db")
    store.close()
    with pytest.raises(StoreError):
        store.claim("k", lease=1)
    with pytest.raises(StoreError):
        SQLiteBackend(tmp_path / "no-such-dir" / "s.db")
    with pytest.raises(ValueError):
        SQLiteBackend(":memory:")


def test_sqlite_async_operations_on_a_free_file_make_no_hop_to_a_worker_thread(tmp_path, monkeypatch):
    """The helpers' cost per turn in an async app (issue 15's overhead bound): on a file nobody
    else is writing, an async operation runs its statement on the loop (microseconds) instead
    of handing it to a worker thread and back (tens of microseconds of CPU, and the GIL from a
    busy loop). The first use opens the loop's connection in a thread; after that, only the
    periodic checkpoint does."""
    store = SQLiteBackend(tmp_path / "s.db")
    hops = []
    to_thread = asyncio.to_thread

    async def counted(fn, *args, **kwargs):
        hops.append(getattr(fn, "__name__", fn))
        return await to_thread(fn, *args, **kwargs)

    async def turns() -> None:
        await store.aget("warm")  # opens the loop's connection (in a worker thread)
        hops.clear()
        for i in range(50):
            claim = await store.aclaim(f"k{i}", lease=5, payload="p")
            assert claim.acquired
            assert (await store.arenew(f"k{i}", claim.fence, lease=5)) == 5
            await store.acomplete(f"k{i}", claim.fence, {"i": i}, ttl=30)
            again = await store.aclaim(f"k{i}", lease=5)
            assert again.status == "done" and again.result == {"i": i} and again.payload == "p"
            other = await store.aclaim(f"r{i}", lease=5)
            assert await store.arelease(f"r{i}", other.fence)
            assert (await store.aget(f"k{i}")).result == {"i": i}
            assert await store.aincr("n") == i + 1

    monkeypatch.setattr(asyncio, "to_thread", counted)
    try:
        asyncio.run(turns())
    finally:
        store.close()
    # 350 statements: the only hops are the checkpoints, one every 256 statements
    assert hops == ["_checkpoint"]


def test_sqlite_async_operation_on_a_locked_file_waits_in_a_thread_not_on_the_loop(tmp_path):
    """Another connection holds the write lock: the loop's connection, which never waits, gets
    SQLITE_BUSY with nothing written, and the statement runs again in a worker thread that
    waits for the lock; the loop goes on meanwhile, and the claim then succeeds once."""
    import sqlite3

    store = SQLiteBackend(tmp_path / "s.db")
    holder = sqlite3.connect(tmp_path / "s.db", isolation_level=None)

    async def scenario() -> tuple[int, object, object]:
        await store.aget("warm")
        holder.execute("BEGIN IMMEDIATE")  # the write lock, as another process's writer holds it
        ticks = 0
        claiming = asyncio.ensure_future(store.aclaim("k", lease=5))
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert not claiming.done()  # waiting for the lock, in a thread
        holder.execute("COMMIT")
        claim = await asyncio.wait_for(claiming, 10)
        return ticks, claim, await store.aclaim("k", lease=5)

    try:
        ticks, claim, again = asyncio.run(scenario())
    finally:
        holder.close()
        store.close()
    assert ticks == 20
    assert claim.acquired and again.status == "busy" and again.fence == claim.fence


def test_sqlite_loop_connection_keeps_the_wal_checkpointed(tmp_path):
    """The loop's connection does not checkpoint by itself (a checkpoint flushes the file to
    disk, which the loop must not wait for): a worker thread does it every few hundred
    statements, so the WAL stays small however many operations run on the loop."""
    path = tmp_path / "s.db"
    store = SQLiteBackend(path)

    async def many() -> None:
        for i in range(3000):
            claim = await store.aclaim(f"k{i}", lease=5)
            await store.acomplete(f"k{i}", claim.fence, "x" * 200, ttl=30)

    try:
        asyncio.run(many())
        wal = (tmp_path / "s.db-wal").stat().st_size
    finally:
        store.close()
    # 6000 commits of a few pages each would be tens of MB of WAL without a checkpoint
    assert wal < 8 * 1024 * 1024, wal


def test_redis_errors_are_store_errors_not_redis_errors():
    redis = pytest.importorskip("redis")
    pytest.importorskip("redis.asyncio")  # makes ``redis.asyncio`` available below

    from dupguard.runtime import RedisBackend

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = RedisBackend(f"redis://127.0.0.1:{port}/0")
    with pytest.raises(StoreError) as info:
        store.claim("k", lease=1)
    assert not isinstance(info.value, redis.RedisError) and info.value.retryable
    with pytest.raises(StoreError):
        asyncio.run(store.aget("k"))

    from redis.backoff import NoBackoff
    from redis.retry import Retry

    async_store = RedisBackend(redis.asyncio.Redis(port=port, retry=Retry(NoBackoff(), 0)))
    with pytest.raises(TypeError, match="async"):  # an asyncio client belongs to one loop
        async_store.claim("k", lease=1)
    with pytest.raises(StoreError):
        asyncio.run(async_store.aclaim("k", lease=1))
    with pytest.raises(TypeError):
        RedisBackend(42)


def test_default_backend_is_one_shared_memory_store():
    assert default_backend() is default_backend()
    assert isinstance(default_backend(), MemoryBackend)


def test_importing_the_runtime_imports_neither_libcst_nor_redis():
    code = (
        "import sys, dupguard.runtime as r\n"
        "r.MemoryBackend, r.SQLiteBackend, r.RedisBackend, r.idempotent, r.ToolCallLedger, r.turn_lease\n"
        "print(sorted(m for m in ('libcst', 'redis') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_redis_backend_with_given_clients(redis_url):
    """A sync client (even with decode_responses) and an asyncio client, on the same keys."""
    import redis
    import redis.asyncio

    from dupguard.runtime import Idempotency, RedisBackend

    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    store = RedisBackend(raw, prefix="given:")
    c = store.claim("order:1", lease=5, payload="p")
    assert c.acquired
    # one hash-tagged key per record: a Redis Cluster keeps it on one slot
    assert raw.exists("given:{order:1}") and raw.pttl("given:{order:1}") > 4000
    store.complete("order:1", c.fence, {"ok": True}, ttl=30)
    assert store.get("order:1").result == {"ok": True}
    assert store.incr("hits", ttl=5) == 1 and raw.exists("given:{hits}:n")

    async def main() -> None:
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            astore = RedisBackend(client, prefix="given:")
            assert (await astore.aclaim("order:1", lease=5)).result == {"ok": True}
            d = await astore.aclaim("order:2", lease=0.3)
            assert await astore.arenew("order:2", d.fence, lease=0.3) == 0.3
            assert await astore.arelease("order:2", d.fence) is True
            assert await astore.aincr("hits") == 2
            ran = []

            async def slow() -> str:
                ran.append(1)
                await asyncio.sleep(0.5)  # longer than the lease: the native heartbeat renews
                return "done"

            idem = Idempotency(astore, lease=0.3)
            holder = asyncio.create_task(idem.arun("job", slow))
            await asyncio.sleep(0.4)
            assert (await astore.aget("idem:job")).state == "pending"
            assert await holder == "done" and await idem.arun("job", slow) == "done" and ran == [1]
        finally:
            await client.aclose()

    asyncio.run(main())
    raw.close()


def test_redis_from_a_url_never_reads_a_late_reply_as_the_next_one(redis_url):
    """A backend made from a URL sends its scripts on one connection per thread (no pool round
    per call: ``bench/e2e/helpers_cost.py``). A reply that comes after the timeout must never be
    taken for the next command's: the timed-out call raises ``StoreError`` and the connection is
    dropped, so the next call, from this thread or a worker thread of the async API, reads its
    own reply on a new connection; one thread makes one connection, however many calls."""
    redis = pytest.importorskip("redis")
    from dupguard.runtime import RedisBackend

    admin = redis.Redis.from_url(redis_url)
    prefix = f"late:{time.time_ns()}:"
    store = RedisBackend(redis_url, prefix=prefix, socket_timeout=0.2)
    try:
        first = store.claim("k1", lease=30)
        store.complete("k1", first.fence, "one", ttl=60)
        before = len(admin.client_list())
        for _ in range(20):
            store.get("k1")
        assert len(admin.client_list()) == before  # no new connection per call
        resumes = time.monotonic() + 1.5
        admin.client_pause(1500)  # the server answers nothing for 1.5 s
        with pytest.raises(StoreError):
            store.claim("k2", lease=30)  # times out after 0.2 s
        time.sleep(max(0.0, resumes - time.monotonic()) + 0.1)
        record = store.get("k1")
        assert record is not None and record.state == "done" and record.result == "one"
        assert asyncio.run(store.aget("k1")).result == "one"
        # a command left unanswered went with its connection: k2 is claimed on the new one
        assert store.claim("k2", lease=30).acquired
    finally:
        store.close()
        admin.close()
