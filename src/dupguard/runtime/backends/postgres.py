"""``PostgresBackend``: records in a PostgreSQL table, shared by processes on many hosts.

The store contract (:mod:`dupguard.runtime.backends`) in one table of the database a service
usually already runs. Every operation is **one SQL statement** in its own transaction:

``claim``
    a statement whose ``INSERT … ON CONFLICT (key) DO UPDATE … WHERE <the record is free>
    RETURNING`` takes the key (returning only the fence: the caller knows the lease it asked
    for and its payload), and whose snapshot read of the same row answers ``done`` or ``busy``
    when it does not (a live record is not written at all, so replaying a completed key is a
    plain read). PostgreSQL checks the ``ON CONFLICT`` condition on the newest committed
    version of the row, under its row lock: two claimants never both win. If the
    row changed between the statement's snapshot and its insert (another claimant committed
    in between), the statement returns nothing and is simply run again.
``complete`` / ``renew`` / ``release``
    one ``INSERT … ON CONFLICT … DO UPDATE … WHERE`` (``UPDATE … WHERE`` for release) that
    only lands when the record is free or still pending under the caller's fence (its row
    count says whether it did; nothing is read back); when it does not land, a second read
    tells a retried completion (our own ``done``) from a fenced-out owner (``LeaseLost``).
    That second statement is only ever needed on those rare paths.

Times are the **server's clock** (``statement_timestamp()``): lease ends and fences are
measured on the database host, never on the callers' clocks. Fences are seeded from it in µs,
like every backend's. The tables are created on first use (``CREATE TABLE IF NOT EXISTS``
under an advisory lock, so many processes starting at once do not collide), or beforehand by
``python -m dupguard.runtime init-postgres DSN`` for a role that may not create tables
(``create=False`` then only checks they exist). :func:`schema_sql` returns the DDL.

Durability is PostgreSQL's: a claim or completion that returned has been committed (with the
server's default ``synchronous_commit = on`` it survives a crash of the server), and one that
raised ``StoreError`` because the server died was either committed (the record is pending and
its lease runs out) or not made at all. A restarted server therefore never forgets a completed
key and never hands out a claim twice. ``synchronous_commit="off"`` is the user's choice to
answer before the WAL flush (each write statement calls ``set_config('synchronous_commit',
'off', true)``, local to its own transaction, so no extra round trip and no connection left
changed): a crash of the *server* can then forget the claims and completions of its last few
hundred milliseconds, and those keys can run again; a crash of a client loses nothing.

Expired rows are not needed (fences are seeded from the clock), and are deleted in small
batches every ``sweep_every`` claims, or all at once by :meth:`PostgresBackend.cleanup` /
``python -m dupguard.runtime cleanup-postgres DSN`` (from cron, for instance).

Connections: ``PostgresBackend`` takes

* a DSN (``"postgresql://user@host/db"`` or ``"host=… dbname=…"``): the backend opens
  autocommit connections itself and keeps up to ``max_idle`` of them between calls, each with
  one cursor for its whole life (a call creates none); each thread takes one for the length of
  a call, so any number of threads can share the backend;
* a connection factory (any callable returning a new ``psycopg.Connection``), used the same
  way, for connections the application configures (SSL, ``prepare_threshold=None`` behind
  PgBouncer, …);
* a ``psycopg_pool.ConnectionPool``: each call borrows a connection and gives it back;
* a ``psycopg.Connection``, shared by every call (one at a time);
* a ``psycopg.AsyncConnection`` or ``psycopg_pool.AsyncConnectionPool``: the async methods
  are native and the sync ones raise ``TypeError`` (an async connection belongs to one loop).

With anything but an async connection or pool the async methods run the sync ones in worker
threads, which works from any number of event loops. Connections the backend did not open are
used as they come: in autocommit mode one call is one round trip; otherwise each statement is
wrapped in its own transaction (``BEGIN``/``COMMIT``: three), and a connection found inside a
transaction of the application's is refused, because a claim must commit on its own.

Every driver error — connection refused or lost, a statement timeout, a missing table —
raises ``StoreError``. A connection the server closed (a restart) is noticed before it is
reused and replaced, so the first call after a restart does not fail on it.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import secrets
import select
import threading
from collections.abc import Generator
from typing import Any

from ..errors import StoreError
from . import (
    Backend,
    Claim,
    Record,
    _seconds,
    check_key,
    check_payload,
    decode_result,
    duration_us,
    encode_result,
    keep_us,
    lease_lost,
)

__all__ = ["PostgresBackend", "schema_sql"]

DEFAULT_TABLE = "dupguard"

# the values PostgreSQL accepts for synchronous_commit (PostgresBackend(synchronous_commit=...))
SYNCHRONOUS_COMMIT = ("on", "off", "local", "remote_write", "remote_apply")

# statement_timestamp(): the server's clock, fixed for the whole statement (now() would be the
# start of an enclosing transaction, and clock_timestamp() moves while the statement runs)
_NOW = "statement_timestamp()"
_NOW_US = f"(extract(epoch FROM {_NOW}) * 1000000)::bigint"
_RELEASED = "'epoch'::timestamptz"  # the end of a released record: long past


# a new value in every forked child, so a backend notices it was forked without a getpid()
# system call per call (the connections it opened in the parent are not the child's to use)
_forks = 0


def _forked() -> None:
    global _forks
    _forks += 1


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork
    os.register_at_fork(after_in_child=_forked)


def _remaining(column: str) -> str:
    return f"(extract(epoch FROM ({column} - {_NOW})) * 1000000)::bigint"


def _kept_end(table: str) -> str:
    """When a row stops being kept: its end plus its keep (only pending rows are kept longer)."""
    prefix = f"{table}." if table else ""
    return f"({prefix}expires_at + {prefix}keep_us * interval '1 microsecond')"


def _abandoned(table: str) -> str:
    """The row's holder let its lease run out without completing or releasing, and it is still kept."""
    return f"({table}.state = 'pending' AND {table}.expires_at <= {_NOW} AND {_kept_end(table)} > {_NOW})"


