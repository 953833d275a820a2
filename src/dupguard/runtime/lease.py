"""Leases with fencing, kept alive by a heartbeat; ``turn_lease`` for one consumer per turn.

A :class:`Lease` is the value a successful claim hands to its owner: the key and the
**fence**. While the owner works, a heartbeat renews the lease every third of its length, so
only an owner that died (process killed, host gone) or is stuck stops renewing and can be
taken over. A takeover gives the new owner a higher fence, and every later write by the old
owner (``complete``, ``renew``, ``release``) is refused with ``LeaseLost``: pass
``lease.fence`` on to other systems as a fencing token and they can refuse it too.

Heartbeats of sync code run on one shared daemon thread (a timer heap), so a lease costs a
heap entry, not a thread. Heartbeats of async code run on the owner's loop: one timer per
loop, over a heap of that loop's leases, starts a short renewal task for each lease that
comes due; if that loop is blocked the renewals stop, which is exactly what should happen to
a stuck owner. (A ``loop.call_later`` per lease, cancelled when the lease ends, would stay in
the loop's own timer heap until it would have fired, 10–20 s later, and make every timer the
application sets pay for a deeper heap.) A call that runs longer than
``max_run`` (the idempotency ``ttl``) is also treated as stuck: its heartbeat stops and the
lease runs out.

``turn_lease(backend, key, ttl=…)`` is "single-consumer ownership of each chat
turn": entering it claims the turn, leaving it normally marks the turn done (a redelivered
job then gets :class:`TurnCompleted`), leaving with an exception gives the turn back so the
job can be retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import math
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from .backends import Backend, check_duration
from .backends.memory import default_backend
from .errors import DupguardError, IdempotencyInProgress, LeaseLost, StoreError

__all__ = ["Lease", "TurnCompleted", "aturn_lease", "turn_lease"]

log = logging.getLogger("dupguard.runtime")


class TurnCompleted(DupguardError):
    """This turn was already processed to the end by some consumer: ack the job, drop it."""


class Lease:
    """Ownership of ``key`` under ``fence`` for ``ttl`` seconds at a time, renewed by a heartbeat.

    ``heartbeat`` is the renewal interval (default ``ttl / 3``; ``0`` turns it off, then the
    owner renews with :meth:`check`). ``max_run`` caps how long the heartbeat keeps a call
    alive. ``lost`` turns true once the store refused a renewal.
    """

    def __init__(
        self,
        backend: Backend,
        key: str,
        fence: int,
        *,
        ttl: float,
        heartbeat: float | None = None,
        max_run: float | None = None,
    ) -> None:
        self.backend = backend
        self.key = key
        self.fence = fence
        self.ttl = check_duration(ttl, "ttl")
        self.interval = self.ttl / 3 if heartbeat is None else check_duration(heartbeat, "heartbeat", allow_zero=True)
        self.max_run = None if max_run is None else check_duration(max_run, "max_run")
        self.started = time.monotonic()
        self._lost: LeaseLost | None = None
        self._stopped = False
        self._beat_lock = threading.Lock()  # held while a sync renewal is in flight
        self._on_thread = False  # renewed by the shared heartbeat thread
        self._beats: _LoopHeartbeats | None = None  # renewed by its loop's heartbeat timer
        self._in_heap = False  # waiting in that timer's heap
        self._task: asyncio.Task | None = None

    def __repr__(self) -> str:
        return f"Lease(key={self.key!r}, fence={self.fence}, lost={self.lost})"

    @property
    def lost(self) -> bool:
        """True once the store refused this lease (a takeover or a completion by another fence)."""
        return self._lost is not None

    # ------------------------------------------------------------------ explicit checks
    def check(self) -> None:
        """Ask the store whether the lease is still ours (and extend it); ``LeaseLost`` if not.

        Call it right before an effect that must not happen twice (publishing a reply,
        acking a job). ``StoreError`` means the store could not answer: the lease may still be
        ours, but nothing proves it.
        """
        if self._lost is not None:
            raise self._lost
        try:
            self.backend.renew(self.key, self.fence, lease=self.ttl)
        except LeaseLost as exc:
            self._lost = exc
            raise

    async def acheck(self) -> None:
        """:meth:`check` for async code."""
        if self._lost is not None:
            raise self._lost
        try:
            await self.backend.arenew(self.key, self.fence, lease=self.ttl)
        except LeaseLost as exc:
            self._lost = exc
            raise

    # ------------------------------------------------------------------ heartbeat (sync)
    def _next_delay(self, ok: bool) -> float | None:
        if self._stopped or self._lost is not None:
            return None
        if self.max_run is not None and time.monotonic() - self.started >= self.max_run:
            log.warning(
                "dupguard: %r ran longer than %.0fs: treated as stuck, no more renewals", self.key, self.max_run
            )
            return None
        # after a store error retry sooner, but keep some spacing
        return self.interval if ok else max(0.05, min(self.interval / 4, 1.0))

    def _beat(self) -> float | None:
        """One renewal, on the heartbeat thread; returns the delay to the next one or None."""
        with self._beat_lock:
            if self._stopped:
                return None
            try:
                self.backend.renew(self.key, self.fence, lease=self.ttl)
                ok = True
            except LeaseLost as exc:
                self._lost = exc
                return None
            except StoreError as exc:
                log.debug("dupguard: renewing %r failed: %s", self.key, exc)
                ok = False
            except Exception:  # a broken store must not kill the shared heartbeat thread
                log.exception("dupguard: renewing %r failed", self.key)
                ok = False
        return self._next_delay(ok)

    def start(self) -> Lease:
        """Start renewing on the shared heartbeat thread (sync owners)."""
        if self.interval > 0:
            self._on_thread = True
            _HEARTBEATS.add(self, self.interval)
        return self

    def stop(self) -> None:
        """Stop renewing; waits for a renewal in flight so none lands after this returns."""
        if self._stopped:
            return
        self._stopped = True
        if self._on_thread:
            with self._beat_lock:  # a renewal in flight finishes first
                pass
            _HEARTBEATS.discard()

    # ------------------------------------------------------------------ heartbeat (async)
    def astart(self) -> Lease:
        """Start renewing on the running loop (async owners)."""
        if self.interval > 0:
            self._beats = _loop_heartbeats(asyncio.get_running_loop())
            self._beats.add(self, self.interval)
        return self

    def _due(self) -> None:
        """Called by the loop's heartbeat timer: renew in a task of its own."""
        if not self._stopped:
            assert self._beats is not None
            self._task = self._beats.loop.create_task(self._abeat())

    async def _abeat(self) -> None:
        ok = False
        try:
            await self.backend.arenew(self.key, self.fence, lease=self.ttl)
            ok = True
        except LeaseLost as exc:
            self._lost = exc
        except StoreError as exc:
            log.debug("dupguard: renewing %r failed: %s", self.key, exc)
        except Exception:
            log.exception("dupguard: renewing %r failed", self.key)
        delay = self._next_delay(ok)
        if delay is not None and self._beats is not None:
            self._beats.add(self, delay)
        self._task = None

    async def astop(self) -> None:
        """Stop renewing; waits for a renewal in flight so none lands after this returns."""
        if self._on_thread:  # started by sync code, stopped from async code
            if not self._stopped:
                await asyncio.to_thread(self.stop)
            return
        if not self._stopped:
            self._stopped = True
            if self._in_heap and self._beats is not None:
                self._beats.discard()
        task = self._task
        if task is not None and task is not asyncio.current_task():
            with contextlib.suppress(Exception):  # _abeat reports its own errors
                await asyncio.shield(task)

    # ------------------------------------------------------------------ ending
    def release(self) -> bool:
        self.stop()
        return self.backend.release(self.key, self.fence)

    async def arelease(self) -> bool:
        await self.astop()
        return await self.backend.arelease(self.key, self.fence)

    def complete(self, result: Any = None, *, ttl: float) -> None:
        self.stop()
        self.backend.complete(self.key, self.fence, result, ttl=ttl)

    async def acomplete(self, result: Any = None, *, ttl: float) -> None:
        await self.astop()
        await self.backend.acomplete(self.key, self.fence, result, ttl=ttl)


