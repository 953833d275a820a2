"""The store contract shared by every backend, and the rules all of them implement.

A backend keeps *records*, one per key, and *counters*. A record is in one of two states:

``pending``
    someone holds a lease on the key; the record carries the holder's **fence** and the
    time the lease ends.
``done``
    the holder completed; the record carries the (JSON-serialisable) result until ``ttl``.

Every operation is a single atomic step in the store (one lock section, one SQL statement,
one Lua script), so no check-then-act ever spans two round trips. The rules, identical in
every backend so that a program behaves the same on ``MemoryBackend`` and ``RedisBackend``:

* A record is **free** when it is absent, released, or past its end (lease or ttl). ``claim``
  takes a free record and gives it a new fence, ``max(previous + 1, store clock in µs)``: a
  takeover always gets a higher fence, and seeding from the store clock keeps fences rising
  even after an expired record was deleted, so a fence is never handed out twice for a key
  (unless the store's clock steps back further than a record's lifetime).
* ``claim`` on a live record does not change it: it reports ``done`` (with the result) or
  ``busy`` (with the lease time left). A claim retried by the transport after its reply was
  lost is recognised by its owner token and answered ``acquired`` again, so retries are safe.
* ``complete``/``renew``/``release`` carry the fence. They are **refused** with
  :class:`~dupguard.runtime.errors.LeaseLost` when the record is live under another fence
  (someone took over, or completed): a late write from a former owner never lands.
  ``complete`` and ``renew`` succeed on the holder's own record even after its lease ran out
  as long as nobody took over, and on a free record they re-create it: if the store forgot
  the key (a Redis restart without persistence, an expired row), the fence still proves the
  caller was granted it and nobody has been granted it since.
* Store failures (connection refused, timeout, locked database) raise
  :class:`~dupguard.runtime.errors.StoreError`, never a driver exception.

Results are stored as JSON text: ``complete`` raises :class:`TypeError` *before touching the
store* when the result cannot be encoded, so the caller still holds its lease and decides.
Tuples come back as lists, dict keys as strings, exactly as ``json`` round-trips them, in
every backend (the memory backend encodes too, so switching backends changes nothing).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import dataclass
from typing import Any, Literal

from .._waiters import Waiters, channel_waiters
from ..errors import LeaseLost

__all__ = ["Backend", "Claim", "Record", "decode_result", "default_backend", "encode_result"]

US = 1_000_000  # microseconds per second; every backend keeps times in integer µs


@dataclass(frozen=True)
class Claim:
    """What ``claim`` found: ``acquired`` (you hold ``fence``), ``done`` or ``busy``.

    ``remaining`` is the seconds left on the lease (acquired/busy) or on the stored result
    (done), measured on the store's clock so that it means the same on every host.
    ``payload`` is the payload hash the record was claimed with (``None`` when unknown).
    """

    status: Literal["acquired", "done", "busy"]
    fence: int
    remaining: float
    payload: str | None = None
    result: Any = None

    @property
    def acquired(self) -> bool:
        return self.status == "acquired"


@dataclass(frozen=True)
class Record:
    """A live record as ``get`` returns it (``get`` returns ``None`` for a free key)."""

    state: Literal["pending", "done"]
    fence: int
    remaining: float
    payload: str | None = None
    result: Any = None


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode_result(result: Any) -> str:
    """JSON text for a result; ``TypeError`` (from ``json``) when it cannot be encoded."""
    try:
        return _ENCODER.encode(result)
    except ValueError as exc:  # circular reference
        raise TypeError(str(exc)) from exc


def decode_result(text: str | bytes | None) -> Any:
    if text is None or text == "" or text == b"":
        return None
    return json.loads(text)


def _seconds(us: float) -> float:
    return max(0.0, us / US)


def lease_lost(key: str, fence: int, found: str) -> LeaseLost:
    return LeaseLost(f"key {key!r}: fence {fence} no longer holds the lease ({found})")


class Backend:
    """Base class of the stores: the contract, plus async methods defaulting to threads.

    Subclasses implement the six sync operations. The async ones run the sync operation in a
    worker thread (``asyncio.to_thread``) unless a backend has a native async path (Redis
    with an asyncio client) or never blocks (memory). Times are seconds (floats).

    ``channel`` names the store for in-process wake-ups: two backend objects on the same
    SQLite file share a channel, so a waiter in one thread wakes as soon as a holder in
    another thread of the same process completes, instead of at its next poll.
    """

    #: True when every change to the store happens in this process (memory): waiters then
    #: never need to poll, a completion or release always wakes them.
    local_only: bool = False
    channel: str = ""

    # -- the contract -------------------------------------------------------------------
    def claim(self, key: str, *, lease: float, payload: str | None = None) -> Claim:
        """Take ``key`` for ``lease`` seconds if it is free; otherwise report what holds it."""
        raise NotImplementedError

    def complete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        """Store ``result`` for ``ttl`` seconds under ``fence``; ``LeaseLost`` if fenced out."""
        raise NotImplementedError

    def release(self, key: str, fence: int) -> bool:
        """Give the key back (the call failed). True if released, False if nothing held it;
        ``LeaseLost`` if another fence holds or completed it."""
        raise NotImplementedError

    def renew(self, key: str, fence: int, *, lease: float) -> float:
        """Extend the lease to ``lease`` seconds from now; returns it; ``LeaseLost`` if fenced out."""
        raise NotImplementedError

    def get(self, key: str) -> Record | None:
        """The live record for ``key``, or ``None`` when the key is free."""
        raise NotImplementedError

    def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        """Add ``amount`` to a counter and return the new value. ``ttl`` (seconds) starts when
        the counter is created: a fixed window, after which it starts again from zero."""
        raise NotImplementedError

    def close(self) -> None:
        """Release connections; the backend may not be used afterwards."""

    # -- async variants -----------------------------------------------------------------
    async def aclaim(self, key: str, *, lease: float, payload: str | None = None) -> Claim:
        return await asyncio.to_thread(self.claim, key, lease=lease, payload=payload)

    async def acomplete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        await asyncio.to_thread(self.complete, key, fence, result, ttl=ttl)

    async def arelease(self, key: str, fence: int) -> bool:
        return await asyncio.to_thread(self.release, key, fence)

    async def arenew(self, key: str, fence: int, *, lease: float) -> float:
        return await asyncio.to_thread(self.renew, key, fence, lease=lease)

    async def aget(self, key: str) -> Record | None:
        return await asyncio.to_thread(self.get, key)

    async def aincr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        return await asyncio.to_thread(self.incr, key, amount, ttl=ttl)

    # -- wake-ups -----------------------------------------------------------------------
    @property
    def waiters(self) -> Waiters:
        """The in-process wake-up registry for this store (see :mod:`.._waiters`).

        Cached on the object: the registry lives as long as some backend naming the channel.
        """
        w = self.__dict__.get("_waiters")
        if w is None:
            w = self.__dict__["_waiters"] = channel_waiters(self.channel or f"{type(self).__name__}:{id(self)}")
        return w

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_default: Backend | None = None
_default_lock = threading.Lock()
_default_pid = 0


def default_backend() -> Backend:
    """The process-wide ``MemoryBackend`` used when ``store=None``.

    One shared instance, so that every ``Idempotency(None)`` and ``@idempotent`` in a process
    sees the same keys (a fresh store per helper would make them unable to see each other).
    A forked child gets its own: the parent's records and locks do not belong to it.
    """
    global _default, _default_pid
    pid = os.getpid()
    if _default is None or _default_pid != pid:
        with _default_lock:
            if _default is None or _default_pid != pid:
                from .memory import MemoryBackend

                _default, _default_pid = MemoryBackend(), pid
    return _default
