"""Wake-ups that work across threads and across event loops.

A waiter registers a private ``concurrent.futures.Future`` for a key *before* it looks at
the store, and the holder resolves every future registered for the key after it completes or
releases. Registering first means a completion that lands between "the store said busy" and
"start waiting" is never missed: the future is already resolved and the wait returns at once.

Sync waiters block on ``Future.result(timeout)``; async waiters ``await`` the same future
through ``asyncio.wrap_future`` on *their own* loop, so a holder on one loop (or a plain
thread) wakes waiters on any number of other loops. Each waiter owns its future, so a waiter
that times out and cancels it cannot disturb anybody else's. No lock is held across an
``await``: the registry's lock only guards a dict and is released before anyone waits.

Only waiters in this process can be woken this way; for stores shared between processes the
callers also poll (see ``Idempotency``), with the wake-up cutting the wait short locally.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref

__all__ = ["Waiters", "channel_waiters"]


class Waiters:
    """Per-key sets of private futures; ``notify(key)`` resolves all of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, set[concurrent.futures.Future]] = {}

    def register(self, key: str) -> concurrent.futures.Future:
        fut: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            self._by_key.setdefault(key, set()).add(fut)
        return fut

    def unregister(self, key: str, fut: concurrent.futures.Future) -> None:
        with self._lock:
            futs = self._by_key.get(key)
            if futs is not None:
                futs.discard(fut)
                if not futs:
                    del self._by_key[key]

    def notify(self, key: str) -> None:
        with self._lock:
            futs = self._by_key.pop(key, None)
        if futs:
            for fut in futs:
                if not fut.done():
                    try:
                        fut.set_result(None)
                    except concurrent.futures.InvalidStateError:  # cancelled meanwhile
                        pass

    def waiting(self, key: str) -> int:
        """How many waiters are registered for ``key`` right now (for tests and metrics)."""
        with self._lock:
            return len(self._by_key.get(key, ()))


def wait(fut: concurrent.futures.Future, timeout: float) -> bool:
    """Block until ``fut`` resolves or ``timeout`` passes; True when woken."""
    try:
        fut.result(timeout=max(0.0, timeout))
        return True
    except concurrent.futures.TimeoutError:
        return False
    except concurrent.futures.CancelledError:
        return False


async def await_(fut: concurrent.futures.Future, timeout: float) -> bool:
    """Await ``fut`` from the running loop, at most ``timeout`` seconds; True when woken."""
    if fut.done():
        return True
    try:
        await asyncio.wait_for(asyncio.wrap_future(fut), max(0.0, timeout))
        return True
    except asyncio.TimeoutError:
        # wait_for cancelled the wrapper and with it our private future: nobody else owns it
        return False


_channels: weakref.WeakValueDictionary[str, Waiters] = weakref.WeakValueDictionary()
_channels_lock = threading.Lock()


def channel_waiters(channel: str) -> Waiters:
    """The ``Waiters`` shared by every backend object that names the same store."""
    with _channels_lock:
        w = _channels.get(channel)
        if w is None:
            w = Waiters()
            _channels[channel] = w
        return w