class _Heartbeats:
    """One daemon thread renewing every sync lease in the process, from a timer heap.

    Stopped leases are skipped when they come due; when they make up more than half of a
    large heap it is rebuilt, so many short calls cannot grow it without bound.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Lease]] = []
        self._seq = itertools.count()
        self._stopped_in_heap = 0
        self._thread: threading.Thread | None = None
        self._pid = 0

    def add(self, lease: Lease, delay: float) -> None:
        with self._cond:
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._heap, self._stopped_in_heap, self._pid = [], 0, os.getpid()
                self._thread = threading.Thread(target=self._run, name="dupguard-heartbeat", daemon=True)
                self._thread.start()
            heapq.heappush(self._heap, (time.monotonic() + delay, next(self._seq), lease))
            if self._heap[0][2] is lease:
                self._cond.notify()

    def discard(self) -> None:
        with self._cond:
            self._stopped_in_heap += 1
            if self._stopped_in_heap > 512 and self._stopped_in_heap * 2 > len(self._heap):
                self._heap = [entry for entry in self._heap if not entry[2]._stopped]
                heapq.heapify(self._heap)
                self._stopped_in_heap = 0

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][2]._stopped:
                        heapq.heappop(self._heap)
                        self._stopped_in_heap = max(0, self._stopped_in_heap - 1)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    due = self._heap[0][0] - time.monotonic()
                    if due <= 0:
                        lease = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(due)
            delay = lease._beat()
            if delay is not None:
                self.add(lease, delay)


_HEARTBEATS = _Heartbeats()


class _LoopHeartbeats:
    """One timer on one event loop for every async lease renewed on it (see the module docstring).

    The timer is set for the earliest lease due; when it fires, each lease due starts its
    renewal task, which puts the lease back with its next delay. A lease that stops stays in
    the heap and is skipped when it comes due; when stopped leases make up more than half of
    a large heap it is rebuilt, as in :class:`_Heartbeats`.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._heap: list[tuple[float, int, Lease]] = []
        self._seq = itertools.count()
        self._handle: asyncio.TimerHandle | None = None
        self._when = math.inf  # when the timer fires
        self._stopped_in_heap = 0

    def add(self, lease: Lease, delay: float) -> None:
        when = self.loop.time() + delay
        heapq.heappush(self._heap, (when, next(self._seq), lease))
        lease._in_heap = True
        if when < self._when:
            if self._handle is not None:
                self._handle.cancel()
            self._handle, self._when = self.loop.call_at(when, self._fire), when

    def discard(self) -> None:
        self._stopped_in_heap += 1
        if self._stopped_in_heap > 512 and self._stopped_in_heap * 2 > len(self._heap):
            self._heap = [entry for entry in self._heap if not entry[2]._stopped]
            heapq.heapify(self._heap)
            self._stopped_in_heap = 0

    def _fire(self) -> None:
        self._handle, self._when = None, math.inf
        heap, now = self._heap, self.loop.time()
        while heap and heap[0][0] <= now:
            lease = heapq.heappop(heap)[2]
            lease._in_heap = False
            if lease._stopped:
                self._stopped_in_heap = max(0, self._stopped_in_heap - 1)
            else:
                lease._due()
        if heap:
            self._handle, self._when = self.loop.call_at(heap[0][0], self._fire), heap[0][0]
        else:  # nothing left to renew on this loop: forget it (a later lease makes a new one)
            with _LOOP_LOCK:
                if _LOOP_HEARTBEATS.get(self.loop) is self:
                    del _LOOP_HEARTBEATS[self.loop]


