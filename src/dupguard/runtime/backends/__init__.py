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
* A record whose lease ran out while it was still ``pending`` (its holder neither completed
  nor released it: killed, or stalled past its lease) is **abandoned**: nobody knows whether
  the holder's work happened. ``claim(…, keep=…)`` keeps the record that long after its lease
  ends (the sweeps, and Redis' own expiry, leave it alone), and a claim that finds it inside
  that window says so in the same atomic step: taking it over (the default) reports the dead
  holder's fence in ``Claim.expired_holder``; with ``take_abandoned=False`` the claim changes
  nothing and answers ``abandoned`` with that fence, so the key stays undecided for every later
  claim, and the dead holder's own fence can still ``complete`` or ``release`` it (nobody took
  over: the rule below). After ``keep`` the record is free like any other; a released record,
  an expired result and a never-claimed key are never abandoned (``expired_holder`` is
  ``None``). This is what lets :class:`~dupguard.runtime.Idempotency` refuse to run such a key
  again, or ask the side effect's own system, instead of running it twice.
* ``complete``/``renew``/``release`` carry the fence. They are **refused** with
  :class:`~dupguard.runtime.errors.LeaseLost` when the record is live under another fence
  (someone took over, or completed): a late write from a former owner never lands.
  ``complete`` and ``renew`` succeed on the holder's own record even after its lease ran out
  as long as nobody took over, and on a free record they re-create it: if the store forgot
  the key (a Redis restart without persistence, an expired row), the fence still proves the
  caller was granted it and nobody has been granted it since.
* Store failures (connection refused, timeout, locked database) raise
  :class:`~dupguard.runtime.errors.StoreError`, never a driver exception.

Results are stored as JSON text, and :func:`encode_result` is the one check every backend
runs before it touches the store: it serialises the result exactly as it will be stored,
checks that the text is valid UTF-8 (a lone surrogate, which ``json`` writes raw, is escaped
instead: ``\\udc80`` stays ASCII in every store and decodes back to the same string), that it
is at most :data:`MAX_RESULT_BYTES`, and that it decodes again. A result that fails raises
:class:`TypeError` *before touching the store*, so the caller still holds its lease and
decides; it may then store an :class:`Unstorable` marker instead (``Idempotency`` and
``ToolCallLedger`` do), which records that the call ran without its value. Tuples come back as
lists, dict keys as strings, exactly as ``json`` round-trips them, in every backend (the
memory backend encodes too, so switching backends changes nothing).

What every backend must also do, so that the same program behaves the same on each:

* **keys** are non-empty ``str`` without NUL that encode as UTF-8 (:func:`check_key`, at the
  start of every operation: ``ValueError`` otherwise, never a driver's ``UnicodeEncodeError``).
  Helpers build their keys with :func:`compose_key`, which is injective: ``("user", "a:b")``
  and ``("user:a", "b")`` never meet.
* **durations** (``lease``, ``ttl``) are finite, positive and at most
  :data:`MAX_DURATION` seconds (:func:`duration_us`; ``ValueError`` naming the parameter),
  checked before anything is written, so a bad ``ttl`` cannot fail *after* a call ran.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from .._waiters import Waiters, channel_waiters
from ..errors import LeaseLost, StoreError

__all__ = [
    "MAX_DURATION",
    "MAX_RESULT_BYTES",
    "Backend",
    "Claim",
    "Record",
    "Unstorable",
    "check_duration",
    "check_key",
    "check_payload",
    "compose_key",
    "decode_result",
    "default_backend",
    "duration_us",
    "encode_result",
    "keep_us",
]

US = 1_000_000  # microseconds per second; every backend keeps times in integer µs


@dataclass(frozen=True)
class Claim:
    """What ``claim`` found: ``acquired`` (you hold ``fence``), ``done``, ``busy`` or
    ``abandoned`` (only with ``take_abandoned=False``: a holder's lease ran out before it
    completed; ``fence`` is that holder's, and nothing was changed).

    ``remaining`` is the seconds left on the lease (acquired/busy), on the stored result
    (done) or on the abandoned record's ``keep`` (abandoned), measured on the store's clock so
    that it means the same on every host. ``payload`` is the payload hash the record was
    claimed with (``None`` when unknown). ``expired_holder`` (acquired only) is the fence of an
    abandoned holder this claim took the key over from, ``None`` when the key was free: known
    inside the claim's own atomic step, so telling "claimed before and never finished" from
    "never claimed" costs no round trip.
    """

    status: Literal["acquired", "done", "busy", "abandoned"]
    fence: int
    remaining: float
    payload: str | None = None
    result: Any = None
    expired_holder: int | None = None

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


MAX_RESULT_BYTES = 256 * 1024 * 1024
"""The largest stored result (UTF-8 bytes of its JSON text): below every backend's own limit
(Redis' 512 MB ``proto-max-bulk-len``, SQLite's 1 GB ``SQLITE_MAX_LENGTH``), so a result one
store accepts is accepted by all."""

MAX_DURATION = 100 * 365 * 86400.0
"""The longest ``lease`` or ``ttl`` (seconds, 100 years): end times stay exact integers in µs
in every store (Redis' Lua numbers are doubles, exact below 2**53 µs)."""

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True)
_UNSTORABLE = "!unstorable:"  # not JSON: no encoded result starts with "!"


