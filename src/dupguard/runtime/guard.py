"""A guard for objects that must not run two invocations at once (Strands raises on the second).

An agent keeps its conversation in instance state; two overlapping invocations (a client
retry after a timeout, ``asyncio.gather`` over one agent, two web requests hitting a shared
instance) interleave their messages and corrupt that state for every later call. The usual
fix, ``if lock.locked(): raise`` on an ``asyncio.Lock``, has two holes this module closes:

* an ``asyncio.Lock`` belongs to one event loop, but agents are called from several (a sync
  ``__call__`` that runs ``asyncio.run`` in a worker thread, two web workers' loops, threads);
* ``locked()`` followed by ``acquire()`` is two steps; two callers can both see "free".

Here the check and the take-over are one step under a ``threading.Lock`` that is held for a few
instructions and never across an ``await`` or a blocking wait. Waiters park on a
``concurrent.futures.Future`` — sync callers block on it, async callers await
``asyncio.wrap_future`` of it — so a guard works across threads and event loops alike.

Modes:

``"throw"`` (default)
    a call that finds the guard held raises :class:`ConcurrentInvocationError` before anything
    else happens: the guard's own state is untouched and the guarded function never starts.
``"wait"``
    callers queue and are served strictly first come, first served; ownership is handed from
    the releasing caller directly to the oldest waiter, so nobody can overtake.
``"dedupe"``
    :meth:`InvocationGuard.run` / ``arun`` / :meth:`InvocationGuard.guarded` with a token: a call
    whose token equals that of a call already queued or running does not run; it waits for
    that call and returns the very same result object (or raises the very same exception).
    Calls with other tokens queue as in ``"wait"``. A call arriving after the first finished
    runs again (this is in-flight deduplication, not a cache; use ``Idempotency`` for that).
    ``hold``/``ahold`` cannot share a result (a ``with`` body always runs), so in this mode they
    serialise exactly like ``"wait"``.
``"unsafe"``
    no guarding at all: an explicit, greppable opt-out for objects known to be safe.

Ownership is a value: :meth:`InvocationGuard.acquire` returns a :class:`Ticket`, and only the
ticket that owns the guard can release it (:class:`NotOwnerError` otherwise, also on a
second release).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
import itertools
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterator
from typing import Any, TypeVar

from .errors import ConcurrentInvocationError, DupguardError

__all__ = ["MODES", "GuardTimeout", "InvocationGuard", "NotOwnerError", "Ticket"]

T = TypeVar("T")
MODES = ("throw", "wait", "dedupe", "unsafe")


class NotOwnerError(DupguardError, RuntimeError):
    """A ticket tried to release a guard it does not own (never did, or already released)."""


class GuardTimeout(ConcurrentInvocationError, TimeoutError):
    """Waiting for the guard took longer than the caller's ``timeout``; retrying may work."""


def _current_task() -> asyncio.Task | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _in_event_loop_thread() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class Ticket:
    """Proof of ownership returned by :meth:`InvocationGuard.acquire`."""

    __slots__ = ("__weakref__", "_task", "_thread", "guard", "serial", "token")

    def __init__(self, guard: InvocationGuard, token: Any, serial: int) -> None:
        self.guard = guard
        self.token = token
        self.serial = serial
        self._thread = threading.get_ident()
        self._task = _current_task()

    @property
    def owns(self) -> bool:
        """True while this ticket holds the guard (always True in ``"unsafe"`` mode)."""
        return self.guard.mode == "unsafe" or self.guard._owner is self

    def release(self) -> None:
        self.guard.release(self)

    def __repr__(self) -> str:
        return f"<Ticket #{self.serial} token={self.token!r} owns={self.owns}>"


