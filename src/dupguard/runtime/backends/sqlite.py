"""``SQLiteBackend``: records in one SQLite file, shared by many processes on one host.

Every operation is **one SQL statement** in autocommit mode, an
``INSERT … ON CONFLICT(key) DO UPDATE … RETURNING`` (or ``UPDATE … RETURNING``) whose
``CASE`` expressions decide and act in the same write transaction: two processes can never
both see a key free and both take it. The database runs in WAL mode (readers do not block the
writer) with ``synchronous=NORMAL`` (a committed claim survives a crash of the process; a
power loss may lose the last transactions) and a busy timeout, so concurrent writers queue
instead of failing. A statement that still cannot get the lock raises ``StoreError``.

Times come from this host's wall clock in µs: every process sharing the file shares it.
Each thread gets its own connection (``sqlite3`` connections are not thread-safe). The async
methods run their statement on the event loop's own connection, which never waits: a statement
on a file nobody else is writing takes microseconds, less than handing it to a worker thread
and back. When another connection holds the write lock, that connection reports it at once
(nothing written) and the statement runs again in a worker thread (``asyncio.to_thread``),
whose connection waits as above; checkpoints and large results go to a worker thread too, so
the loop never waits for a lock or for the disk.

A record is free when ``expires_at <= now``: that covers an expired lease (``pending``), an
expired result (``done``) and a released key (``expires_at = 0``). Free rows are deleted
from time to time by a sweep of their own; fences are seeded from the clock (see
:mod:`dupguard.runtime.backends`), so deleting rows never lets a fence come back.

The file must stay the file: if it is deleted or replaced (``rm``, a restore by rename) while
processes have it open, they keep writing to the old inode while newcomers create a new file,
and both could take the same key. Each backend therefore remembers the device and inode of
the file it opened and compares them with the path's after every statement (one ``stat``, a
microsecond); on a mismatch every operation raises ``StoreError`` (not retryable): fail
closed, never run a key against a store nobody else sees. A file replaced while a call runs
cannot un-run that call: its holder's completion fails with ``StoreError`` (``executed``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import StoreError
from . import (
    Backend,
    Claim,
    Record,
    _seconds,
    check_duration,
    check_key,
    check_payload,
    decode_result,
    duration_us,
    encode_result,
    keep_us,
    lease_lost,
)

__all__ = ["SQLiteBackend"]

log = logging.getLogger("dupguard.runtime")
_T = TypeVar("_T")

_CHECKPOINT_EVERY = 256
"""Statements on the loop's connection between two checkpoints (each writes a few pages; SQLite's
own automatic checkpoint comes at 1000 pages of WAL)."""

_INLINE_RESULT = 64 * 1024
"""A completion whose result text is longer than this is written from a worker thread."""


class _Busy(Exception):
    """The loop's non-waiting connection found the database locked; nothing was written."""


def _locked(exc: sqlite3.Error) -> bool:
    """``SQLITE_BUSY`` or ``SQLITE_LOCKED`` (any extended code): another connection holds a lock."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (5, 6)
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


if sqlite3.sqlite_version_info < (3, 35, 0):  # pragma: no cover - depends on the platform
    _TOO_OLD = f"SQLiteBackend needs SQLite >= 3.35 (RETURNING); this Python has {sqlite3.sqlite_version}"
else:
    _TOO_OLD = ""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS dupguard_records (
    key        TEXT PRIMARY KEY,
    state      TEXT NOT NULL,      -- 'pending' | 'done' | 'released'
    fence      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,   -- µs: end of the lease (pending) or of the result (done)
    payload    TEXT,
    result     TEXT,
    owner      TEXT,               -- token of the claim call, makes a retried claim re-entrant
    keep_us    INTEGER NOT NULL DEFAULT 0,  -- µs a pending row outlives its lease (the claim's keep)
    taken_from INTEGER             -- fence of the abandoned holder the claim took the key from
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dupguard_records_expiry ON dupguard_records(expires_at);
CREATE TABLE IF NOT EXISTS dupguard_counters (
    key        TEXT PRIMARY KEY,
    value      INTEGER NOT NULL,
    expires_at INTEGER               -- µs, NULL = never
) WITHOUT ROWID;
"""

