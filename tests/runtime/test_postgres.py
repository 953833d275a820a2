"""What is particular to ``PostgresBackend``, against a real PostgreSQL cluster: every way of
handing it connections, its tables (created on first use, by ``init-postgres``, or refused),
cleanup, lost connections and restarts, fork safety, and text PostgreSQL cannot hold.

The store contract itself is checked by test_conformance.py and test_backends.py.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid

import pytest

from dupguard.runtime import Idempotency, LeaseLost, PostgresBackend, StoreError
from dupguard.runtime.backends.postgres import schema_sql

psycopg = pytest.importorskip("psycopg")


def table() -> str:
    return f"t_{uuid.uuid4().hex[:8]}"


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dupguard.runtime", *args], capture_output=True, text=True, env=env, timeout=60
    )


def roundtrip(store: PostgresBackend, key: str = "k") -> None:
    c = store.claim(key, lease=30, payload="p")
    assert c.acquired
    store.complete(key, c.fence, {"ok": key}, ttl=60)
    assert store.claim(key, lease=30).result == {"ok": key}


def test_importing_the_runtime_does_not_import_psycopg():
    code = (
        "import sys, dupguard.runtime as r\n"
        "r.PostgresBackend, r.Idempotency\n"
        "import dupguard.runtime.conformance, dupguard.runtime.__main__\n"
        "print(sorted(m for m in ('psycopg', 'psycopg_pool', 'libcst') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_kind_of_connection_source(postgres_dsn):
    from psycopg_pool import ConnectionPool

    name = table()
    opened = []

    def factory():
        conn = psycopg.connect(postgres_dsn)  # not autocommit: the backend switches its own
        opened.append(conn)
        return conn

    with PostgresBackend(factory, table=name) as store:
        roundtrip(store, "factory")
        assert opened and all(c.autocommit for c in opened)
    assert all(c.closed for c in opened)  # the backend closes what it opened

    with ConnectionPool(postgres_dsn, min_size=1, max_size=4, kwargs={"autocommit": True}, open=True) as pool:
        store = PostgresBackend(pool, table=name)
        roundtrip(store, "pool")
        assert store.claim("factory", lease=1).result == {"ok": "factory"}  # same tables, same records
        store.close()
        assert not pool.closed  # the pool is the application's

    with ConnectionPool(postgres_dsn, min_size=1, max_size=2, open=True) as pool:  # transactions per statement
        roundtrip(PostgresBackend(pool, table=name), "pool-tx")

    with psycopg.connect(postgres_dsn) as conn:  # one shared connection, not autocommit
        store = PostgresBackend(conn, table=name)
        roundtrip(store, "conn")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # each call committed
        conn.execute("SELECT 1")  # the application opens a transaction on it...
        with pytest.raises(StoreError, match="inside a transaction"):  # ...a claim must not join it
            store.claim("in-tx", lease=1)
        conn.rollback()
        store.close()
        assert not conn.closed

    with pytest.raises(TypeError):
        PostgresBackend(42)
    with pytest.raises(TypeError, match="psycopg.Connection"):
        PostgresBackend(lambda: "not a connection", table=name).claim("x", lease=1)


def test_native_async_connection_and_pool(postgres_dsn):
    from psycopg_pool import AsyncConnectionPool

    name = table()

    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True)
        store = PostgresBackend(conn, table=name)
        with pytest.raises(TypeError, match="async"):  # an async connection belongs to one loop
            store.claim("k", lease=1)
        c = await store.aclaim("k", lease=0.3, payload="p")
        assert c.acquired and (await store.aclaim("k", lease=1)).status == "busy"
        assert await store.arenew("k", c.fence, lease=0.3) == 0.3
        await store.acomplete("k", c.fence, [1], ttl=60)
        assert (await store.aget("k")).result == [1]
        with pytest.raises(LeaseLost):
            await store.arelease("k", c.fence + 1)
        d = await store.aclaim("r", lease=5)
        assert await store.arelease("r", d.fence) is True
        assert await store.aincr("n", 3) == 3
        await conn.close()

        # a shared connection that is not autocommit: concurrent calls take turns
        tx = await psycopg.AsyncConnection.connect(postgres_dsn)
        tstore = PostgresBackend(tx, table=name)
        claims = await asyncio.gather(*(tstore.aclaim(f"tx{i}", lease=5) for i in range(8)))
        assert all(c.acquired for c in claims)
        await asyncio.gather(*(tstore.acomplete(f"tx{i}", c.fence, i, ttl=60) for i, c in enumerate(claims)))
        assert [(await tstore.aget(f"tx{i}")).result for i in range(8)] == list(range(8))
        assert tx.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        await tx.close()

        async with AsyncConnectionPool(postgres_dsn, min_size=1, max_size=4, open=False) as pool:
            pstore = PostgresBackend(pool, table=name)
            assert (await pstore.aclaim("k", lease=1)).result == [1]
            runs = []

            async def work() -> str:
                runs.append(1)
                await asyncio.sleep(0.45)  # longer than the lease: the native heartbeat renews
                return "done"

            idem = Idempotency(pstore, lease=0.3, on_in_progress="wait")
            results = await asyncio.gather(*(idem.arun("job", work) for _ in range(5)))
            assert results == ["done"] * 5 and runs == [1]
            await pstore.acomplete("late", 1, "x", ttl=0.01)
            await asyncio.sleep(0.05)
            assert await pstore.acleanup() >= 1

    asyncio.run(main())


def test_tables_created_on_first_use_by_init_or_refused(postgres_server):
    dsn, name = postgres_server.dsn, table()
    missing = PostgresBackend(dsn, table=name, create=False)
    with pytest.raises(StoreError, match="init-postgres"):
        missing.claim("k", lease=1)

    out = cli("init-postgres", dsn, "--table", name)
    assert out.returncode == 0, out.stderr
    assert cli("init-postgres", dsn, "--table", name).returncode == 0  # idempotent
    roundtrip(missing, "after-init")  # the same object: it looks again on its next call

    # the documented DDL is the one the backend runs
    printed = cli("init-postgres", "--print-sql", "--table", name)
    assert printed.returncode == 0 and printed.stdout == schema_sql(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        cols = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s ORDER BY 1",
            (f"{name}_records",),
        ).fetchall()
        assert cols == [
            ("expires_at", "timestamp with time zone"),
            ("fence", "bigint"),
            ("keep_us", "bigint"),
            ("key", "text"),
            ("owner", "text"),
            ("payload", "text"),
            ("result", "text"),
            ("state", "text"),
            ("taken_from", "bigint"),
        ]
        # an application role that may use the tables but not create any
        conn.execute("DROP ROLE IF EXISTS dupguard_app")
        conn.execute("CREATE ROLE dupguard_app LOGIN")
        conn.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON "{name}_records", "{name}_counters" TO dupguard_app')
    app = dsn.replace("user=postgres", "user=dupguard_app")
    roundtrip(PostgresBackend(app, table=name, create=False), "as-app")
    with pytest.raises(StoreError, match="permission denied"):  # creating is refused, clearly
        PostgresBackend(app, table=table()).claim("k", lease=1)

    # a schema of its own, created with the tables
    schema = f"s_{uuid.uuid4().hex[:6]}"
    roundtrip(PostgresBackend(dsn, table="dupguard", schema=schema), "schema")
    assert cli("cleanup-postgres", dsn, "--table", "dupguard", "--schema", schema).returncode == 0

    for bad in ("", "x" * 49, "a\x00b"):
        with pytest.raises(ValueError):
            PostgresBackend(dsn, table=bad)


OLD_RECORDS = """CREATE TABLE "{name}_records" (
    key text COLLATE "C" PRIMARY KEY, state text NOT NULL, fence bigint NOT NULL,
    expires_at timestamptz NOT NULL, payload text, result text, owner text) WITH (fillfactor = 80);
