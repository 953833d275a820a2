"""One execution per key: ``Idempotency`` and the ``@idempotent`` decorator.

The first caller for a key claims it (one atomic store operation), runs the function under a
lease that a heartbeat keeps renewing, and stores the result. Every other caller with that
key, in any thread, event loop, process or host sharing the store, either

* gets the stored result (the key completed: results replay until ``ttl``),
* gets ``IdempotencyInProgress`` (``on_in_progress="raise"``; retryable, ``retry_after``), or
* waits for the running call and then gets its result (``on_in_progress="wait"``).

If the function raises, the claim is released and the error propagates: a retry may run it
again, and so may a waiter (wait mode): it finds the key free and runs the function itself,
one waiter at a time, since an exception cannot be replayed to other processes. If the
holder dies, its lease runs out and the next caller takes the key over with a higher fence;
should the old holder come back and try to store a result, it gets ``LeaseLost``. The same
key with a different ``payload`` is a client bug and raises ``IdempotencyPayloadMismatch``;
the payload is compared by a SHA-256 of its canonical JSON.

Waiting: waiters in this process are woken by the completing holder through private
``concurrent.futures.Future`` objects (``asyncio.wrap_future`` for async waiters, so waiters
on one loop are woken by a holder on another); for stores shared with other processes they
also poll the store with a growing interval, never waiting past the holder's lease.

Results are JSON values (see :mod:`dupguard.runtime.backends`): the caller that ran the
function gets its return value as is, duplicates get it as JSON decodes it (a tuple comes
back as a list), in every backend. When a result cannot be stored (not JSON, nested too
deeply, larger than ``MAX_RESULT_BYTES``; every backend runs the same check), the caller that
ran the function still gets it (with a ``RuntimeWarning``), the key is recorded as done with
an :class:`~dupguard.runtime.backends.Unstorable` marker instead of the value, and later
duplicates raise ``TypeError`` instead of running the function again.

When the store fails after the function ran, the holder keeps its lease alive (the heartbeat
runs until the result is recorded) and keeps trying to record the result for up to ``lease``
seconds (the function ran; a retry must find its result). If the store still refuses the
value but accepts a small record (a server limit on value size), the key is recorded done
with an ``Unstorable`` marker, as above. If the store stays unreachable it raises
``StoreError`` with ``retryable = False``, ``executed = True`` and the value in ``result``:
the caller knows the effect happened although it is not recorded. A ``StoreError`` raised
before the function started has ``executed = False`` and is retryable.

Store keys are ``idem:<key>`` for :meth:`Idempotency.run` and ``idem:<scope>:<key>`` for
``@idempotent``, each part escaped (:func:`~dupguard.runtime.backends.compose_key`), so no
scope and key can stand for another pair.

**A holder that stopped before recording its outcome.** A holder killed (or stalled past its
lease) after its side effect and before its result was recorded leaves a key nobody can know
ran. Every claim keeps its record ``ttl`` seconds past its lease (``keep``), so the next claim
learns, inside its own atomic step, that the key was *abandoned* rather than never claimed
(:mod:`dupguard.runtime.backends`), and ``on_abandoned`` decides:

``"rerun"`` (the default: at-least-once)
    the key runs again under the new holder's lease (a warning is logged). Right for effects
    that are harmless twice or idempotent on their own side.
``"raise"`` (at-most-once)
    the key is not run again: the caller gets :class:`~dupguard.runtime.errors.OutcomeUnknown`
    (``key``, and ``fence``: the stopped holder's), and so does every later caller, because the
    claim leaves the record as it is. Someone who finds out resolves it:
    :meth:`Idempotency.resolve` (it ran: record this result) or :meth:`Idempotency.release`
    (it did not: the next call runs it). Both are fenced writes under that holder's fence, the
    same write the holder itself would have made: so a holder that was only stalled and comes
    back records its own result, and settles the key for everyone.
``reconcile`` (a callable: ``reconcile(key) -> result | MISSING``; sync, or async for ``arun``)
    exactly-once for effects whose own system can be asked (a payment API queried by the
    idempotency key you sent it, a row with a unique key). The new holder calls it under its
    own lease: a result is recorded as the key's completion and returned, nothing runs;
    :data:`MISSING` means it did not happen, and the function runs under the same lease. If
    ``reconcile`` raises, the key is given back still undecided (its lease ends at once, the
    record stays abandoned), so the next caller asks again; the error propagates.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import decimal
import functools
import hashlib
import inspect
import json
import logging
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable
from pathlib import PurePath
from typing import Any, Literal, TypeVar

from . import _waiters
from .backends import Backend, Claim, Unstorable, check_duration, compose_key
from .backends.memory import default_backend
from .errors import (
    IdempotencyInProgress,
    IdempotencyKeyMissing,
    IdempotencyPayloadMismatch,
    LeaseLost,
    OutcomeUnknown,
    StoreError,
)
from .lease import Lease, _note

__all__ = ["MISSING", "Idempotency", "idempotent", "payload_hash"]

T = TypeVar("T")
log = logging.getLogger("dupguard.runtime")


class _Missing:
    """The type of :data:`MISSING`: one instance (a pickled copy comes back as the same), falsy,
    and named in reprs."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "dupguard.runtime.MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""What a ``reconcile`` function returns when the side effect did not happen (``None`` may be a
result, so it cannot say that)."""

OnAbandoned = Literal["rerun", "raise"] | Callable[[str], Any]

_GIVE_BACK = 0.001
"""The lease (seconds) a holder sets to give a key back *undecided* (its ``reconcile`` failed):
it ends at once, but unlike a release the record stays, abandoned, for the next caller to ask."""


def _jsonable(obj: Any) -> Any:
    """A stable stand-in for a value JSON cannot encode, so payloads hash the same in every
    process: bytes by content, sets sorted, dataclasses and pydantic models by their fields,
    UUIDs, decimals, dates and paths by their text; anything else by its type only."""
    if isinstance(obj, (bytes, bytearray)):
        return {"bytes": obj.hex()}
    if isinstance(obj, (set, frozenset)):
        return sorted(_CANONICAL.encode(item) for item in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"dataclass": type(obj).__qualname__, "fields": dataclasses.asdict(obj)}
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return {"model": type(obj).__qualname__, "fields": dump()}
    if isinstance(obj, (uuid.UUID, decimal.Decimal, datetime.date, datetime.time, PurePath)):
        return {type(obj).__name__: str(obj)}
    return f"<{type(obj).__module__}.{type(obj).__qualname__}>"


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=_jsonable, ensure_ascii=False)
_IN_ORDER = json.JSONEncoder(separators=(",", ":"), default=_jsonable, ensure_ascii=False)


def payload_hash(payload: Any) -> str | None:
    """SHA-256 (hex, 32 chars) of the payload's canonical JSON; ``None`` for no payload.

    Keys are sorted, so ``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}`` are the same payload;
    values JSON cannot encode are replaced by stable stand-ins (see ``_jsonable``).
    """
    if payload is None:
        return None
    try:
        try:
            text = _CANONICAL.encode(payload)
        except TypeError:  # dict keys of mixed types cannot be sorted: keep their order
            text = _IN_ORDER.encode(payload)
    except (ValueError, RecursionError) as exc:  # a circular or absurdly deep payload
        raise TypeError(f"the payload cannot be hashed: {exc}") from exc
    # surrogatepass: a lone surrogate (from undecodable bytes) hashes too, and only as itself
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _check_key(key: Any) -> str:
    if key is None or key == "":
        raise IdempotencyKeyMissing("an idempotency key is required and must not be empty")
    return key if isinstance(key, str) else str(key)


class _Poll:
    """How long a waiter sleeps before looking at the store again.

    Never longer than the holder's remaining lease (then the key may be taken over); for
    stores shared with other processes also never longer than a backoff that starts at
    10 ms and grows to 250 ms, since only in-process completions wake a waiter early.
    """

    def __init__(self, local_only: bool) -> None:
        self.local_only = local_only
        self.step = 0.01

    def next(self, claim: Claim) -> float:
        until_expiry = claim.remaining + 0.002
        if self.local_only:
            return until_expiry
        step, self.step = self.step, min(self.step * 1.5, 0.25)
        return min(until_expiry, step)


class Idempotency:
    """Run a function once per key, against a store shared by every caller.

    ``ttl`` is how long a result is kept (and replayed), in seconds, and how long a key whose
    holder stopped without recording its outcome is remembered as such; ``lease`` how long a
    holder that stops renewing keeps the key; ``on_in_progress`` what a duplicate does while
    the first call runs: ``"raise"`` or ``"wait"``; ``on_abandoned`` what a caller does with a
    key whose holder stopped before recording its outcome: ``"rerun"`` (at-least-once),
    ``"raise"`` (at-most-once: :class:`OutcomeUnknown`) or a ``reconcile(key)`` function that
    finds out (see the module docstring).
    """

    def __init__(
        self,
        store: Backend | None = None,
        *,
        ttl: float = 3600,
        lease: float = 60,
        on_in_progress: Literal["raise", "wait"] = "raise",
        on_abandoned: OnAbandoned = "rerun",
    ) -> None:
        if on_in_progress not in ("raise", "wait"):
            raise ValueError(f"on_in_progress must be 'raise' or 'wait', not {on_in_progress!r}")
        if not callable(on_abandoned) and on_abandoned not in ("rerun", "raise"):
            raise ValueError(
                f"on_abandoned must be 'rerun', 'raise' or a reconcile(key) function, not {on_abandoned!r}"
            )
        self._store = store
        self.ttl = check_duration(ttl, "ttl")
        self.lease = check_duration(lease, "lease")
        self.on_in_progress = on_in_progress
        self.on_abandoned = on_abandoned

    def __repr__(self) -> str:
        policy = (
            self.on_abandoned if isinstance(self.on_abandoned, str) else getattr(self.on_abandoned, "__name__", "?")
        )
        return (
            f"Idempotency({self.store!r}, ttl={self.ttl:g}, lease={self.lease:g}, "
            f"on_in_progress={self.on_in_progress!r}, on_abandoned={policy!r})"
        )

    @property
    def store(self) -> Backend:
        return self._store if self._store is not None else default_backend()

    # ------------------------------------------------------------------ decisions
    @staticmethod
    def _store_key(key: Any) -> str:
        return compose_key("idem", _check_key(key))

    def _claim_args(self, phash: str | None) -> dict[str, Any]:
        """Every claim keeps its record ``ttl`` past its lease, so that an abandoned key is known
        as such; only at-most-once leaves an abandoned record as it is."""
        return {"lease": self.lease, "payload": phash, "keep": self.ttl, "take_abandoned": self.on_abandoned != "raise"}

    def _settle(self, key: str, claim: Claim, phash: str | None, user_key: Any = None) -> tuple[bool, Any]:
        """Turn a claim into (finished, value): a replayed result, or an error, or go on.
        ``key`` names the key in messages; ``user_key`` is the caller's (what ``resolve`` takes)."""
        if claim.status != "acquired" and phash and claim.payload and claim.payload != phash:
            raise IdempotencyPayloadMismatch(f"idempotency key {key!r} was first used with a different payload")
        if claim.status == "abandoned":
            raise OutcomeUnknown(
                f"idempotency key {key!r}: its holder (fence {claim.fence}) stopped before recording whether it "
                "ran, and on_abandoned='raise' does not run it again; find out, then resolve(key, result, "
                f"fence={claim.fence}) if it ran or release(key, fence={claim.fence}) to let it run",
                key=key if user_key is None else user_key,
                fence=claim.fence,
            )
        if claim.status == "done":
            result = claim.result
            if isinstance(result, Unstorable):
                raise TypeError(
                    f"idempotency key {key!r} already ran, but its result could not be stored to replay "
                    f"({result.reason}); it will not run again until the record expires"
                )
            return True, result
        if claim.status == "busy" and self.on_in_progress == "raise":
            exc = IdempotencyInProgress(
                f"idempotency key {key!r} is being processed; retry in {claim.remaining:.2f}s at most"
            )
            exc.retry_after = claim.remaining  # type: ignore[attr-defined]
            raise exc
        return False, None

    @staticmethod
    def _unstorable(key: str, value: Any, error: Exception) -> Unstorable:
        """What is stored for a result the store cannot keep: the key is done, without a value."""
        warnings.warn(
            f"dupguard: the result of {key!r} cannot be stored ({error}); "
            "duplicates will get TypeError instead of a replay",
            RuntimeWarning,
            stacklevel=6,
        )
        return Unstorable(f"{type(value).__qualname__}: {error}")

    def _unrecorded(self, key: str, value: Any, error: StoreError) -> StoreError:
        exc = StoreError(
            f"idempotency key {key!r}: the function ran but its result could not be "
            f"recorded ({error}); do not retry blindly, it may run again"
        )
        exc.retryable = False
        exc.executed = True  # type: ignore[attr-defined]
        exc.result = value  # type: ignore[attr-defined]
        return exc

    @staticmethod
    def _before_start(error: StoreError) -> StoreError:
        error.executed = False  # type: ignore[attr-defined]
        return error

    # ------------------------------------------------------------------ abandoned keys
    def resolve(self, key: str, result: Any, *, fence: int) -> None:
        """Record ``result`` as the outcome of a key whose holder ``fence`` stopped without
        recording it (see :class:`OutcomeUnknown`): later calls replay it, nothing runs.

        A fenced write, the one the holder would have made: ``LeaseLost`` if another fence
        holds or completed the key since; after someone else resolved it under the same fence
        it changes nothing (the first resolution stays)."""
        self.store.complete(self._store_key(key), fence, result, ttl=self.ttl)

    def release(self, key: str, *, fence: int) -> bool:
        """Declare that the call of holder ``fence`` did not happen: the next call runs the key.
        True if released; False if nothing was held under ``fence`` (already released, or the
        record expired); ``LeaseLost`` if another fence holds or completed it."""
        return self.store.release(self._store_key(key), fence)

    async def aresolve(self, key: str, result: Any, *, fence: int) -> None:
        """:meth:`resolve` for async code."""
        await self.store.acomplete(self._store_key(key), fence, result, ttl=self.ttl)

    async def arelease(self, key: str, *, fence: int) -> bool:
        """:meth:`release` for async code."""
        return await self.store.arelease(self._store_key(key), fence)

    def _rerun_warning(self, key: str, claim: Claim) -> None:
        log.warning(
            "dupguard: idempotency key %r runs again: its holder (fence %s) stopped before recording whether it "
            "ran (on_abandoned='rerun': at-least-once)",
            key,
            claim.expired_holder,
        )

    def _give_back_undecided(self, store: Backend, skey: str, fence: int, exc: BaseException) -> None:
        """``reconcile`` failed: end our lease at once but keep the record abandoned (a renewal
        to a moment from now, not a release), so the next caller asks again."""
        try:
            store.renew(skey, fence, lease=_GIVE_BACK)
        except (LeaseLost, StoreError) as failure:
            _note(exc, skey, failure)

    async def _agive_back_undecided(self, store: Backend, skey: str, fence: int, exc: BaseException) -> None:
        try:
            await store.arenew(skey, fence, lease=_GIVE_BACK)
        except (LeaseLost, StoreError) as failure:
            _note(exc, skey, failure)

    # ------------------------------------------------------------------ sync
    def run(self, key: str, fn: Callable[[], T], *, payload: Any = None) -> T:
        """Run ``fn()`` once for ``key``; duplicates replay, wait or raise (see the class)."""
        return self._run(self._store_key(key), key, fn, payload, key)

    def _run(self, skey: str, key: str, fn: Callable[[], T], payload: Any, user_key: Any) -> T:
        phash = payload_hash(payload)
        store = self.store
        waiters = store.waiters if self.on_in_progress == "wait" else None
        poll = _Poll(store.local_only)
        while True:
            fut = waiters.register(skey) if waiters is not None else None
            try:
                try:
                    claim = store.claim(skey, **self._claim_args(phash))
                except StoreError as exc:
                    raise self._before_start(exc)
                if claim.acquired:
                    break
                finished, value = self._settle(key, claim, phash, user_key)
                if finished:
                    return value
                _waiters.wait(fut, poll.next(claim))  # type: ignore[arg-type]
            finally:
                if fut is not None:
                    waiters.unregister(skey, fut)  # type: ignore[union-attr]
        return self._execute(store, key, skey, claim, fn, user_key)

    def _execute(self, store: Backend, key: str, skey: str, claim: Claim, fn: Callable[[], T], user_key: Any) -> T:
        fence = claim.fence
        lease = Lease(store, skey, fence, ttl=self.lease, max_run=self.ttl).start()
        if claim.expired_holder is not None:
            reconcile = self.on_abandoned
            if not callable(reconcile):
                self._rerun_warning(key, claim)
            else:
                try:
                    found = reconcile(user_key)
                    if inspect.isawaitable(found):
                        if inspect.iscoroutine(found):
                            found.close()
                        raise TypeError("on_abandoned returned an awaitable: use arun(), or a sync reconcile function")
                except BaseException as exc:
                    lease.stop()
                    self._give_back_undecided(store, skey, fence, exc)
                    raise
                if found is not MISSING:  # it happened: its answer is the completion
                    try:
                        return self._record(store, key, skey, fence, found)
                    finally:
                        lease.stop()
        try:
            value = fn()
        except BaseException as exc:
            try:
                lease.release()
            except (LeaseLost, StoreError) as failure:
                _note(exc, skey, failure)
            raise
        try:  # the heartbeat keeps the key ours until the result is recorded
            return self._record(store, key, skey, fence, value)
        finally:
            lease.stop()

    def _record(self, store: Backend, key: str, skey: str, fence: int, value: T) -> T:
        stored: Any = value
        deadline = time.monotonic() + self.lease
        delay = 0.05
        while True:
            try:
                store.complete(skey, fence, stored, ttl=self.ttl)
                return value
            except TypeError as exc:  # raised by encode_result, before the store was touched
                if stored is not value:
                    raise
                stored = self._unstorable(key, value, exc)
            except StoreError as exc:  # the function ran: keep trying to record it
                if time.monotonic() + delay > deadline:
                    if self._last_resort(store, skey, fence, stored, exc):
                        self._unstorable(key, value, exc)
                        return value
                    raise self._unrecorded(key, value, exc) from exc
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _last_resort(self, store: Backend, skey: str, fence: int, stored: Any, error: StoreError) -> bool:
        """The store kept refusing the value: record the key as done without it, if it lets us
        (a server limit on value size refuses the value, not a small marker). True if recorded."""
        if isinstance(stored, Unstorable):
            return False
        try:
            store.complete(skey, fence, Unstorable(f"the store refused it: {error}"), ttl=self.ttl)
        except (StoreError, LeaseLost):
            return False
        return True

    async def _alast_resort(self, store: Backend, skey: str, fence: int, stored: Any, error: StoreError) -> bool:
        if isinstance(stored, Unstorable):
            return False
        try:
            await store.acomplete(skey, fence, Unstorable(f"the store refused it: {error}"), ttl=self.ttl)
        except (StoreError, LeaseLost):
            return False
        return True

    # ------------------------------------------------------------------ async
    async def arun(self, key: str, afn: Callable[[], Awaitable[T]], *, payload: Any = None) -> T:
        """``await afn()`` once for ``key``; duplicates replay, wait or raise (see the class)."""
        return await self._arun(self._store_key(key), key, afn, payload, key)

    async def _arun(self, skey: str, key: str, afn: Callable[[], Awaitable[T]], payload: Any, user_key: Any) -> T:
        phash = payload_hash(payload)
        store = self.store
        waiters = store.waiters if self.on_in_progress == "wait" else None
        poll = _Poll(store.local_only)
        while True:
            fut = waiters.register(skey) if waiters is not None else None
            try:
                try:
                    claim = await store.aclaim(skey, **self._claim_args(phash))
                except StoreError as exc:
                    raise self._before_start(exc)
                if claim.acquired:
                    break
                finished, value = self._settle(key, claim, phash, user_key)
                if finished:
                    return value
                await _waiters.await_(fut, poll.next(claim))  # type: ignore[arg-type]
            finally:
                if fut is not None:
                    waiters.unregister(skey, fut)  # type: ignore[union-attr]
        return await self._aexecute(store, key, skey, claim, afn, user_key)

    async def _aexecute(
        self, store: Backend, key: str, skey: str, claim: Claim, afn: Callable[[], Awaitable[T]], user_key: Any
    ) -> T:
        fence = claim.fence
        lease = Lease(store, skey, fence, ttl=self.lease, max_run=self.ttl).astart()
        if claim.expired_holder is not None:
            reconcile = self.on_abandoned
            if not callable(reconcile):
                self._rerun_warning(key, claim)
            else:
                try:
                    found = reconcile(user_key)
                    if inspect.isawaitable(found):
                        found = await found
                except BaseException as exc:
                    await lease.astop()
                    await self._agive_back_undecided(store, skey, fence, exc)
                    raise
                if found is not MISSING:
                    try:
                        return await self._arecord(store, key, skey, fence, found)
                    finally:
                        await lease.astop()
        try:
            value = await afn()
        except BaseException as exc:  # includes cancellation: give the key back
            try:
                await lease.arelease()
            except (LeaseLost, StoreError) as failure:
                _note(exc, skey, failure)
            raise
        try:
            return await self._arecord(store, key, skey, fence, value)
        finally:
            await lease.astop()

    async def _arecord(self, store: Backend, key: str, skey: str, fence: int, value: T) -> T:
        stored: Any = value
        deadline = time.monotonic() + self.lease
        delay = 0.05
        while True:
            try:
                await store.acomplete(skey, fence, stored, ttl=self.ttl)
                return value
            except TypeError as exc:
                if stored is not value:
                    raise
                stored = self._unstorable(key, value, exc)
            except StoreError as exc:
                if time.monotonic() + delay > deadline:
                    if await self._alast_resort(store, skey, fence, stored, exc):
                        self._unstorable(key, value, exc)
                        return value
                    raise self._unrecorded(key, value, exc) from exc
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)


