"""One round trip per operation (issue 19's performance section): what each backend sends the
server for ``claim`` and ``complete``, counted by the server or by the wire protocol itself.

* Redis: ``INFO commandstats`` after ``CONFIG RESETSTAT``. A claim and a completion are one
  ``EVALSHA`` each; the script is sent (``EVAL``) once per server, and the eviction policy is
  read once per backend, not per call.
* PostgreSQL: libpq's protocol trace of the backend's own connection. Each operation is one
  ``Sync`` / ``ReadyForQuery`` exchange (no ``BEGIN`` or ``COMMIT`` around it: autocommit),
  and once psycopg has prepared the statement (after ``prepare_threshold`` uses) no ``Parse``
  is sent: the server plans each statement once per connection.

Durability is not traded for it: by default the backend leaves ``synchronous_commit`` to the
server, and the server counts one WAL flush per claim and per completion (``pg_stat_wal``).
``PostgresBackend(..., synchronous_commit="off")`` is the user's choice to answer before the
flush; it changes neither the round trips nor the session of the connection it ran on
(``bench/store_floor.py`` measures what the flush costs).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import uuid

import pytest

from dupguard.runtime import PostgresBackend, RedisBackend

CALLS = 20
IN_SCRIPTS = {"time", "hmget", "hset", "del", "pexpire"}  # redis.call(...) in the Lua scripts
TEST_AND_HANDSHAKE = {"config|resetstat", "info", "hello", "client|setinfo"}


def _commandstats(client) -> dict[str, int]:
    return {name.removeprefix("cmdstat_"): stats["calls"] for name, stats in client.info("commandstats").items()}


def test_redis_claim_and_complete_are_one_evalsha_each(redis_url: str) -> None:
    import redis

    admin = redis.Redis.from_url(redis_url)
    store = RedisBackend(redis_url, prefix=f"rt:{uuid.uuid4().hex[:8]}:")
    try:
        admin.script_flush()  # a server that never saw the scripts: each is sent once
        admin.config_resetstat()
        for i in range(CALLS):
            claim = store.claim(f"k{i}", lease=30)
            assert claim.acquired
            store.complete(f"k{i}", claim.fence, {"i": i}, ttl=60)
        assert store.claim("k0", lease=30).result == {"i": 0}  # a replay: one more EVALSHA
        stats = _commandstats(admin)
    finally:
        store.close()
        admin.close()
    # what the client sent: not the commands the scripts ran inside the server, nor the test's
    # own, nor the handshake of the backend's one new connection
    sent = {name: calls for name, calls in stats.items() if name not in IN_SCRIPTS | TEST_AND_HANDSHAKE}
    # the first claim and the first complete each meet NOSCRIPT once and send the script
    assert sent == {"evalsha": 2 * CALLS + 1, "eval": 2, "config|get": 1}, stats
    assert stats.get("hello", 0) <= 1 and stats.get("client|setinfo", 0) <= 2, stats


def _traced(dsn: str, trace_path: str):
    """A connection factory whose connections write libpq's protocol trace to ``trace_path``."""
    import psycopg
    from psycopg import pq

    handles = []

    def connect():
        conn = psycopg.connect(dsn, autocommit=True)
        handle = open(trace_path, "a")  # noqa: SIM115 - closed by the test
        handles.append(handle)
        conn.pgconn.trace(handle.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        return conn

    return connect, handles


def _frontend_messages(trace: str) -> list[str]:
    """The messages the client sent, in order (``F <length> <type> …`` lines)."""
    return [m.group(1) for m in re.finditer(r"^F\t\d+\t(\w+)", trace, re.MULTILINE)]


@pytest.mark.parametrize("synchronous_commit", [None, "off"])
def test_postgres_claim_and_complete_are_one_round_trip_each(postgres_dsn: str, synchronous_commit) -> None:
    fd, trace_path = tempfile.mkstemp(prefix="dupguard-pgtrace-")
    os.close(fd)
    factory, handles = _traced(postgres_dsn, trace_path)
    store = PostgresBackend(
        factory, table=f"rt_{uuid.uuid4().hex[:8]}", max_idle=1, synchronous_commit=synchronous_commit
    )
    try:
        for i in range(10):  # tables created, statements prepared
            claim = store.claim(f"warm{i}", lease=30)
            store.complete(f"warm{i}", claim.fence, i, ttl=60)
        for handle in handles:
            handle.flush()
        start = os.path.getsize(trace_path)
        for i in range(CALLS):
            claim = store.claim(f"k{i}", lease=30)
            assert claim.acquired
            store.complete(f"k{i}", claim.fence, {"i": i}, ttl=60)
        for handle in handles:
            handle.flush()
        with open(trace_path) as trace:
            trace.seek(start)
            text = trace.read()
    finally:
        store.close()
        for handle in handles:
            handle.close()
        os.unlink(trace_path)
    assert len(handles) == 1, "one connection, reused between calls"
    sent = _frontend_messages(text)
    # each call: Bind, Describe, Execute, Sync of an already prepared statement; nothing else
    assert sent.count("Sync") == 2 * CALLS, sent[:12]
    assert sent.count("Parse") == 0 and "Query" not in sent, sent[:12]
    assert sent.count("Execute") == 2 * CALLS
    assert text.count("ReadyForQuery") == 2 * CALLS
    assert "BEGIN" not in text and "COMMIT" not in text and "SET" not in text
    # the setting travels inside the prepared statements, which are not parsed again
    assert "synchronous_commit" not in text


def test_postgres_backend_leaves_synchronous_commit_alone(postgres_dsn: str) -> None:
    """The backend's own connections run with the server's durability setting: a lost claim
    record would let a refund run twice."""
    store = PostgresBackend(postgres_dsn, table=f"rt_{uuid.uuid4().hex[:8]}")
    try:
        store.claim("k", lease=30)
        cur = store._take()
        try:
            assert cur.execute("SHOW synchronous_commit").fetchone()[0] == "on"  # the server's default
        finally:
            store._give(cur)
    finally:
        store.close()


def _wal_flushes(admin) -> int:
    admin.execute("SELECT pg_stat_clear_snapshot()")
    return admin.execute("SELECT wal_sync FROM pg_stat_wal").fetchone()[0]


@pytest.mark.parametrize("synchronous_commit", [None, "off"])
def test_postgres_synchronous_commit_is_the_users_choice(postgres_dsn: str, synchronous_commit) -> None:
    """What the server did, counted by the server (``pg_stat_wal.wal_sync``: WAL flushes, by
    every process): by default each claim and each completion waits for a flush of its own;
    with ``synchronous_commit="off"`` none does (the WAL writer flushes in the background, a
    few times a second). A replay writes nothing either way. The setting is local to each
    statement's transaction, so the connection's session keeps the server's."""
    import psycopg

    admin = psycopg.connect(postgres_dsn, autocommit=True)
    if admin.info.server_version < 140000:
        admin.close()
        pytest.skip("pg_stat_wal.wal_sync needs PostgreSQL 14")
    conns = []

    def factory():
        conn = psycopg.connect(postgres_dsn, autocommit=True)
        conns.append(conn)
        return conn

    store = PostgresBackend(factory, table=f"rt_{uuid.uuid4().hex[:8]}", synchronous_commit=synchronous_commit)
    pairs = 50
    try:
        store.claim("warm", lease=30)  # the tables exist before counting starts
        before = _wal_flushes(admin)
        for i in range(pairs):
            claim = store.claim(f"k{i}", lease=30)
            assert claim.acquired and claim.remaining == 30
            store.complete(f"k{i}", claim.fence, {"i": i}, ttl=60)
            replay = store.claim(f"k{i}", lease=30)
            assert replay.status == "done" and replay.result == {"i": i} and replay.fence == claim.fence
        assert len(conns) == 1
        assert conns[0].execute("SHOW synchronous_commit").fetchone()[0] == "on"
        pids = [conn.info.backend_pid for conn in conns]
    finally:
        store.close()
    # a server process's statistics reach pg_stat_wal when it exits, at the latest
    deadline = time.monotonic() + 30
    while admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchone()[0]:
        assert time.monotonic() < deadline, "the backend's connections did not close"
        time.sleep(0.05)
    flushes = _wal_flushes(admin) - before
    admin.close()
    if synchronous_commit is None:
        assert flushes >= 2 * pairs, flushes
    else:
        assert flushes < pairs // 2, flushes


def test_postgres_synchronous_commit_values_are_postgres_own(postgres_dsn: str) -> None:
    for value in ("on", "off", "local", "remote_write", "remote_apply"):
        store = PostgresBackend(postgres_dsn, table=f"rt_{uuid.uuid4().hex[:8]}", synchronous_commit=value)
        try:
            claim = store.claim("k", lease=30)
            store.complete("k", claim.fence, value, ttl=60)
            assert store.claim("k", lease=30).result == value
            assert store.incr("n", 2) == 2 and store.release("k", claim.fence) is False
        finally:
            store.close()
    for bad in ("", "OFF; DROP TABLE x", "false", True):
        with pytest.raises(ValueError, match="synchronous_commit"):
            PostgresBackend(postgres_dsn, synchronous_commit=bad)