CREATE TABLE "{name}_counters" (key text COLLATE "C" PRIMARY KEY, value bigint NOT NULL, expires_at timestamptz)"""


def test_tables_of_an_earlier_version_get_the_new_columns(postgres_dsn):
    """Tables made before claims kept abandoned records (no keep_us, taken_from): a backend
    that may create tables adds the columns on first use (init-postgres does too); one that may
    not says to run init-postgres, before anything runs."""
    name = table()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        for statement in OLD_RECORDS.format(name=name).split(";"):
            conn.execute(statement)
        conn.execute(
            f"""INSERT INTO "{name}_records" VALUES ('old', 'done', 7, now() + interval '1 hour', NULL, '"kept"', NULL)"""
        )
    with pytest.raises(StoreError, match="init-postgres"):
        PostgresBackend(postgres_dsn, table=name, create=False).claim("k", lease=1)
    store = PostgresBackend(postgres_dsn, table=name)
    assert store.claim("old", lease=30).result == "kept"
    first = store.claim("k", lease=0.05, keep=30)
    time.sleep(0.1)
    assert store.claim("k", lease=30).expired_holder == first.fence
    assert PostgresBackend(postgres_dsn, table=name, create=False).claim("old", lease=1).status == "done"


def test_cleanup_deletes_only_expired_rows_and_fences_keep_rising(postgres_dsn):
    store = PostgresBackend(postgres_dsn, table=table(), sweep_every=0)
    fences = {}
    for i in range(30):
        c = store.claim(f"old{i}", lease=30)
        store.complete(f"old{i}", c.fence, i, ttl=0.05)
        fences[f"old{i}"] = c.fence
    released = store.claim("released", lease=30)
    store.release("released", released.fence)
    live = store.claim("live", lease=30)
    abandoned = store.claim("abandoned", lease=0.05, keep=30)  # its holder never finished: kept
    store.claim("not kept", lease=0.05)
    store.incr("window", ttl=0.05)
    store.incr("forever")
    time.sleep(0.1)
    assert store.cleanup(batch=7) == 30 + 1 + 1 + 1  # in batches of 7, until none is left
    assert store.cleanup() == 0
    seen = store.claim("abandoned", lease=30, take_abandoned=False)
    assert seen.status == "abandoned" and seen.fence == abandoned.fence
    assert store.get("live").fence == live.fence and store.incr("forever") == 2
    again = store.claim("old3", lease=30)
    assert again.acquired and again.fence > fences["old3"]  # seeded from the server's clock

    # the automatic sweep: a batch every `sweep_every` claims
    auto = PostgresBackend(postgres_dsn, table=table(), sweep_every=5)
    for i in range(4):
        c = auto.claim(f"x{i}", lease=30)
        auto.complete(f"x{i}", c.fence, i, ttl=0.01)
    time.sleep(0.05)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        count = f'SELECT count(*) FROM "{auto.table}_records"'
        assert conn.execute(count).fetchone()[0] == 4
        auto.claim("fifth", lease=30)
        assert conn.execute(count).fetchone()[0] == 1


def test_lost_connections_raise_store_error_and_are_replaced(postgres_dsn, free_port_dsn):
    store = PostgresBackend(postgres_dsn, table=table())
    roundtrip(store, "a")
    # the server ends every connection of ours (an administrator, a failover, a restart)
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND datname = 'postgres' AND backend_type = 'client backend'"
        ).fetchone()[0]
    assert killed >= 1
    time.sleep(0.05)
    roundtrip(store, "b")  # the dead idle connection was noticed before use and replaced

    down = PostgresBackend(free_port_dsn, table=table(), connect_timeout=1)
    for call in (
        lambda: down.claim("k", lease=1),
        lambda: down.get("k"),
        lambda: asyncio.run(down.aclaim("k", lease=1)),
    ):
        with pytest.raises(StoreError) as info:
            call()
        assert info.value.retryable and not isinstance(info.value, psycopg.Error)
        assert "password" not in repr(down)
    ran = []
    with pytest.raises(StoreError) as info:
        Idempotency(down).run("k", lambda: ran.append(1))
    assert info.value.executed is False and ran == []


@pytest.fixture
def free_port_dsn():
    from pgserver import free_port

    return f"host=127.0.0.1 port={free_port()} user=nobody password=secret dbname=x"


def test_restart_the_first_call_after_it_succeeds_and_nothing_runs_twice(make_postgres_server):
    server = make_postgres_server()
    store = PostgresBackend(server.dsn, table="restart")
    idem = Idempotency(store, lease=5)
    runs = []
    assert idem.run("before", lambda: runs.append("before") or "b") == "b"
    held = store.claim("held", lease=30)
    server.kill()  # the store's idle connection is dead now; nothing has used it yet
    server.start()
    # no warm-up: the connections the crash closed are replaced before they are used
    assert idem.run("before", lambda: runs.append("again") or "x") == "b"
    assert store.claim("held", lease=30).status == "busy"
    store.complete("held", held.fence, "after", ttl=60)
    assert store.claim("held", lease=30).result == "after"
    assert runs == ["before"]


def test_a_forked_child_uses_its_own_connections(postgres_dsn, tmp_path):
    store = PostgresBackend(postgres_dsn, table=table())
    roundtrip(store, "parent")  # the parent has an idle connection now
    pid = os.fork()
    if pid == 0:  # the child: same object, must not touch the parent's socket
        code = 1
        try:
            c = store.claim("child", lease=30)
            store.complete("child", c.fence, "from child", ttl=60)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.get("child").result == "from child"  # and the parent's connection still works
    roundtrip(store, "parent-again")


def test_text_postgres_cannot_hold_is_refused_before_the_store_changes(postgres_dsn):
    store = PostgresBackend(postgres_dsn, table=table())
    for key in ("nul\x00key", "lone\ud800surrogate"):
        with pytest.raises(ValueError, match="key"):
            store.claim(key, lease=1)
    c = store.claim("k", lease=30)
    with pytest.raises(TypeError):  # not JSON: refused before the store changes
        store.complete("k", c.fence, object(), ttl=60)
    assert store.get("k").state == "pending"
    # a lone surrogate and a NUL are escaped by the shared encoding and replay unchanged
    store.complete("k", c.fence, "nul \x00 and \udcff", ttl=60)
    assert store.get("k").result == "nul \x00 and \udcff"
    # keys are compared byte for byte (COLLATE "C"): no two keys are ever the same record
    for key in ("Key", "key", "ke\u0301y", "k\u00e9y", "key "):
        assert store.claim(key, lease=30).acquired, key


def test_leases_are_measured_on_the_server_clock(postgres_dsn):
    """A client whose session time zone differs reads the same remaining time: the backend
    never compares the server's timestamps with the client's clock."""
    name = table()
    here = PostgresBackend(postgres_dsn, table=name)
    c = here.claim("k", lease=30)

    def tokyo():
        conn = psycopg.connect(postgres_dsn, autocommit=True)
        conn.execute("SET TIME ZONE 'Asia/Tokyo'")
        return conn

    there = PostgresBackend(tokyo, table=name)
    busy = there.claim("k", lease=30)
    assert busy.status == "busy" and busy.fence == c.fence and 25 < busy.remaining <= 30
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        server_us = conn.execute("SELECT (extract(epoch FROM statement_timestamp()) * 1000000)::bigint").fetchone()[0]
    assert abs(c.fence - server_us) < 60 * 1_000_000  # fences are seeded from the server's clock