class Unstorable:
    """Stored in place of a result that could not be stored: the call ran, its value is lost.

    ``complete(key, fence, Unstorable(reason), ttl=…)`` records the key as done, so nothing
    runs it again; a replay gets this object back (``reason`` says why), never a value that
    looks like a result. It is kept out of band (a text no JSON value encodes to), so a
    function may return any JSON value, including one that looks like a marker.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = str(reason)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unstorable) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash((Unstorable, self.reason))

    def __repr__(self) -> str:
        return f"Unstorable({self.reason!r})"

    def __str__(self) -> str:
        return f"[the call ran, but its result could not be stored: {self.reason}]"


def encode_result(result: Any) -> str:
    """The JSON text every backend stores for ``result``; ``TypeError`` when it cannot be stored.

    Serialised exactly as stored (UTF-8 safe, size-checked) and decoded once more, so a result
    that passes here is stored, and replayed, identically by every backend.
    """
    if isinstance(result, Unstorable):
        return _UNSTORABLE + _ASCII_ENCODER.encode(result.reason)
    try:
        text = _ENCODER.encode(result)
    except (ValueError, RecursionError) as exc:  # a circular reference, nesting too deep, a huge int
        raise TypeError(f"the result cannot be encoded as JSON: {exc}") from exc
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: escape it (pure ASCII) instead of failing
        text = _ASCII_ENCODER.encode(result)
        size = len(text)
    if size > MAX_RESULT_BYTES:
        raise TypeError(f"the result is {size} bytes of JSON, more than the {MAX_RESULT_BYTES} a store keeps")
    try:
        json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise TypeError(f"the result's JSON does not decode again: {exc}") from exc
    return text


def decode_result(text: str | bytes | None) -> Any:
    """The value :func:`encode_result` stored (an :class:`Unstorable` for a marker).

    Text no version of ``encode_result`` wrote (a corrupted row) raises ``StoreError``.
    """
    if text is None or text == "" or text == b"":
        return None
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        if text.startswith(_UNSTORABLE):
            return Unstorable(json.loads(text[len(_UNSTORABLE) :]))
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise StoreError(f"a stored result cannot be decoded ({exc}): {text[:80]!r}") from exc


def check_key(key: Any) -> str:
    """``key`` if every backend can store it as is: a non-empty ``str``, no NUL, valid UTF-8.

    Raises ``ValueError`` (``TypeError`` for a non-string) before the store is touched.
    """
    if not isinstance(key, str):
        raise TypeError(f"a store key must be a str, not {type(key).__name__}")
    if not key:
        raise ValueError("a store key must not be empty")
    if "\x00" in key:
        raise ValueError(f"a store key must not contain NUL characters: {key!r}")
    if not key.isascii():
        try:
            key.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"a store key must be valid Unicode text (no lone surrogates): {key!r}") from exc
    return key


def check_payload(payload: Any) -> str | None:
    """A claim's payload as every backend stores it: ``None`` for none (or ``""``), else a key-like text."""
    if payload is None or payload == "":
        return None
    if not isinstance(payload, str):
        raise TypeError(f"a payload must be a str (a hash), not {type(payload).__name__}")
    return check_key(payload)