class InvocationGuard:
    """Serialises or rejects overlapping invocations of one object. See the module docstring.

    ``name`` appears in error messages (e.g. the agent's name).
    """

    def __init__(self, mode: str = "throw", *, name: str | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.name = name
        self._mutex = threading.Lock()  # guards the fields below; never held while waiting
        self._owner: Ticket | None = None
        self._waiters: deque[tuple[Ticket, concurrent.futures.Future]] = deque()
        self._inflight: dict[Hashable, concurrent.futures.Future] = {}
        self._serials = itertools.count(1)

    def __repr__(self) -> str:
        return f"<InvocationGuard {self.name or ''} mode={self.mode} busy={self.busy} waiting={self.waiting}>"

    # -- state -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while some ticket holds the guard."""
        return self._owner is not None

    @property
    def owner(self) -> Ticket | None:
        return self._owner

    @property
    def waiting(self) -> int:
        """How many callers are queued (``"wait"``/``"dedupe"`` modes)."""
        with self._mutex:
            return len(self._waiters)

    # -- acquire / release -------------------------------------------------------------------

    def _enter(self, token: Any, *, blocking_in_loop_ok: bool) -> tuple[Ticket, concurrent.futures.Future | None]:
        """Take the guard or join the queue, atomically. Returns the ticket and, when the
        caller must wait, the future that will be resolved when ownership is handed over."""
        ticket = Ticket(self, token, next(self._serials))
        if self.mode == "unsafe":
            return ticket, None
        with self._mutex:
            if self._owner is None and not self._waiters:
                self._owner = ticket
                return ticket, None
            holder = self._owner
            what = f"{self.name!r} " if self.name else ""
            if self.mode == "throw":
                raise ConcurrentInvocationError(
                    f"{what}is already processing a request (held by {holder!r}); concurrent "
                    "invocations are not supported. Retry after it finishes."
                )
            if holder is not None and holder._thread == ticket._thread and holder._task is ticket._task:
                raise RuntimeError(f"re-entrant acquire of guard {what}by its owner would deadlock")
            if not blocking_in_loop_ok and _in_event_loop_thread():
                raise RuntimeError(
                    "InvocationGuard.hold()/acquire() would block the running event loop while "
                    "the guard is busy; use 'async with guard.ahold()' in async code "
                    "(hold() is fine in worker threads, e.g. run_in_executor / to_thread)"
                )
            future: concurrent.futures.Future = concurrent.futures.Future()
            self._waiters.append((ticket, future))
            return ticket, future

    def _handoff_locked(self) -> None:
        """Give the guard to the oldest waiter that is still waiting (mutex held)."""
        self._owner = None
        while self._waiters:
            ticket, future = self._waiters.popleft()
            if future.set_running_or_notify_cancel():  # False if that waiter gave up
                self._owner = ticket
                future.set_result(ticket)
                return

    def _abandon(self, ticket: Ticket, future: concurrent.futures.Future, *, keep: bool) -> bool:
        """A waiter stopped waiting (timeout, cancellation, interrupt). If ownership reached it
        meanwhile, keep it (``keep=True``, returns True) or pass it on; else leave the queue."""
        with self._mutex:
            if self._owner is ticket:
                if keep:
                    return True
                self._handoff_locked()
                return False
            future.cancel()
            try:
                self._waiters.remove((ticket, future))
            except ValueError:
                pass
            return False

    def acquire(self, token: Any = None, *, timeout: float | None = None) -> Ticket:
        """Take the guard from sync code and return the owning :class:`Ticket`.

        ``"throw"``: raises :class:`ConcurrentInvocationError` at once when held. ``"wait"``:
        blocks in FIFO order (``timeout`` → :class:`GuardTimeout`). Waiting is refused inside a
        running event loop's thread (it would freeze the loop); worker threads are fine.
        """
        ticket, future = self._enter(token, blocking_in_loop_ok=False)
        if future is None:
            return ticket
        try:
            future.result(timeout)
        except concurrent.futures.TimeoutError:
            if self._abandon(ticket, future, keep=True):
                return ticket
            raise GuardTimeout(f"gave up waiting for the guard after {timeout} s") from None
        except BaseException:
            self._abandon(ticket, future, keep=False)
            raise
        return ticket

    async def aacquire(self, token: Any = None, *, timeout: float | None = None) -> Ticket:
        """Async :meth:`acquire`; works from any event loop and any thread."""
        ticket, future = self._enter(token, blocking_in_loop_ok=True)
        if future is None:
            return ticket
        try:
            await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except asyncio.TimeoutError:
            if self._abandon(ticket, future, keep=True):
                return ticket
            raise GuardTimeout(f"gave up waiting for the guard after {timeout} s") from None
        except BaseException:
            self._abandon(ticket, future, keep=False)
            raise
        return ticket

    def release(self, ticket: Ticket) -> None:
        """Release the guard; only its owning ticket may. Hands it to the oldest waiter."""
        if self.mode == "unsafe":
            return
        with self._mutex:
            if self._owner is not ticket:
                raise NotOwnerError(f"{ticket!r} does not own this guard (owner: {self._owner!r})")
            self._handoff_locked()

    @contextlib.contextmanager
    def hold(self, token: Any = None, *, timeout: float | None = None) -> Iterator[Ticket]:
        """``with guard.hold():`` — hold the guard for the block (sync code, worker threads)."""
        ticket = self.acquire(token, timeout=timeout)
        try:
            yield ticket
        finally:
            if ticket.owns:  # the block may have released it explicitly
                self.release(ticket)

    @contextlib.asynccontextmanager
    async def ahold(self, token: Any = None, *, timeout: float | None = None) -> AsyncIterator[Ticket]:
        """``async with guard.ahold():`` — hold the guard for the block (any event loop)."""
        ticket = await self.aacquire(token, timeout=timeout)
        try:
            yield ticket
        finally:
            if ticket.owns:
                self.release(ticket)

    # -- running callables -------------------------------------------------------------------

    def _join_or_lead(self, token: Any) -> tuple[bool, concurrent.futures.Future | None]:
        """Dedupe mode: (True, future) to follow a call with the same token, (False, future) to
        lead one. Outside dedupe mode or without a token: (False, None)."""
        if self.mode != "dedupe" or token is None:
            return False, None
        with self._mutex:
            shared = self._inflight.get(token)
            if shared is not None:
                return True, shared
            leader: concurrent.futures.Future = concurrent.futures.Future()
            self._inflight[token] = leader
            return False, leader

    def _settle(self, token: Any, leader: concurrent.futures.Future, value: Any, error: BaseException | None) -> None:
        with self._mutex:
            if self._inflight.get(token) is leader:
                del self._inflight[token]
        if error is None:
            leader.set_result(value)
        elif isinstance(error, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
            leader.set_exception(ConcurrentInvocationError("the shared call was cancelled; retry"))
        else:
            leader.set_exception(error)

    def run(self, token: Any, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call ``fn(*args, **kwargs)`` under the guard (sync). In ``"dedupe"`` mode a call whose
        ``token`` is already queued or running returns that call's result instead."""
        follow, future = self._join_or_lead(token)
        if follow:
            assert future is not None
            if not future.done() and _in_event_loop_thread():
                raise RuntimeError("use 'await guard.arun(...)' inside a running event loop")
            return future.result()
        try:
            with self.hold(token):
                value = fn(*args, **kwargs)
        except BaseException as exc:
            if future is not None:
                self._settle(token, future, None, exc)
            raise
        if future is not None:
            self._settle(token, future, value, None)
        return value

    async def arun(self, token: Any, afn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """Async :meth:`run` for coroutine functions."""
        follow, future = self._join_or_lead(token)
        if follow:
            assert future is not None
            # shield: a cancelled follower must not cancel the result the others share
            return await asyncio.shield(asyncio.wrap_future(future))
        try:
            async with self.ahold(token):
                value = await afn(*args, **kwargs)
        except BaseException as exc:
            if future is not None:
                self._settle(token, future, None, exc)
            raise
        if future is not None:
            self._settle(token, future, value, None)
        return value

    def guarded(self, fn: Callable | None = None, *, token: Callable[..., Hashable] | None = None) -> Any:
        """Decorator: every call of ``fn`` runs under this guard.

        Works on sync and async functions and methods, and on (async) generator functions,
        for which the guard is held until the generator finishes (streaming APIs). One guard
        object serves every call of the decorated function — decorating a method therefore
        guards all instances together; for one guard per instance create the guard in
        ``__init__`` and use :meth:`hold` / :meth:`ahold` in the methods.

        ``token(*args, **kwargs)`` computes the dedupe token (``"dedupe"`` mode); by default
        the call's arguments themselves (``repr`` when they are unhashable).
        """
        if fn is None:
            return functools.partial(self.guarded, token=token)

        def token_of(args: tuple, kwargs: dict) -> Any:
            if token is not None:
                return token(*args, **kwargs)
            if self.mode != "dedupe":
                return None
            key = (args, tuple(sorted(kwargs.items())))
            try:
                hash(key)
            except TypeError:
                return repr(key)
            return key

        if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
            if self.mode == "dedupe":
                raise TypeError("dedupe mode cannot share a generator's output; use mode='wait'")
            if inspect.isasyncgenfunction(fn):

                @functools.wraps(fn)
                async def agen_wrapper(*args: Any, **kwargs: Any) -> Any:
                    async with self.ahold(token_of(args, kwargs)):
                        async for item in fn(*args, **kwargs):
                            yield item

                return agen_wrapper

            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self.hold(token_of(args, kwargs)):
                    yield from fn(*args, **kwargs)

            return gen_wrapper

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                return await self.arun(token_of(args, kwargs), fn, *args, **kwargs)

            return async_wrapper

        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            return self.run(token_of(args, kwargs), fn, *args, **kwargs)

        return sync_wrapper
