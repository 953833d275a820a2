"""``session_lease``: one turn of a conversation at a time, across workers and hosts.

A conversation's history lives in a store every worker reads (OpenAI Agents' ``SQLiteSession``
or ``SQLAlchemySession``, a LlamaIndex ``Memory`` on a SQL chat store, a LangChain message
history, an ADK session service). Two turns of one session that run at once on two workers
both read the history, both call the model on it, and both append: the second turn never
saw the first, tool calls are repeated and the history ends up interleaved.
:class:`~dupguard.runtime.SessionRegistry` serialises the turns of a session inside one
process; it cannot see the other workers. ``session_lease`` can: it holds a lease on
``session:<id>`` in a backend they share (``SQLiteBackend`` on one host, ``RedisBackend``
across hosts), so the turns of a session run one at a time wherever they arrive::

    with session_lease(store, session_id, ttl=30):
        result = Runner.run_sync(agent, message, session=SQLiteSession(session_id, "chats.db"))

Entering claims the lease, waiting while another turn holds it (at most ``timeout`` seconds,
then :class:`~dupguard.runtime.GuardTimeout`). While the block runs a heartbeat renews the
lease every third of ``ttl``, so a long turn keeps the session and a worker that dies (or
stops renewing: ``max_turn`` caps how long one turn may hold it) loses it after ``ttl``
seconds; the next turn then takes over with a higher fence. Leaving gives the session back
(it is not "done": the next turn claims it again). If the lease was taken over while the
block ran, leaving raises :class:`~dupguard.runtime.LeaseLost`: another turn ran alongside
this one, and the caller should not trust this turn's view of the history (call
``lease.check()`` before writing to be sure the session is still yours).

Waiting turns are woken at once by a release in the same process and otherwise poll the store
(10 ms, growing to 250 ms): turns run one at a time, in no guaranteed order across processes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from . import _waiters
from .backends import Backend, Claim
from .errors import LeaseLost, StoreError
from .guard import GuardTimeout
from .lease import Lease, _note

__all__ = ["asession_lease", "session_lease"]


def _key(scope: str, session_id: str) -> str:
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("session_id must be a non-empty string")
    return f"{scope}:{session_id}"


class _Wait:
    """How long to sleep before claiming again: never past the holder's lease or our deadline;
    for stores shared with other processes also never past a backoff of 10 ms to 250 ms."""

    def __init__(self, backend: Backend, key: str, timeout: float | None) -> None:
        self.local_only = backend.local_only
        self.key = key
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.step = 0.01

    def next(self, claim: Claim) -> float:
        pause = claim.remaining + 0.002
        if not self.local_only:
            pause = min(pause, self.step)
            self.step = min(self.step * 1.5, 0.25)
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise GuardTimeout(
                    f"session {self.key!r} is held by another turn for up to {claim.remaining:.1f}s more"
                )
            pause = min(pause, left)
        return pause


@contextmanager
def session_lease(
    backend: Backend,
    session_id: str,
    *,
    ttl: float = 30.0,
    timeout: float | None = None,
    heartbeat: float | None = None,
    max_turn: float | None = None,
    scope: str = "session",
) -> Iterator[Lease]:
    """Hold ``session_id`` for the duration of the block; other turns of it wait (see the module).

    Yields the :class:`~dupguard.runtime.Lease` (``lease.fence`` is a fencing token for other
    systems, ``lease.check()`` confirms the session is still yours).
    """
    key = _key(scope, session_id)
    waits = _Wait(backend, key, timeout)
    waiters = backend.waiters
    while True:
        fut = waiters.register(key)
        try:
            claim = backend.claim(key, lease=ttl)
            if claim.acquired:
                break
            _waiters.wait(fut, waits.next(claim))
        finally:
            waiters.unregister(key, fut)
    lease = Lease(backend, key, claim.fence, ttl=ttl, heartbeat=heartbeat, max_run=max_turn).start()
    try:
        yield lease
    except BaseException as exc:
        try:
            lease.release()
        except (LeaseLost, StoreError) as failure:
            _note(exc, key, failure)
        raise
    lost = lease.lost
    lease.release()  # LeaseLost when another turn holds the session now
    if lost:
        raise LeaseLost(f"session {key!r}: the lease was lost while the turn ran")


@asynccontextmanager
async def asession_lease(
    backend: Backend,
    session_id: str,
    *,
    ttl: float = 30.0,
    timeout: float | None = None,
    heartbeat: float | None = None,
    max_turn: float | None = None,
    scope: str = "session",
) -> AsyncIterator[Lease]:
    """:func:`session_lease` for async code: waits without blocking the loop; the heartbeat
    runs on the caller's loop (a blocked loop stops renewing, as a stuck turn should)."""
    key = _key(scope, session_id)
    waits = _Wait(backend, key, timeout)
    waiters = backend.waiters
    while True:
        fut = waiters.register(key)
        try:
            claim = await backend.aclaim(key, lease=ttl)
            if claim.acquired:
                break
            await _waiters.await_(fut, waits.next(claim))
        finally:
            waiters.unregister(key, fut)
    lease = Lease(backend, key, claim.fence, ttl=ttl, heartbeat=heartbeat, max_run=max_turn).astart()
    try:
        yield lease
    except BaseException as exc:
        try:
            await lease.arelease()
        except (LeaseLost, StoreError) as failure:
            _note(exc, key, failure)
        raise
    lost = lease.lost
    await lease.arelease()
    if lost:
        raise LeaseLost(f"session {key!r}: the lease was lost while the turn ran")