def _sweep(table: str, condition: str) -> str:
    return f"""
WITH gone AS (
    DELETE FROM {table} WHERE {condition} AND ctid = ANY(ARRAY(
        SELECT ctid FROM {table} WHERE {condition} LIMIT %s::bigint))
    RETURNING 1
) SELECT count(*) FROM gone
"""


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _check_name(what: str, name: str) -> None:
    # PostgreSQL truncates identifiers to 63 bytes; "<table>_counters" must survive intact
    if not isinstance(name, str) or not name or "\x00" in name or len(name.encode("utf-8")) > 48:
        raise ValueError(f"{what} must be a non-empty name of at most 48 bytes without NUL, not {name!r}")


class _Names:
    """The quoted, optionally schema-qualified names of the two tables."""

    def __init__(self, table: str, schema: str | None) -> None:
        _check_name("table", table)
        if schema is not None:
            _check_name("schema", schema)
        self.table, self.schema = table, schema
        prefix = f"{_ident(schema)}." if schema is not None else ""
        self.records = prefix + _ident(f"{table}_records")
        self.counters = prefix + _ident(f"{table}_counters")
        digest = hashlib.sha256(f"dupguard:{schema}:{table}".encode()).digest()
        self.lock_id = int.from_bytes(digest[:8], "big", signed=True)  # pg_advisory_xact_lock(bigint)


def schema_sql(table: str = DEFAULT_TABLE, schema: str | None = None) -> str:
    """The DDL ``PostgresBackend`` runs on first use (idempotent: ``IF NOT EXISTS``)."""
    n = _Names(table, schema)
    create_schema = f"CREATE SCHEMA IF NOT EXISTS {_ident(schema)};\n" if schema is not None else ""
    return f"""{create_schema}CREATE TABLE IF NOT EXISTS {n.records} (
    key        text COLLATE "C" PRIMARY KEY,
    state      text        NOT NULL,  -- 'pending' | 'done' | 'released'
    fence      bigint      NOT NULL,  -- the holder's fencing token (µs-seeded, rises per key)
    expires_at timestamptz NOT NULL,  -- end of the lease (pending) or of the result (done)
    payload    text,                  -- hash of the payload the key was claimed with
    result     text,                  -- the JSON result (done)
    owner      text,                  -- token of the claim call
    keep_us    bigint      NOT NULL DEFAULT 0,  -- µs a pending row outlives its lease (the claim's keep)
    taken_from bigint                 -- fence of the abandoned holder the claim took the key from
) WITH (fillfactor = 80);
ALTER TABLE {n.records} ADD COLUMN IF NOT EXISTS keep_us bigint NOT NULL DEFAULT 0;
ALTER TABLE {n.records} ADD COLUMN IF NOT EXISTS taken_from bigint;
CREATE TABLE IF NOT EXISTS {n.counters} (
    key        text COLLATE "C" PRIMARY KEY,
    value      bigint      NOT NULL,
    expires_at timestamptz            -- NULL: never
);
"""