# columns added since the first release: a file made by an older version gets them on open
_ADDED_COLUMNS = (("keep_us", "keep_us INTEGER NOT NULL DEFAULT 0"), ("taken_from", "taken_from INTEGER"))

_FREE = "(r.expires_at <= :now)"
_MINE_PENDING = "(r.state = 'pending' AND r.fence = :fence)"
# a holder's lease ran out before it completed or released, and the row is still kept
_ABANDONED = "(r.state = 'pending' AND r.expires_at <= :now AND r.expires_at + r.keep_us > :now)"
_TAKE = f"({_FREE} AND NOT (:report AND {_ABANDONED}))"

# every SET expression reads the row as it was: taken_from is decided before the take
_CLAIM = f"""
INSERT INTO dupguard_records AS r (key, state, fence, expires_at, payload, result, owner, keep_us, taken_from)
VALUES (:key, 'pending', :now, :end, :payload, NULL, :token, :keep, NULL)
ON CONFLICT(key) DO UPDATE SET
    state      = CASE WHEN {_TAKE} THEN 'pending' ELSE r.state END,
    fence      = CASE WHEN {_TAKE} THEN max(r.fence + 1, :now) ELSE r.fence END,
    expires_at = CASE WHEN {_TAKE} THEN :end ELSE r.expires_at END,
    payload    = CASE WHEN {_TAKE} THEN :payload ELSE r.payload END,
    result     = CASE WHEN {_TAKE} THEN NULL ELSE r.result END,
    owner      = CASE WHEN {_TAKE} THEN :token ELSE r.owner END,
    keep_us    = CASE WHEN {_TAKE} THEN :keep ELSE r.keep_us END,
    taken_from = CASE WHEN {_TAKE} THEN (CASE WHEN {_ABANDONED} THEN r.fence END) ELSE r.taken_from END
RETURNING state, fence, expires_at, payload, result, owner, keep_us, taken_from
"""

# complete: done under our fence if the record is ours (pending) or free; a live record
# under another fence, or our own done record, stays as it is.
_OK = f"({_FREE} OR {_MINE_PENDING})"
_COMPLETE = f"""
INSERT INTO dupguard_records AS r (key, state, fence, expires_at, payload, result, owner)
VALUES (:key, 'done', :fence, :end, NULL, :result, NULL)
ON CONFLICT(key) DO UPDATE SET
    state      = CASE WHEN {_OK} THEN 'done' ELSE r.state END,
    payload    = CASE WHEN {_OK} AND r.fence <> :fence THEN NULL ELSE r.payload END,
    fence      = CASE WHEN {_OK} THEN :fence ELSE r.fence END,
    expires_at = CASE WHEN {_OK} THEN :end ELSE r.expires_at END,
    result     = CASE WHEN {_OK} THEN :result ELSE r.result END,
    owner      = CASE WHEN {_OK} THEN NULL ELSE r.owner END
RETURNING state, fence, expires_at
"""

_RENEW = f"""
INSERT INTO dupguard_records AS r (key, state, fence, expires_at, payload, result, owner)
VALUES (:key, 'pending', :fence, :end, NULL, NULL, NULL)
ON CONFLICT(key) DO UPDATE SET
    state      = CASE WHEN {_OK} THEN 'pending' ELSE r.state END,
    payload    = CASE WHEN {_OK} AND r.fence <> :fence THEN NULL ELSE r.payload END,
    result     = CASE WHEN {_OK} THEN NULL ELSE r.result END,
    keep_us    = CASE WHEN {_MINE_PENDING} THEN r.keep_us WHEN {_OK} THEN 0 ELSE r.keep_us END,
    fence      = CASE WHEN {_OK} THEN :fence ELSE r.fence END,
    expires_at = CASE WHEN {_OK} THEN :end ELSE r.expires_at END
RETURNING state, fence, expires_at
"""