def idempotent(
    store: Backend | None = None,
    *,
    key: Callable[..., Any],
    scope: str | None = None,
    on_in_progress: Literal["raise", "wait"] = "raise",
    ttl: float = 3600,
    lease: float = 60,
    payload: Callable[..., Any] | None = None,
    on_abandoned: OnAbandoned = "rerun",
) -> Callable:
    """Decorate a sync or async function so each key runs once (see :class:`Idempotency`).

    ``key(*args, **kwargs)`` computes the idempotency key from the call's arguments; ``None``
    or ``""`` raises ``IdempotencyKeyMissing``. ``scope`` namespaces the keys (default: the
    function's module and qualified name), so two functions can use the same keys.
    ``payload(*args, **kwargs)`` is what must match between calls with one key; by default
    all the arguments, so a key reused for a different call raises
    ``IdempotencyPayloadMismatch`` instead of silently replaying someone else's result.
    ``on_abandoned`` is :class:`Idempotency`'s; a ``reconcile`` function gets the key that
    ``key(...)`` returned. The decorated function has ``.resolve(key, result, *, fence)`` and
    ``.release(key, *, fence)`` (and ``aresolve``/``arelease``) for the keys it computes, and
    ``.idempotency``, the :class:`Idempotency` it runs on.
    """
    if store is not None and not isinstance(store, Backend):
        raise TypeError(
            "idempotent() takes a store (or None) and keyword arguments: @idempotent(key=lambda order_id: order_id)"
        )
    idem = Idempotency(store, ttl=ttl, lease=lease, on_in_progress=on_in_progress, on_abandoned=on_abandoned)

    def decorate(fn: Callable) -> Callable:
        namespace = scope or f"{fn.__module__}.{fn.__qualname__}"

        def store_key(k: Any) -> str:
            # the scope and the key are separate parts: scope "a" with key "b:c" is not "a:b" with "c"
            return compose_key("idem", namespace, _check_key(k))

        def prepare(args: tuple, kwargs: dict) -> tuple[str, str, Any, str]:
            k = _check_key(key(*args, **kwargs))
            p = payload(*args, **kwargs) if payload is not None else {"args": args, "kwargs": kwargs}
            return store_key(k), f"{namespace}:{k}", p, k

        def resolve(k: Any, result: Any, *, fence: int) -> None:
            idem.store.complete(store_key(k), fence, result, ttl=idem.ttl)

        def release(k: Any, *, fence: int) -> bool:
            return idem.store.release(store_key(k), fence)

        async def aresolve(k: Any, result: Any, *, fence: int) -> None:
            await idem.store.acomplete(store_key(k), fence, result, ttl=idem.ttl)

        async def arelease(k: Any, *, fence: int) -> bool:
            return await idem.store.arelease(store_key(k), fence)

        def expose(wrapped: Callable) -> Callable:
            wrapped.idempotency = idem  # type: ignore[attr-defined]
            wrapped.resolve = resolve  # type: ignore[attr-defined]
            wrapped.release = release  # type: ignore[attr-defined]
            wrapped.aresolve = aresolve  # type: ignore[attr-defined]
            wrapped.arelease = arelease  # type: ignore[attr-defined]
            return wrapped

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                skey, name, p, k = prepare(args, kwargs)
                return await idem._arun(skey, name, lambda: fn(*args, **kwargs), p, k)

            return expose(awrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            skey, name, p, k = prepare(args, kwargs)
            return idem._run(skey, name, lambda: fn(*args, **kwargs), p, k)

        return expose(wrapper)

    return decorate