_LOOP_HEARTBEATS: dict[asyncio.AbstractEventLoop, _LoopHeartbeats] = {}
_LOOP_LOCK = threading.Lock()


def _loop_heartbeats(loop: asyncio.AbstractEventLoop) -> _LoopHeartbeats:
    """The heartbeat timer of ``loop``; entries of closed loops (ended with leases still in their
    heap) are dropped here, so that a process running many loops one after another keeps none."""
    beats = _LOOP_HEARTBEATS.get(loop)
    if beats is None:
        with _LOOP_LOCK:
            beats = _LOOP_HEARTBEATS.get(loop)
            if beats is None:
                for other in [other for other in _LOOP_HEARTBEATS if other.is_closed()]:
                    del _LOOP_HEARTBEATS[other]
                beats = _LOOP_HEARTBEATS[loop] = _LoopHeartbeats(loop)
    return beats


def _claim_turn(claim: Any, key: str) -> None:
    if claim.status == "done":
        raise TurnCompleted(f"turn {key!r} was already completed")
    if claim.status == "busy":
        exc = IdempotencyInProgress(f"turn {key!r} is held by another consumer for up to {claim.remaining:.1f}s more")
        exc.retry_after = claim.remaining  # type: ignore[attr-defined]
        raise exc


def _check_turn(ttl: float, heartbeat: float | None, keep: float) -> None:
    """Every duration, before the turn is claimed: a bad ``keep`` must not surface only when
    the block has run and its completion is refused."""
    check_duration(ttl, "ttl")
    check_duration(keep, "keep")
    if heartbeat is not None:
        check_duration(heartbeat, "heartbeat", allow_zero=True)