_RELEASE = f"""
UPDATE dupguard_records AS r SET
    state      = CASE WHEN {_MINE_PENDING} THEN 'released' ELSE r.state END,
    expires_at = CASE WHEN {_MINE_PENDING} THEN 0 ELSE r.expires_at END,
    owner      = CASE WHEN {_MINE_PENDING} THEN :token ELSE r.owner END
WHERE key = :key
RETURNING state, fence, expires_at, owner
"""

_GET = "SELECT state, fence, expires_at, payload, result FROM dupguard_records WHERE key = ?"

_INCR = """
INSERT INTO dupguard_counters AS c (key, value, expires_at) VALUES (:key, :amount, :end)
ON CONFLICT(key) DO UPDATE SET
    value      = CASE WHEN c.expires_at <= :now THEN :amount ELSE c.value + :amount END,
    expires_at = CASE WHEN c.expires_at <= :now THEN :end ELSE c.expires_at END
RETURNING value
"""

_SWEEP = (
    "DELETE FROM dupguard_records WHERE expires_at <= :now AND (state <> 'pending' OR expires_at + keep_us <= :now);"
    "DELETE FROM dupguard_counters WHERE expires_at <= :now"
)


def _now() -> int:
    return time.time_ns() // 1000


class SQLiteBackend(Backend):
    """A store in one SQLite file: safe across threads and across processes on one host.

    ``busy_timeout`` (seconds) is how long a statement waits for another writer before it
    raises ``StoreError``. ``sweep_every`` is the number of claims a connection makes between
    two deletions of expired rows.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 10.0, sweep_every: int = 2000) -> None:
        if _TOO_OLD:
            raise StoreError(_TOO_OLD)
        busy_timeout = check_duration(busy_timeout, "busy_timeout", allow_zero=True)
        if isinstance(sweep_every, bool) or not isinstance(sweep_every, int) or sweep_every < 1:
            raise ValueError(f"sweep_every must be an int >= 1, not {sweep_every!r}")
        self.path = os.fspath(path)
        memory = self.path == ":memory:" or self.path.startswith("file::memory:")
        if memory:
            raise ValueError("SQLiteBackend needs a file its users share; use MemoryBackend within one process")
        self.busy_timeout = busy_timeout
        self.sweep_every = sweep_every
        self.channel = f"sqlite:{os.path.realpath(self.path)}"
        self._local = threading.local()
        self._all: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._all_lock = threading.Lock()
        self._closed = False
        self._file: tuple[int, int] | None = None  # (st_dev, st_ino) of the file this backend opened
        self._connection()  # create the schema now: errors surface at construction

    def __repr__(self) -> str:
        return f"SQLiteBackend({self.path!r})"

    # ------------------------------------------------------------------ connections
    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, which waits up to ``busy_timeout`` for another writer."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open(threading.current_thread())
        return conn

    def _open(self, owner: threading.Thread, *, fast: bool = False) -> sqlite3.Connection:
        """A new connection for ``owner`` (registered, so that ``close`` and thread churn close it).

        ``fast``: the event loop's connection (see :meth:`_nonblocking`), which never waits for
        the lock (``busy_timeout = 0``) and never checkpoints by itself (``wal_autocheckpoint =
        0``): a checkpoint flushes the file to disk, which the loop must not wait for either, so
        :meth:`_nonblocking` has a worker thread run them.
        """
        if self._closed:
            raise StoreError("SQLiteBackend is closed")
        if self._file is not None:  # another thread's first statement: never create a new file
            self._check_file()
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(_SCHEMA)
            self._upgrade(conn)
            if fast:
                conn.execute("PRAGMA busy_timeout = 0")
                conn.execute("PRAGMA wal_autocheckpoint = 0")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {self.path!r}: {exc}") from exc
        try:
            file = self._identity()
            if self._file is None:
                self._file = file
            elif file != self._file:
                raise self._replaced(file)
        except StoreError:
            conn.close()
            raise
        with self._all_lock:
            # connections of finished threads are closed here, so thread churn cannot leak them
            alive = []
            for thread, other in self._all:
                if thread.is_alive():
                    alive.append((thread, other))
                else:
                    other.close()
            alive.append((owner, conn))
            self._all = alive
        return conn

    @staticmethod
    def _upgrade(conn: sqlite3.Connection) -> None:
        """Add the columns a file made by an older version lacks (``PRAGMA table_info``: one
        read at connection open); another process adding them at the same moment is fine."""
        have = {row[1] for row in conn.execute("PRAGMA table_info(dupguard_records)")}
        for name, ddl in _ADDED_COLUMNS:
            if name not in have:
                try:
                    conn.execute(f"ALTER TABLE dupguard_records ADD COLUMN {ddl}")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):
                        raise

    def _discard(self, conn: sqlite3.Connection) -> None:
        with self._all_lock:
            self._all = [(thread, other) for thread, other in self._all if other is not conn]
        conn.close()

    def _wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL; many processes opening a new file at once may collide here."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
                continue
            if mode.lower() != "wal":
                raise sqlite3.OperationalError(f"journal_mode is {mode!r}, WAL is required")
            return

    def _identity(self) -> tuple[int, int]:
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise self._replaced(None, exc) from exc
        return st.st_dev, st.st_ino

    def _replaced(self, file: tuple[int, int] | None, error: OSError | None = None) -> StoreError:
        what = f"deleted ({error.strerror})" if error is not None else f"replaced (inode {self._file} -> {file})"
        exc = StoreError(
            f"SQLite store {self.path!r} was {what} while this process had it open: other processes "
            "may now use another file, so this one refuses to go on (restart it on the new file)"
        )
        exc.retryable = False
        return exc

    def _run(self, sql: str, params: Any, fast: sqlite3.Connection | None = None) -> list[tuple]:
        """One statement, stepped to the end. ``fast``: the loop's non-waiting connection, on
        which a locked database raises :class:`_Busy` (nothing was written) instead of waiting."""
        if self._closed:
            raise StoreError("SQLiteBackend is closed")
        conn = self._connection() if fast is None else fast
        try:
            # fetchall: the statement must step to the end, or its write would stay open
            rows = conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            if fast is not None and _locked(exc):
                if conn.in_transaction:  # pragma: no cover - autocommit leaves none open
                    conn.rollback()
                raise _Busy from exc
            self._check_file()  # a replaced file explains any error best
            raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc
        self._check_file()  # what the statement returned is only true if the path is still our file
        return rows

    def _check_file(self) -> None:
        file = self._identity()
        if file != self._file:
            raise self._replaced(file)

    def close(self) -> None:
        self._closed = True
        with self._all_lock:
            conns, self._all = self._all, []
        for _thread, conn in conns:
            try:
                conn.close()
            except sqlite3.Error:  # pragma: no cover - closing a connection in use elsewhere
                pass
        self._local = threading.local()

    # ------------------------------------------------------------------ contract
    # Each operation is split in two: the public method checks its arguments (and draws the
    # claim's owner token) once, the ``_op`` runs the statement and may run twice, on the loop's
    # non-waiting connection and then, if the file was locked, in a worker thread; the same
    # token and fence make the second run equivalent to the first (which wrote nothing).

    def claim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        args = self._claim_args(key, lease, payload, keep, take_abandoned)
        claim = self._claim_op(*args)
        if self._sweep_due():
            self._sweep()
        return claim

    def complete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        self._complete_op(*self._complete_args(key, fence, result, ttl))
        self.waiters.notify(key)

    def release(self, key: str, fence: int) -> bool:
        released = self._release_op(check_key(key), fence, secrets.token_hex(8))
        if released:
            self.waiters.notify(key)
        return released

    def renew(self, key: str, fence: int, *, lease: float) -> float:
        self._renew_op(check_key(key), fence, duration_us(lease, "lease"))
        return lease

    def get(self, key: str) -> Record | None:
        return self._get_op(check_key(key))

    def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        check_key(key)
        return self._incr_op(key, amount, None if ttl is None else duration_us(ttl, "ttl"))

    # ------------------------------------------------------------------ async
    async def aclaim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        claim = await self._nonblocking(self._claim_op, *self._claim_args(key, lease, payload, keep, take_abandoned))
        if self._sweep_due():
            await asyncio.to_thread(self._sweep)
        return claim

    async def acomplete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        args = self._complete_args(key, fence, result, ttl)
        if len(args[2]) > _INLINE_RESULT:  # writing a large result is disk work: not on the loop
            await asyncio.to_thread(self._complete_op, *args)
        else:
            await self._nonblocking(self._complete_op, *args)
        self.waiters.notify(key)

    async def arelease(self, key: str, fence: int) -> bool:
        released = await self._nonblocking(self._release_op, check_key(key), fence, secrets.token_hex(8))
        if released:
            self.waiters.notify(key)
        return released

    async def arenew(self, key: str, fence: int, *, lease: float) -> float:
        await self._nonblocking(self._renew_op, check_key(key), fence, duration_us(lease, "lease"))
        return lease

    async def aget(self, key: str) -> Record | None:
        return await self._nonblocking(self._get_op, check_key(key))

    async def aincr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        check_key(key)
        return await self._nonblocking(self._incr_op, key, amount, None if ttl is None else duration_us(ttl, "ttl"))

    async def _nonblocking(self, op: Callable[..., _T], *args: Any) -> _T:
        """``op(*args)`` without blocking the event loop on a lock or a disk flush.

        A statement on a database nobody else is writing takes microseconds, less than the
        hand-off to a worker thread and back (``asyncio.to_thread``), which also needs the GIL
        from a busy loop: the statement runs on the loop's own connection first, which never
        waits (``busy_timeout = 0``). Only when another connection holds the write lock (raised
        as :class:`_Busy`, before anything was written) does it run again in a worker thread,
        whose connection waits up to ``busy_timeout``. Every ``_CHECKPOINT_EVERY`` statements on
        the loop's connection, a worker thread checkpoints the WAL (the loop's connection never
        does: see :meth:`_open`).
        """
        local = self._local
        fast = getattr(local, "fast", None)
        if fast is None:
            # the first use on this thread: opening may wait (the schema, WAL mode), so a worker opens it
            opened = await asyncio.to_thread(self._open, threading.current_thread(), fast=True)
            fast = getattr(local, "fast", None)
            if fast is None:
                fast = local.fast = opened
                local.since_checkpoint = 0
            else:  # another task of this loop opened one meanwhile
                self._discard(opened)
        try:
            result = op(*args, fast=fast)
        except _Busy:
            return await asyncio.to_thread(op, *args)
        local.since_checkpoint += 1
        if local.since_checkpoint >= _CHECKPOINT_EVERY:
            local.since_checkpoint = 0
            await asyncio.to_thread(self._checkpoint)
        return result

    # ------------------------------------------------------------------ statements
    def _claim_args(
        self, key: str, lease: float, payload: str | None, keep: float, take_abandoned: bool
    ) -> tuple[str, int, str | None, str, int, bool]:
        check_key(key)
        lease_us = duration_us(lease, "lease")
        return key, lease_us, check_payload(payload), secrets.token_hex(8), keep_us(keep), bool(take_abandoned)

    def _claim_op(
        self,
        key: str,
        lease_us: int,
        payload: str | None,
        token: str,
        keep: int,
        take_abandoned: bool,
        *,
        fast: sqlite3.Connection | None = None,
    ) -> Claim:
        now = _now()
        params = {
            "key": key,
            "now": now,
            "end": now + lease_us,
            "payload": payload,
            "token": token,
            "keep": keep,
            "report": 0 if take_abandoned else 1,
        }
        ((state, fence, end, stored_payload, result, owner, kept, taken_from),) = self._run(_CLAIM, params, fast)
        if state == "pending" and owner == token:
            return Claim("acquired", fence, _seconds(end - now), stored_payload, expired_holder=taken_from)
        if state == "done":
            return Claim("done", fence, _seconds(end - now), stored_payload, decode_result(result))
        if state == "pending" and end <= now:  # abandoned, and left so (take_abandoned=False)
            return Claim("abandoned", fence, _seconds(end + kept - now), stored_payload)
        return Claim("busy", fence, _seconds(end - now), stored_payload)

    @staticmethod
    def _complete_args(key: str, fence: int, result: Any, ttl: float) -> tuple[str, int, str, int]:
        check_key(key)
        ttl_us = duration_us(ttl, "ttl")
        return key, fence, encode_result(result), ttl_us

    def _complete_op(
        self, key: str, fence: int, text: str, ttl_us: int, *, fast: sqlite3.Connection | None = None
    ) -> None:
        now = _now()
        ((state, got, _end),) = self._run(
            _COMPLETE, {"key": key, "now": now, "fence": fence, "end": now + ttl_us, "result": text}, fast
        )
        if state != "done" or got != fence:
            raise lease_lost(key, fence, f"{state} under fence {got}")

    def _release_op(self, key: str, fence: int, token: str, *, fast: sqlite3.Connection | None = None) -> bool:
        rows = self._run(_RELEASE, {"key": key, "fence": fence, "token": token}, fast)
        if not rows:
            return False
        ((state, got, end, owner),) = rows
        if owner == token:
            return True
        if got != fence and end > _now():
            raise lease_lost(key, fence, f"{state} under fence {got}")
        return False

    def _renew_op(self, key: str, fence: int, lease_us: int, *, fast: sqlite3.Connection | None = None) -> None:
        now = _now()
        ((state, got, _end),) = self._run(_RENEW, {"key": key, "now": now, "fence": fence, "end": now + lease_us}, fast)
        if state != "pending" or got != fence:
            raise lease_lost(key, fence, f"{state} under fence {got}")

    def _get_op(self, key: str, *, fast: sqlite3.Connection | None = None) -> Record | None:
        rows = self._run(_GET, (key,), fast)
        now = _now()
        if not rows or rows[0][2] <= now:
            return None
        state, fence, end, payload, result = rows[0]
        return Record(state, fence, _seconds(end - now), payload, decode_result(result))

    def _incr_op(self, key: str, amount: int, ttl_us: int | None, *, fast: sqlite3.Connection | None = None) -> int:
        now = _now()
        ((value,),) = self._run(
            _INCR, {"key": key, "amount": amount, "now": now, "end": None if ttl_us is None else now + ttl_us}, fast
        )
        return value

    # ------------------------------------------------------------------ upkeep
    def _sweep_due(self) -> bool:
        """Every ``sweep_every`` claims made from this thread (either connection) a sweep is due."""
        claims = getattr(self._local, "claims", 0) + 1
        self._local.claims = claims
        return claims % self.sweep_every == 0

    def _sweep(self) -> None:
        """Delete expired rows. Upkeep only: a failure is logged, never raised into the claim
        that made the sweep due (that claim has succeeded, and its caller holds the key)."""
        now = _now()
        try:
            for sql in _SWEEP.split(";"):
                self._run(sql, {"now": now})
        except StoreError as exc:
            log.debug("dupguard: sweeping %r failed: %s", self.path, exc)

    def _checkpoint(self) -> None:
        """Copy the WAL back into the database (``PASSIVE``: never waits for readers or writers);
        run in a worker thread for the loop's connection, which does not checkpoint itself."""
        try:
            self._run("PRAGMA wal_checkpoint(PASSIVE)", ())
        except StoreError as exc:
            log.debug("dupguard: checkpointing %r failed: %s", self.path, exc)
