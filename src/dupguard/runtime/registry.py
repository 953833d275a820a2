"""Per-session objects (agents, chat memories), built once and used one caller at a time.

The fix tutorials give is a dict keyed by session id::

    if session_id not in store:
        store[session_id] = ChatMemoryBuffer.from_defaults()

That check-then-act is two steps: two concurrent first requests of one session both see the
key missing and build two memories (one of them is silently lost); the dict grows forever; and
two requests of the same session still use one object at the same time. :class:`SessionRegistry`
fixes the three:

* :meth:`~SessionRegistry.get` builds exactly one object per session id, however many threads
  ask at once. The factory runs *outside* the registry lock (a slow factory does not block other
  sessions); the other first-comers wait for it on a ``concurrent.futures.Future``. A factory
  error is raised to every waiter and nothing is stored, so the next call tries again.
* :meth:`~SessionRegistry.use` / :meth:`~SessionRegistry.ause` also serialise use of the object
  with a per-session :class:`~dupguard.runtime.guard.InvocationGuard` in ``"wait"`` mode (FIFO,
  across threads and event loops), so a client retry waits for the first request instead of
  corrupting the conversation.
* at most ``max_sessions`` sessions are kept (least recently used go first) and sessions idle
  for ``idle_ttl`` seconds expire. A session that is in use is never evicted by either rule.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar

from .backends import check_duration
from .guard import InvocationGuard

__all__ = ["SessionRegistry"]

T = TypeVar("T")


class _Slot(Generic[T]):
    __slots__ = ("guard", "last_used", "users", "value")

    def __init__(self, value: T, now: float) -> None:
        self.value = value
        self.guard = InvocationGuard("wait")
        self.last_used = now
        self.users = 0  # callers inside use()/ause(); such slots are never evicted


class SessionRegistry(Generic[T]):
    """``factory(session_id)`` → one object per session, bounded and expiring.

    ``on_evict(session_id, obj)`` is called (outside the lock) for every object dropped by the
    LRU bound, idle expiry or :meth:`evict` — e.g. to close connections. ``clock`` is the time
    source (``time.monotonic``), replaceable in tests.
    """

    def __init__(
        self,
        factory: Callable[[str], T],
        *,
        max_sessions: int = 10_000,
        idle_ttl: float | None = 3600,
        on_evict: Callable[[str, T], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be >= 1")
        if idle_ttl is not None:
            idle_ttl = check_duration(idle_ttl, "idle_ttl")
        self._factory = factory
        self._max = max_sessions
        self._ttl = idle_ttl
        self._on_evict = on_evict
        self._clock = clock
        self._lock = threading.Lock()
        self._slots: OrderedDict[str, _Slot[T]] = OrderedDict()
        self._building: dict[str, concurrent.futures.Future] = {}
        self.built = 0  # how many times the factory succeeded (for metrics and tests)

    def __len__(self) -> int:
        with self._lock:
            return len(self._slots)

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._slots

    # -- internals ---------------------------------------------------------------------------

    def _expired_locked(self, now: float) -> list[tuple[str, T]]:
        """Drop idle and surplus sessions (lock held); return them for ``on_evict``."""
        dropped = []
        if self._ttl is not None:
            for sid, slot in list(self._slots.items()):  # oldest use first
                if now - slot.last_used < self._ttl:
                    break
                if slot.users == 0:
                    del self._slots[sid]
                    dropped.append((sid, slot.value))
        if len(self._slots) > self._max:
            for sid, slot in list(self._slots.items()):
                if len(self._slots) <= self._max:
                    break
                if slot.users == 0:
                    del self._slots[sid]
                    dropped.append((sid, slot.value))
        return dropped

    def _idle_expired(self, slot: _Slot[T], now: float) -> bool:
        return self._ttl is not None and slot.users == 0 and now - slot.last_used >= self._ttl

    def _notify(self, dropped: list[tuple[str, T]]) -> None:
        if self._on_evict is not None:
            for sid, value in dropped:
                self._on_evict(sid, value)

    def _slot(self, session_id: str, *, enter: bool) -> _Slot[T]:
        """The session's slot, built if needed; with ``enter`` its user count is raised in the
        same critical section that finds it, so eviction cannot slip in between."""
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        while True:
            with self._lock:
                now = self._clock()
                slot = self._slots.get(session_id)
                if slot is not None and self._idle_expired(slot, now):
                    del self._slots[session_id]
                    dropped = [(session_id, slot.value)]
                    slot = None
                else:
                    dropped = []
                if slot is not None:
                    slot.last_used = now
                    if enter:
                        slot.users += 1
                    self._slots.move_to_end(session_id)
                    building = None
                    leader = False
                else:
                    building = self._building.get(session_id)
                    leader = building is None
                    if leader:
                        building = self._building[session_id] = concurrent.futures.Future()
            self._notify(dropped)
            if slot is not None:
                return slot
            assert building is not None
            if not leader:
                building.result()  # raises the leader's factory error
                continue  # the slot now exists (or was evicted already: build again)
            try:
                value = self._factory(session_id)
            except BaseException as exc:
                with self._lock:
                    del self._building[session_id]
                building.set_exception(exc)
                raise
            with self._lock:
                now = self._clock()
                slot = _Slot(value, now)
                if enter:
                    slot.users += 1
                self._slots[session_id] = slot
                del self._building[session_id]
                self.built += 1
                dropped = self._expired_locked(now)
            building.set_result(None)
            self._notify(dropped)
            return slot

    def _leave(self, slot: _Slot[T], session_id: str) -> None:
        with self._lock:
            slot.users -= 1
            slot.last_used = self._clock()
            if self._slots.get(session_id) is slot:
                self._slots.move_to_end(session_id)  # keep LRU order == last_used order

    # -- public API --------------------------------------------------------------------------

    def get(self, session_id: str) -> T:
        """The session's object, built by ``factory`` on first use (exactly once, even when
        many threads ask at the same moment). Does not serialise use: see :meth:`use`."""
        return self._slot(session_id, enter=False).value

    @contextlib.contextmanager
    def use(self, session_id: str, *, timeout: float | None = None) -> Iterator[T]:
        """``with registry.use(sid) as agent:`` — the session's object, used by one caller at a
        time (FIFO); the session cannot be evicted while inside."""
        slot = self._slot(session_id, enter=True)
        try:
            with slot.guard.hold(session_id, timeout=timeout):
                yield slot.value
        finally:
            self._leave(slot, session_id)

    @contextlib.asynccontextmanager
    async def ause(self, session_id: str, *, timeout: float | None = None) -> AsyncIterator[T]:
        """Async :meth:`use`; waits without blocking the event loop. The factory runs in a
        worker thread on first use so a slow constructor does not stall the loop."""
        if session_id not in self:
            await asyncio.to_thread(self._slot, session_id, enter=False)  # build off-loop
        slot = self._slot(session_id, enter=True)  # found at once (built just now)
        try:
            async with slot.guard.ahold(session_id, timeout=timeout):
                yield slot.value
        finally:
            self._leave(slot, session_id)

    def evict(self, session_id: str) -> bool:
        """Forget a session now (logout, reset). Returns whether it was present. A caller
        currently inside :meth:`use` keeps its object; the next use builds a new one."""
        with self._lock:
            slot = self._slots.pop(session_id, None)
        if slot is None:
            return False
        self._notify([(session_id, slot.value)])
        return True

    def prune(self) -> int:
        """Apply idle expiry and the size bound now; returns how many sessions were dropped.
        (Both also happen on every first use of a session.)"""
        with self._lock:
            dropped = self._expired_locked(self._clock())
        self._notify(dropped)
        return len(dropped)

    def sessions(self) -> list[str]:
        """Session ids, least recently used first."""
        with self._lock:
            return list(self._slots)
