"""Parallel tool calls as one atomic batch per turn (results arrive out of order).

When a model asks for several tools at once, running them with ``asyncio.gather`` and writing
each result into the history *as it completes* (or from inside the tasks) puts the results in
completion order, interleaves them with the next turn, and lets a slow result from turn *N*
land in the context of turn *N+1*. Here a turn's tool calls are a transaction:

* a :class:`TurnClock` per conversation hands out monotonically increasing turn numbers;
* a :class:`ToolBatch` is bound to the turn that was current when it was created, collects one
  result per call, and :meth:`ToolBatch.commit` returns them **in the calls' order**;
* committing after the clock moved to a newer turn raises
  :class:`~dupguard.runtime.errors.StaleBatchError` (the model has moved on);
* a result that arrives after the commit (a tool that outlived the timeout) or for an unknown
  call id goes to the clock's bounded *orphan buffer* — inspectable, never in a returned list.

:func:`run_batch` does all of it for the common case.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import StaleBatchError, ToolCallIdReused

__all__ = ["Orphan", "ToolBatch", "ToolCall", "ToolResult", "TurnClock", "parse_call", "run_batch"]


@dataclass(frozen=True)
class ToolCall:
    """One requested call, normalised. ``arguments`` is the parsed mapping (or the raw value
    when it was not valid JSON, in which case ``arguments_error`` says why). ``raw`` is the
    object it came from."""

    id: str
    name: str
    arguments: Any
    raw: Any = field(default=None, compare=False, repr=False)
    arguments_error: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one call: ``value`` on success, ``error`` (an exception) on failure."""

    call_id: str
    value: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def content(self) -> str:
        """Text for the model: the value (JSON unless it is a string) or ``"Error: ..."``."""
        if self.error is not None:
            return f"Error: {type(self.error).__name__}: {self.error}"
        if isinstance(self.value, str):
            return self.value
        return json.dumps(self.value, default=str, ensure_ascii=False)

    def to_message(self) -> dict:
        """An OpenAI chat ``tool`` message answering this call."""
        return {"role": "tool", "tool_call_id": self.call_id, "content": self.content}


@dataclass(frozen=True)
class Orphan:
    """A result that was kept out of every returned batch. ``why`` is ``"late"`` (arrived
    after its batch committed), ``"stale"`` (its batch's turn was over at commit),
    ``"abandoned"`` (its batch was given up, e.g. ``run_batch`` was cancelled), ``"unknown"``
    (no such call in the batch) or ``"duplicate"`` (a second result for a call)."""

    turn: int
    call_id: str
    name: str | None
    value: Any
    error: BaseException | None
    why: str
    at: float


class TurnClock:
    """A logical clock for one conversation (``scope``, e.g. the session id).

    :meth:`advance` starts a new turn; batches created earlier become stale. Also owns the
    bounded orphan buffer of that conversation (``max_orphans`` newest are kept; the number
    dropped is in :attr:`orphans_dropped`). Thread-safe.
    """

    def __init__(self, scope: str, *, max_orphans: int = 1000) -> None:
        if max_orphans < 1:
            raise ValueError("max_orphans must be >= 1")
        self.scope = scope
        self._lock = threading.Lock()
        self._turn = 0
        self._orphans: deque[Orphan] = deque(maxlen=max_orphans)
        self.orphans_dropped = 0

    @property
    def turn(self) -> int:
        """The current turn number (0 before the first :meth:`advance`)."""
        return self._turn

    def advance(self) -> int:
        """Start the next turn and return its number."""
        with self._lock:
            self._turn += 1
            return self._turn

    def batch(self, calls: Iterable[Any]) -> ToolBatch:
        """A :class:`ToolBatch` for ``calls`` bound to the current turn."""
        return ToolBatch(calls, clock=self)

    def orphans(self) -> list[Orphan]:
        """A snapshot of the orphan buffer, oldest first."""
        with self._lock:
            return list(self._orphans)

    def drain_orphans(self) -> list[Orphan]:
        """Return and clear the orphan buffer (e.g. to log or reconcile them)."""
        with self._lock:
            out = list(self._orphans)
            self._orphans.clear()
            return out

    def _orphan(self, orphan: Orphan) -> None:
        with self._lock:
            if len(self._orphans) == self._orphans.maxlen:
                self.orphans_dropped += 1
            self._orphans.append(orphan)

    def __repr__(self) -> str:
        return f"<TurnClock {self.scope!r} turn={self._turn} orphans={len(self._orphans)}>"