def _escape(part: str) -> str:
    return part.replace("\\", "\\\\").replace(":", "\\:")


def compose_key(kind: str, *parts: str) -> str:
    """``kind:part:part…`` with ``\\`` and ``:`` escaped in every part, so the parts can always be
    read back: two different part lists never give the same key (``("user", "alice:c1")``
    gives ``kind:user:alice\\:c1``, ``("user:alice", "c1")`` gives ``kind:user\\:alice:c1``).

    ``kind`` names the helper (a constant without ``:``); a part without ``:`` or ``\\`` is
    written unchanged, so keys stay readable.
    """
    return ":".join([kind, *map(_escape, parts)])


def check_duration(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """``value`` as seconds if it is a finite duration in ``(0, MAX_DURATION]`` (or 0 when
    ``allow_zero``); ``ValueError`` (``TypeError`` for a non-number) naming ``name`` otherwise.

    Every constructor checks its durations with this, so a bad ``ttl`` is refused when the
    helper is built, not after its first call ran (``float("inf")`` once did exactly that).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    seconds = float(value)
    if not math.isfinite(seconds):
        raise ValueError(f"{name} must be a finite number of seconds, not {value!r}")
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} seconds, not {value!r}")
    if seconds > MAX_DURATION:
        raise ValueError(f"{name} must be at most {MAX_DURATION:.0f} seconds (100 years), not {value!r}")
    return seconds


def duration_us(value: Any, name: str) -> int:
    """A backend operation's ``lease``/``ttl`` in integer µs, checked by :func:`check_duration`."""
    return int(check_duration(value, name) * US)


def keep_us(value: Any) -> int:
    """A claim's ``keep`` in integer µs: 0 (not kept) or a duration as :func:`check_duration` takes."""
    return int(check_duration(value, "keep", allow_zero=True) * US)


def _seconds(us: float) -> float:
    return max(0.0, us / US)


def lease_lost(key: str, fence: int, found: str) -> LeaseLost:
    return LeaseLost(f"key {key!r}: fence {fence} no longer holds the lease ({found})")


class Backend:
    """Base class of the stores: the contract, plus async methods defaulting to threads.

    Subclasses implement the six sync operations. The async ones run the sync operation in a
    worker thread (``asyncio.to_thread``) unless a backend has a native async path (Redis
    made from a URL or with an asyncio client, SQLite on a file nobody else is writing) or
    never blocks (memory). Times are seconds (floats).

    ``channel`` names the store for in-process wake-ups: two backend objects on the same
    SQLite file share a channel, so a waiter in one thread wakes as soon as a holder in
    another thread of the same process completes, instead of at its next poll.
    """

    #: True when every change to the store happens in this process (memory): waiters then
    #: never need to poll, a completion or release always wakes them.
    local_only: bool = False
    channel: str = ""

    # -- the contract -------------------------------------------------------------------
    def claim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        """Take ``key`` for ``lease`` seconds if it is free; otherwise report what holds it.

        ``keep`` (seconds, 0 = not at all) is how long the record outlives its lease if the
        holder never completes or releases it, so that a later claim can tell (see
        ``expired_holder``); ``take_abandoned=False`` leaves such a record as it is and answers
        ``abandoned`` (see the module docstring)."""
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
    async def aclaim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        return await asyncio.to_thread(
            self.claim, key, lease=lease, payload=payload, keep=keep, take_abandoned=take_abandoned
        )

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