class _Queries:
    """Every statement, for one pair of tables.

    Parameters are positional (``%s``, in the order each operation passes them). ``sync`` is
    the backend's ``synchronous_commit``: ``None`` leaves the statements as they are (the
    server's setting decides); a value makes every write statement call
    ``set_config('synchronous_commit', <value>, true)`` itself. ``is_local = true`` scopes the
    setting to the statement's own transaction, which commits right after it: a connection
    borrowed from the application's pool is never left changed, and no extra round trip is
    needed (a ``SET LOCAL`` would need its own ``BEGIN``/``COMMIT``).
    """

    def __init__(self, n: _Names, sync: str | None = None) -> None:
        rec, ctr = n.records, n.counters
        # the tables, and the columns added since the first release (ALTER … IF NOT EXISTS adds them)
        self.exists = (
            "SELECT to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL AND "
            "(SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(%s) "
            "AND attname IN ('keep_us', 'taken_from') AND NOT attisdropped) = 2"
        )
        self.exists_params = (rec, ctr, rec)
        # one statement (a DO block is one implicit transaction): the advisory lock keeps
        # processes that create the tables at the same moment from colliding in pg_type
        ddl = schema_sql(n.table, n.schema)
        self.create = f"DO $dupguard$ BEGIN PERFORM pg_advisory_xact_lock({n.lock_id});\n{ddl}END $dupguard$"
        # a write's source row: VALUES by default; with a synchronous_commit of the backend's
        # own, the one row of the CTE that sets it, so the setting is applied before the write
        cfg = f"cfg AS (SELECT set_config('synchronous_commit', '{sync}', true))" if sync else ""
        with_cfg = f"WITH {cfg}\n" if sync else ""

        def row(*values: str) -> str:
            return f"SELECT {', '.join(values)} FROM cfg" if sync else f"VALUES ({', '.join(values)})"

        lease_end = f"{_NOW} + %s::bigint * interval '1 microsecond'"
        # the claim's snapshot (cur) and the newest row version (r, under its lock) alike
        cur_abandoned, r_abandoned = _abandoned("cur"), _abandoned("r")
        # claim (key, key, lease µs, payload, token, keep µs, report, report). A free key (or one
        # whose holder abandoned it, unless `report` asks to be told instead) is taken by the
        # INSERT, which returns only the fence and the abandoned holder's fence: the caller
        # knows the rest (the lease it asked for, its own payload). A live record is not written
        # at all and comes back from the snapshot read with what the caller needs to answer
        # done, busy or abandoned. Rows: (fence, NULL, …, taken_from) when taken; (fence,
        # state, remaining µs, live, payload, result, keep µs, abandoned, NULL) otherwise; none
        # when the row changed between the snapshot and the insert (run the statement again).
        self.claim = f"""
WITH {cfg + ", " if sync else ""}cur AS (
    SELECT state, fence, expires_at, payload, result, keep_us FROM {rec} WHERE key = %s
), ins AS (
    INSERT INTO {rec} AS r (key, state, fence, expires_at, payload, result, owner, keep_us, taken_from)
    SELECT %s, 'pending', {_NOW_US}, {lease_end}, %s::text, NULL, %s::text, %s::bigint, NULL{" FROM cfg" if sync else ""}
    WHERE NOT EXISTS (
        SELECT 1 FROM cur WHERE cur.expires_at > {_NOW} OR (%s::boolean AND {cur_abandoned}))
    ON CONFLICT (key) DO UPDATE SET
        state = 'pending', fence = greatest(r.fence + 1, excluded.fence), expires_at = excluded.expires_at,
        payload = excluded.payload, result = NULL, owner = excluded.owner, keep_us = excluded.keep_us,
        taken_from = CASE WHEN {r_abandoned} THEN r.fence END
    WHERE r.expires_at <= {_NOW} AND NOT (%s::boolean AND {r_abandoned})
    RETURNING r.fence, r.taken_from
)
SELECT fence, NULL::text, NULL::bigint, NULL::boolean, NULL::text, NULL::text, NULL::bigint, NULL::boolean, taken_from
FROM ins
UNION ALL
SELECT fence, state, {_remaining("expires_at")}, expires_at > {_NOW}, payload, result, keep_us, {cur_abandoned},
       NULL::bigint
FROM cur
WHERE NOT EXISTS (SELECT 1 FROM ins)
"""
        # complete (key, fence, ttl µs, result) / renew (key, fence, lease µs) land when the
        # record is free, or pending under the caller's fence; the row count says whether they did
        ok = f"r.expires_at <= {_NOW} OR (r.state = 'pending' AND r.fence = excluded.fence)"
        self.complete = f"""{with_cfg}
INSERT INTO {rec} AS r (key, state, fence, expires_at, payload, result, owner)
{row("%s", "'done'", "%s::bigint", lease_end, "NULL", "%s::text", "NULL")}
ON CONFLICT (key) DO UPDATE SET
    state = 'done', payload = CASE WHEN r.fence = excluded.fence THEN r.payload END,
    fence = excluded.fence, expires_at = excluded.expires_at, result = excluded.result, owner = NULL
WHERE {ok}
"""
        self.renew = f"""{with_cfg}
INSERT INTO {rec} AS r (key, state, fence, expires_at, payload, result, owner)
{row("%s", "'pending'", "%s::bigint", lease_end, "NULL", "NULL", "NULL")}
ON CONFLICT (key) DO UPDATE SET
    state = 'pending', payload = CASE WHEN r.fence = excluded.fence THEN r.payload END,
    owner = CASE WHEN r.fence = excluded.fence THEN r.owner END,
    keep_us = CASE WHEN r.state = 'pending' AND r.fence = excluded.fence THEN r.keep_us ELSE 0 END,
    fence = excluded.fence, expires_at = excluded.expires_at, result = NULL
WHERE {ok}
"""
        # release (key, fence): a released record keeps its fence (the floor for the next
        # claim) and ends long ago
        self.release = f"""{with_cfg}
UPDATE {rec} SET state = 'released', expires_at = {_RELEASED}, owner = NULL{" FROM cfg" if sync else ""}
WHERE key = %s AND state = 'pending' AND fence = %s::bigint
"""
        # get (key)
        self.get = f"""
SELECT state, fence, {_remaining("expires_at")}, expires_at > {_NOW}, payload, result
FROM {rec} WHERE key = %s
"""
        # incr (key, amount, ttl µs or NULL)
        self.incr = f"""{with_cfg}
INSERT INTO {ctr} AS c (key, value, expires_at)
{row("%s", "%s::bigint", f"{_NOW} + %s::bigint * interval '1 microsecond'")}
ON CONFLICT (key) DO UPDATE SET
    value = CASE WHEN c.expires_at <= {_NOW} THEN excluded.value ELSE c.value + excluded.value END,
    expires_at = CASE WHEN c.expires_at <= {_NOW} THEN excluded.expires_at ELSE c.expires_at END
RETURNING value
"""
        # expired rows, a batch at a time (limit); the outer condition is checked again on the
        # newest row version, so a row taken over meanwhile is never deleted. A pending row is
        # kept for its keep_us after its lease (an abandoned claim the next claimant must see)
        gone = f"expires_at <= {_NOW} AND (state <> 'pending' OR {_kept_end('')} <= {_NOW})"
        self.sweep_records = _sweep(rec, gone)
        self.sweep_counters = _sweep(ctr, f"expires_at <= {_NOW}")