def parse_call(call: Any) -> ToolCall:
    """Normalise one tool call, in any shape :func:`~dupguard.runtime.ledger.tool_call_parts`
    reads: a mapping or object with ``id``, ``name``, ``arguments``; OpenAI chat
    ``{"id", "function": {"name", "arguments"}}`` (arguments as a JSON string); the Responses
    API's ``call_id``; Anthropic's ``tool_use`` blocks (``input``)."""
    from .ledger import tool_call_parts  # the one parser of call shapes in the runtime

    try:
        call_id, name, arguments = tool_call_parts(call)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    if not call_id or not name:
        raise ValueError(f"tool call without an id or a name: {call!r}")
    if arguments is None:
        arguments = {}
    error = None
    if isinstance(arguments, (str, bytes)):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            error = f"arguments are not valid JSON: {exc}"
    return ToolCall(call_id, name, arguments, raw=call, arguments_error=error)


class ToolBatch:
    """The results of one turn's tool calls, committed together in request order.

    ``deliver`` may be called from any thread or event loop; ``wait``/``await_all`` wait for
    every call (or a timeout); ``commit`` returns one :class:`ToolResult` per call, in the
    calls' order, with ``TimeoutError`` results for calls that never delivered. After commit
    the batch is closed and further deliveries become orphans. Calls that repeat an id with
    identical arguments share one slot (and one execution in :func:`run_batch`); the same id
    with different arguments raises :class:`~dupguard.runtime.errors.ToolCallIdReused`.
    """

    def __init__(self, calls: Iterable[Any], *, clock: TurnClock) -> None:
        self.clock = clock
        self.turn = clock.turn
        self.calls: list[ToolCall] = [c if isinstance(c, ToolCall) else parse_call(c) for c in calls]
        self._lock = threading.Lock()
        self._committed = False
        self._futures: dict[str, concurrent.futures.Future] = {}
        self._by_id: dict[str, ToolCall] = {}
        for call in self.calls:
            first = self._by_id.get(call.id)
            if first is not None:
                if first.name != call.name or first.arguments != call.arguments:
                    raise ToolCallIdReused(f"tool call id {call.id!r} appears twice in one batch with different calls")
                continue
            self._futures[call.id] = concurrent.futures.Future()
            self._by_id[call.id] = call

    @property
    def unique_calls(self) -> list[ToolCall]:
        """The calls to execute: one per distinct id, in first-seen order."""
        return list(self._by_id.values())

    def _orphan(self, call_id: str, value: Any, error: BaseException | None, why: str) -> None:
        call = self._by_id.get(call_id)
        name = call.name if call is not None else None
        self.clock._orphan(Orphan(self.turn, call_id, name, value, error, why, time.time()))

    @property
    def committed(self) -> bool:
        return self._committed

    def deliver(self, call_id: str, value: Any = None, error: BaseException | None = None) -> bool:
        """Record the result of one call. Returns True if it belongs to this open batch; False
        when it was sent to the orphan buffer (batch committed, unknown id, second result)."""
        with self._lock:
            future = self._futures.get(call_id)
            why = None
            if future is None:
                why = "unknown"
            elif self._committed:
                why = "late"
            elif future.done():
                why = "duplicate"
            else:
                future.set_result(ToolResult(call_id, value, error))
                return True
        self._orphan(call_id, value, error, why)
        return False

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every call delivered or ``timeout``; True when all are in."""
        _done, pending = concurrent.futures.wait(list(self._futures.values()), timeout)
        return not pending

    async def await_all(self, timeout: float | None = None) -> bool:
        """Async :meth:`wait`, usable from any event loop."""
        futures = [asyncio.wrap_future(f) for f in self._futures.values()]
        if not futures:
            return True
        _done, pending = await asyncio.wait(futures, timeout=timeout)
        return not pending

    def abandon(self) -> None:
        """Close the batch without returning anything (the caller gave up on this turn):
        results delivered so far and any that arrive later go to the orphan buffer."""
        with self._lock:
            if self._committed:
                return
            self._committed = True
            delivered = [f.result() for f in self._futures.values() if f.done()]
        for result in delivered:
            self._orphan(result.call_id, result.value, result.error, "abandoned")

    def commit(self) -> list[ToolResult]:
        """Close the batch and return one result per call in request order.

        Raises :class:`StaleBatchError` if the clock moved past this batch's turn; every
        delivered result then goes to the orphan buffer (``why="stale"``)."""
        with self._lock:
            if self._committed:
                raise RuntimeError("batch already committed")
            self._committed = True
            stale = self.clock.turn != self.turn
            results: dict[str, ToolResult] = {}
            for call_id, future in self._futures.items():
                if future.done():
                    results[call_id] = future.result()
        if stale:
            for call_id, result in results.items():
                self._orphan(call_id, result.value, result.error, "stale")
            raise StaleBatchError(
                f"batch from turn {self.turn} of {self.clock.scope!r} committed during turn "
                f"{self.clock.turn}; its results were moved to the orphan buffer"
            )
        out = []
        for call in self.calls:
            found = results.get(call.id)
            if found is None:
                found = ToolResult(call.id, None, TimeoutError(f"tool {call.name!r} did not finish in time"))
            out.append(found)
        return out


def _run_sync(batch: ToolBatch, call: ToolCall, execute: Callable[[ToolCall], Any]) -> Any:
    """Run a sync tool in a worker thread and deliver from that thread, so a result that
    outlives the batch (or the event loop) still reaches the orphan buffer."""
    try:
        value = execute(call)
    except Exception as exc:
        batch.deliver(call.id, None, exc)
        return None
    if inspect.isawaitable(value):
        return value  # a sync function that returned a coroutine: awaited by the caller
    batch.deliver(call.id, value)
    return None


_background: set = set()  # strong references to tool tasks that outlive their batch


async def run_batch(
    calls: Iterable[Any],
    execute: Callable[[ToolCall], Any],
    *,
    clock: TurnClock,
    timeout: float | None = None,
) -> list[ToolResult]:
    """Run one turn's tool calls concurrently and return their results in request order.

    ``execute(call)`` receives a :class:`ToolCall` and may be a coroutine function or a plain
    function (run in a worker thread via ``asyncio.to_thread``). An exception becomes that
    call's ``ToolResult.error``; the other calls are unaffected. A call that is not done after
    ``timeout`` seconds gets a ``TimeoutError`` result and keeps running in the background: if
    it finishes later its result goes to ``clock``'s orphan buffer, never into a returned list.
    Raises :class:`StaleBatchError` if ``clock`` advanced while the tools ran.
    """
    batch = ToolBatch(calls, clock=clock)

    is_async = inspect.iscoroutinefunction(execute)

    async def one(call: ToolCall) -> None:
        if call.arguments_error is not None:
            batch.deliver(call.id, None, ValueError(call.arguments_error))
            return
        try:
            if is_async:
                value = await execute(call)
            else:
                value = await asyncio.to_thread(_run_sync, batch, call, execute)
                if value is None:
                    return  # delivered by the worker thread
                value = await value
        except Exception as exc:  # a tool failure is a result, not a crash of the batch
            batch.deliver(call.id, None, exc)
        else:
            batch.deliver(call.id, value)

    tasks = [asyncio.ensure_future(one(call)) for call in batch.unique_calls]
    pending: set = set()
    try:
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
    except BaseException:
        # run_batch itself was cancelled: close the batch so that whatever the tools returned
        # or still return is orphaned, and let the running ones finish in the background
        batch.abandon()
        pending = {t for t in tasks if not t.done()}
        raise
    finally:
        for task in pending:
            _background.add(task)
            task.add_done_callback(_background.discard)
    return batch.commit()