def _note(error: BaseException, key: str, failure: Exception) -> None:
    """Releasing after a failure failed too: keep the original error, mention this one."""
    if hasattr(error, "add_note"):  # Python 3.11+
        error.add_note(f"dupguard: releasing {key!r} failed: {failure}")


@contextmanager
def turn_lease(
    backend: Backend | None, key: str, *, ttl: float = 60.0, heartbeat: float | None = None, keep: float = 86400.0
) -> Iterator[Lease]:
    """Own one chat turn (or queue job) while the block runs; one consumer at a time.

    Raises ``IdempotencyInProgress`` (retryable, ``retry_after`` seconds) when another live
    consumer holds the turn and :class:`TurnCompleted` when it was already finished. A
    normal exit records the turn as done for ``keep`` seconds, so a redelivered job is not
    processed again; ``LeaseLost`` at that point means the lease was taken over while the
    block ran, and the other consumer's work stands. An exception gives the turn back.
    Call ``lease.check()`` right before effects that must happen once.
    """
    _check_turn(ttl, heartbeat, keep)
    backend = backend or default_backend()
    claim = backend.claim(key, lease=ttl)
    _claim_turn(claim, key)
    lease = Lease(backend, key, claim.fence, ttl=ttl, heartbeat=heartbeat).start()
    try:
        yield lease
    except BaseException as exc:
        try:
            lease.release()
        except (LeaseLost, StoreError) as failure:
            _note(exc, key, failure)
        raise
    lease.complete(None, ttl=keep)


@asynccontextmanager
async def aturn_lease(
    backend: Backend | None, key: str, *, ttl: float = 60.0, heartbeat: float | None = None, keep: float = 86400.0
) -> AsyncIterator[Lease]:
    """:func:`turn_lease` for async code; the heartbeat runs on the caller's loop."""
    _check_turn(ttl, heartbeat, keep)
    backend = backend or default_backend()
    claim = await backend.aclaim(key, lease=ttl)
    _claim_turn(claim, key)
    lease = Lease(backend, key, claim.fence, ttl=ttl, heartbeat=heartbeat).astart()
    try:
        yield lease
    except BaseException as exc:
        try:
            await lease.arelease()
        except (LeaseLost, StoreError) as failure:
            _note(exc, key, failure)
        raise
    await lease.acomplete(None, ttl=keep)