# an operation yields (sql, params, rows): rows=True receives the rows, False the row count
Op = Generator[tuple[str, Any, bool], Any, Any]

_MAX_RETRIES = 100  # a statement that keeps meeting concurrent commits (never seen in practice)


class PostgresBackend(Backend):
    """A store in PostgreSQL: one statement per operation, the server's clock, fencing.

    ``target``: a DSN, a connection factory, a ``psycopg_pool.ConnectionPool``, a
    ``psycopg.Connection``, or their async counterparts (see the module's documentation).
    ``table``/``schema`` name the tables (``<table>_records``, ``<table>_counters``);
    ``create=False`` never creates them (they must exist: ``init-postgres``).
    ``connect_timeout`` and ``statement_timeout`` (seconds) apply to the connections the
    backend opens from a DSN; ``max_idle`` is how many of those it keeps open between calls.
    ``sweep_every`` is the number of claims between two deletions of a batch of expired rows
    (0: never; run :meth:`cleanup` yourself). ``synchronous_commit`` (``None``: the server's
    setting, durable by default) sets PostgreSQL's ``synchronous_commit`` for the backend's
    own writes, on every kind of connection: ``"off"`` answers before the WAL flush, so a
    crash of the *server* can forget the last claims and completions (docs/runtime.md).
    """

    def __init__(
        self,
        target: Any,
        *,
        table: str = DEFAULT_TABLE,
        schema: str | None = None,
        create: bool = True,
        connect_timeout: float = 5.0,
        statement_timeout: float | None = 10.0,
        max_idle: int = 32,
        sweep_every: int = 10_000,
        synchronous_commit: str | None = None,
    ) -> None:
        if synchronous_commit is not None and synchronous_commit not in SYNCHRONOUS_COMMIT:
            raise ValueError(
                f"synchronous_commit must be None (the server's setting) or one of "
                f"{', '.join(SYNCHRONOUS_COMMIT)}, not {synchronous_commit!r}"
            )
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
            raise ImportError("PostgresBackend needs psycopg 3: pip install 'dupguard[postgres]'") from exc
        self._psycopg = psycopg
        self._names = _Names(table, schema)
        self._q = _Queries(self._names, synchronous_commit)
        self.table, self.schema, self.create = table, schema, create
        self.synchronous_commit = synchronous_commit
        self.connect_timeout = connect_timeout
        self.statement_timeout = statement_timeout
        self.max_idle = max_idle
        self.sweep_every = sweep_every
        self._ready = False
        self._ready_lock = threading.Lock()
        self._closed = False
        self._claims = 0
        # the owner column's claim tokens: a random prefix per process and backend, then a count
        # (os.urandom per claim would be a system call per claim; the token is for people
        # reading the table, nothing compares it)
        self._tokens = itertools.count()
        self._token_prefix, self._token_forks = "", -1
        # the connection source: exactly one of these is set
        self._conninfo: str | None = None
        self._factory: Any = None
        self._pool: Any = None
        self._conn: Any = None
        self._async: Any = None  # an AsyncConnection or AsyncConnectionPool
        self._idle: list = []
        self._idle_lock = threading.Lock()
        self._conn_lock = threading.Lock()
        self._conn_cur: Any = None  # the cursor on a shared psycopg.Connection
        self._alock: asyncio.Lock | None = None  # created on the async connection's loop
        self._forks = _forks
        psycopg_pool: Any
        try:
            import psycopg_pool
        except ImportError:
            psycopg_pool = None
        where = f"{self._names.records}"
        if isinstance(target, str):
            self._conninfo = target
            self.channel = f"postgres:{target}:{where}"
        elif isinstance(target, psycopg.Connection):
            self._conn = target
            self.channel = f"postgres:{id(target)}:{where}"
        elif isinstance(target, psycopg.AsyncConnection):
            self._async = target
            self.channel = f"postgres:{id(target)}:{where}"
        elif psycopg_pool is not None and isinstance(target, psycopg_pool.ConnectionPool):
            self._pool = target
            self.channel = f"postgres:{id(target)}:{where}"
        elif psycopg_pool is not None and isinstance(target, psycopg_pool.AsyncConnectionPool):
            self._async = target
            self.channel = f"postgres:{id(target)}:{where}"
        elif callable(target):
            self._factory = target
            self.channel = f"postgres:{id(target)}:{where}"
        else:
            raise TypeError(
                "PostgresBackend needs a DSN, a connection factory, a psycopg connection or a "
                f"psycopg_pool pool, not {type(target).__name__}"
            )

    def __repr__(self) -> str:  # never the DSN: it may hold a password
        return f"PostgresBackend(table={self.table!r}, schema={self.schema!r})"

    # ------------------------------------------------------------------ connections
    def _owned(self) -> bool:
        return self._conninfo is not None or self._factory is not None

    def _open(self) -> Any:
        psycopg = self._psycopg
        if self._factory is not None:
            conn = self._factory()
            if not isinstance(conn, psycopg.Connection):
                raise TypeError(f"the connection factory returned {type(conn).__name__}, not a psycopg.Connection")
            if not conn.autocommit and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                conn.autocommit = True  # ours now: one round trip per statement
            return conn
        conn = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=max(1, round(self.connect_timeout)))
        if self.statement_timeout:
            conn.execute(f"SET statement_timeout = {max(1, int(self.statement_timeout * 1000))}")
        return conn

    @staticmethod
    def _hung_up(conn: Any) -> bool:
        """True when an idle connection has something to read: the server closed it (a
        restart, ``pg_terminate_backend``) or is about to. One ``poll`` with no wait."""
        if conn.closed or conn.broken:
            return True
        try:
            poller = select.poll()
            poller.register(conn.fileno(), select.POLLIN)
            return bool(poller.poll(0))
        except (OSError, ValueError, AttributeError):  # pragma: no cover - platform without poll
            return False

    def _take(self) -> Any:
        """A cursor on a connection for one call: the connection is ``cursor.connection``.

        The connections the backend opens keep one cursor each for their whole life (a call
        creates no cursor); a borrowed pool connection gets a new one per call."""
        if self._closed:
            raise StoreError("PostgresBackend is closed")
        if self._conn is not None:
            self._conn_lock.acquire()
            try:
                if self._conn_cur is None:
                    self._conn_cur = self._conn.cursor()
            except BaseException:
                self._conn_lock.release()
                raise
            return self._conn_cur
        if self._pool is not None:
            conn = self._pool.getconn()
            try:
                return conn.cursor()
            except BaseException:
                self._pool.putconn(conn)
                raise
        if self._async is not None:
            raise TypeError(
                "this PostgresBackend wraps an async connection or pool: use the async methods "
                "(aclaim, acomplete, …) or give it a DSN, a connection or a pool"
            )
        with self._idle_lock:
            if self._forks != _forks:  # a forked child: the parent's sockets are not ours to use
                self._idle, self._forks = [], _forks  # (psycopg does not close them on collection)
            while self._idle:
                cur = self._idle.pop()
                if not self._hung_up(cur.connection):
                    return cur
                cur.connection.close()
        return self._open().cursor()

    def _give(self, cur: Any) -> None:
        if self._conn is not None:
            self._conn_lock.release()
            return
        conn = cur.connection
        if self._pool is not None:
            self._pool.putconn(conn)  # the pool discards broken connections itself
            return
        if conn.closed or conn.broken or self._closed or self._forks != _forks:
            if not conn.closed and self._forks == _forks:
                conn.close()
            return
        with self._idle_lock:
            if len(self._idle) < self.max_idle:
                self._idle.append(cur)
                return
        conn.close()

    def close(self) -> None:
        self._closed = True
        with self._idle_lock:
            idle, self._idle = self._idle, []
        if self._forks == _forks:
            for cur in idle:
                cur.connection.close()

    # ------------------------------------------------------------------ execution
    def _fail(self, what: str, exc: BaseException, key: str | None) -> StoreError:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        return StoreError(f"postgres {what}{'' if key is None else f' of {key!r}'} failed: {detail}")

    def _statement(self, cur: Any, sql: str, params: Any, rows: bool) -> Any:
        conn = cur.connection
        if conn.autocommit:
            cur.execute(sql, params)
        else:
            if conn.info.transaction_status != self._psycopg.pq.TransactionStatus.IDLE:
                raise StoreError(
                    "PostgresBackend was given a connection inside a transaction: its records must "
                    "commit on their own (use an autocommit connection or a pool)"
                )
            with conn.transaction():
                cur.execute(sql, params)
        return cur.fetchall() if rows else cur.rowcount

    def _run(self, what: str, op: Op, *, key: str | None = None, ensure: bool = True) -> Any:
        cur = None
        try:
            cur = self._take()
            if ensure and not self._ready:
                self._drive(cur, self._ensure())
            return self._drive(cur, op)
        except self._psycopg.Error as exc:
            raise self._fail(what, exc, key) from exc
        finally:
            if cur is not None:
                self._give(cur)

    def _drive(self, cur: Any, op: Op) -> Any:
        try:
            step = next(op)
            while True:
                step = op.send(self._statement(cur, *step))
        except StopIteration as done:
            return done.value

    async def _arun(self, what: str, op: Op, *, key: str | None = None) -> Any:
        psycopg = self._psycopg
        if self._closed:
            raise StoreError("PostgresBackend is closed")
        if not isinstance(self._async, psycopg.AsyncConnection):  # a pool: borrow, give back
            conn = None
            try:
                conn = await self._async.getconn()
                return await self._aops(conn, op)
            except psycopg.Error as exc:
                raise self._fail(what, exc, key) from exc
            finally:
                if conn is not None:
                    await self._async.putconn(conn)
        # one shared connection: one call at a time (a call may be two statements, and a
        # connection that is not autocommit wraps each in a transaction of its own)
        if self._alock is None:
            self._alock = asyncio.Lock()
        async with self._alock:
            try:
                return await self._aops(self._async, op)
            except psycopg.Error as exc:
                raise self._fail(what, exc, key) from exc

    async def _aops(self, conn: Any, op: Op) -> Any:
        cur = conn.cursor()
        if not self._ready:
            await self._adrive(cur, self._ensure())
        return await self._adrive(cur, op)

    async def _adrive(self, cur: Any, op: Op) -> Any:
        psycopg = self._psycopg
        conn = cur.connection
        try:
            sql, params, rows = next(op)
            while True:
                if conn.autocommit:
                    await cur.execute(sql, params)
                else:
                    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                        raise StoreError("PostgresBackend was given a connection inside a transaction")
                    async with conn.transaction():
                        await cur.execute(sql, params)
                sql, params, rows = op.send(await cur.fetchall() if rows else cur.rowcount)
        except StopIteration as done:
            return done.value

    # ------------------------------------------------------------------ operations
    # Each operation is a generator: it yields (sql, params, rows) and receives the rows (or,
    # for rows=False, the row count), so the sync and the async drivers run the very same logic.
    def _ensure(self) -> Op:
        (ok,) = (yield self._q.exists, self._q.exists_params, True)[0]
        if not ok:
            if not self.create:
                raise StoreError(
                    f"table {self._names.records} or {self._names.counters} does not exist: create them with "
                    "`python -m dupguard.runtime init-postgres DSN` (or let PostgresBackend(create=True) do it)"
                )
            yield self._q.create, None, False
        self._ready = True

    def _create_op(self) -> Op:
        yield self._q.create, None, False
        self._ready = True

    def _claim_op(self, key: str, lease: float, payload: str | None, keep: float, take_abandoned: bool) -> Op:
        lease_us = duration_us(lease, "lease")
        if self._token_forks != _forks:
            self._token_prefix, self._token_forks = secrets.token_hex(6) + ".", _forks
        token = f"{self._token_prefix}{next(self._tokens)}"
        report = not take_abandoned
        params = (key, key, lease_us, payload, token, keep_us(keep), report, report)
        for _ in range(_MAX_RETRIES):
            rows = yield self._q.claim, params, True
            if rows:
                fence, state, remaining, live, stored_payload, result, kept, abandoned, taken_from = rows[0]
                if state is None:  # ours: the lease we asked for, from the server's clock, with our payload
                    return Claim("acquired", fence, _seconds(lease_us), payload, expired_holder=taken_from)
                if live and state == "done":
                    return Claim("done", fence, _seconds(remaining), stored_payload, decode_result(result))
                if live:
                    return Claim("busy", fence, _seconds(remaining), stored_payload)
                if abandoned and not take_abandoned:
                    return Claim("abandoned", fence, _seconds(remaining + kept), stored_payload)
            # the row changed between the statement's snapshot and its insert: look again
        raise StoreError(f"postgres claim of {key!r} kept meeting concurrent changes")

    def _complete_op(self, key: str, fence: int, text: str, ttl: float) -> Op:
        if (yield self._q.complete, (key, fence, duration_us(ttl, "ttl"), text), False):
            return
        rows = yield self._q.get, (key,), True
        if rows and rows[0][0] == "done" and rows[0][1] == fence:
            return  # already completed under this fence: a retried complete
        raise lease_lost(key, fence, f"{rows[0][0]} under fence {rows[0][1]}" if rows else "gone")

    def _renew_op(self, key: str, fence: int, lease: float) -> Op:
        if (yield self._q.renew, (key, fence, duration_us(lease, "lease")), False):
            return lease
        rows = yield self._q.get, (key,), True
        raise lease_lost(key, fence, f"{rows[0][0]} under fence {rows[0][1]}" if rows else "gone")

    def _release_op(self, key: str, fence: int) -> Op:
        if (yield self._q.release, (key, fence), False):
            return True
        rows = yield self._q.get, (key,), True
        if rows:
            state, got, _remaining_us, live, _payload, _result = rows[0]
            if got != fence and live:
                raise lease_lost(key, fence, f"{state} under fence {got}")
        return False

    def _get_op(self, key: str) -> Op:
        rows = yield self._q.get, (key,), True
        if not rows or not rows[0][3]:
            return None
        state, fence, remaining, _live, payload, result = rows[0]
        return Record(state, fence, _seconds(remaining), payload, decode_result(result))

    def _incr_op(self, key: str, amount: int, ttl: float | None) -> Op:
        ttl_us = None if ttl is None else duration_us(ttl, "ttl")
        ((value,),) = yield self._q.incr, (key, amount, ttl_us), True
        return value

    def _sweep_op(self, limit: int, everything: bool) -> Op:
        total = 0
        for sql in (self._q.sweep_records, self._q.sweep_counters):
            while True:
                ((n,),) = yield sql, (limit,), True
                total += n
                if n < limit or not everything:
                    break
        return total

    def _after_claim(self) -> None:
        self._claims += 1
        if self.sweep_every and self._claims % self.sweep_every == 0:
            self._run("sweep", self._sweep_op(1000, everything=False))

    # ------------------------------------------------------------------ contract
    def claim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        check_key(key)
        payload = check_payload(payload)
        keep_us(keep)  # checked before the store is touched
        claim = self._run("claim", self._claim_op(key, lease, payload, keep, take_abandoned), key=key)
        self._after_claim()
        return claim

    def complete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        check_key(key)
        text = self._result_text(result)
        self._run("complete", self._complete_op(key, fence, text, ttl), key=key)
        self.waiters.notify(key)

    def release(self, key: str, fence: int) -> bool:
        check_key(key)
        released = self._run("release", self._release_op(key, fence), key=key)
        if released:
            self.waiters.notify(key)
        return released

    def renew(self, key: str, fence: int, *, lease: float) -> float:
        check_key(key)
        return self._run("renew", self._renew_op(key, fence, lease), key=key)

    def get(self, key: str) -> Record | None:
        check_key(key)
        return self._run("get", self._get_op(key), key=key)

    def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        check_key(key)
        return self._run("incr", self._incr_op(key, amount, ttl), key=key)

    def create_tables(self) -> None:
        """Create the tables now (``IF NOT EXISTS``), whatever ``create`` says; what
        ``python -m dupguard.runtime init-postgres`` runs."""
        self._run("create tables", self._create_op(), ensure=False)

    def cleanup(self, *, batch: int = 10_000) -> int:
        """Delete every expired record and counter, ``batch`` rows per statement; returns
        how many. Safe while the store is in use: a row taken over meanwhile is kept."""
        return self._run("cleanup", self._sweep_op(batch, everything=True))

    async def acleanup(self, *, batch: int = 10_000) -> int:
        if self._async is None:
            return await asyncio.to_thread(self.cleanup, batch=batch)
        return await self._arun("cleanup", self._sweep_op(batch, everything=True))

    @staticmethod
    def _result_text(result: Any) -> str:
        return encode_result(result)  # TypeError before the store changes; never NUL or a lone surrogate

    # ------------------------------------------------------------------ async
    async def aclaim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        if self._async is None:
            return await super().aclaim(key, lease=lease, payload=payload, keep=keep, take_abandoned=take_abandoned)
        check_key(key)
        payload = check_payload(payload)
        keep_us(keep)
        claim = await self._arun("claim", self._claim_op(key, lease, payload, keep, take_abandoned), key=key)
        self._claims += 1
        if self.sweep_every and self._claims % self.sweep_every == 0:
            await self._arun("sweep", self._sweep_op(1000, everything=False))
        return claim

    async def acomplete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        if self._async is None:
            return await super().acomplete(key, fence, result, ttl=ttl)
        check_key(key)
        text = self._result_text(result)
        await self._arun("complete", self._complete_op(key, fence, text, ttl), key=key)
        self.waiters.notify(key)

    async def arelease(self, key: str, fence: int) -> bool:
        if self._async is None:
            return await super().arelease(key, fence)
        check_key(key)
        released = await self._arun("release", self._release_op(key, fence), key=key)
        if released:
            self.waiters.notify(key)
        return released

    async def arenew(self, key: str, fence: int, *, lease: float) -> float:
        if self._async is None:
            return await super().arenew(key, fence, lease=lease)
        check_key(key)
        return await self._arun("renew", self._renew_op(key, fence, lease), key=key)

    async def aget(self, key: str) -> Record | None:
        if self._async is None:
            return await super().aget(key)
        check_key(key)
        return await self._arun("get", self._get_op(key), key=key)

    async def aincr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        if self._async is None:
            return await super().aincr(key, amount, ttl=ttl)
        check_key(key)
        return await self._arun("incr", self._incr_op(key, amount, ttl), key=key)
