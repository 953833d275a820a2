"""Per-turn tool-call deduplication and limits: a per-turn ``ToolExecutionTracker`` done right.

Within one turn (one user message → one final answer, possibly many model↔tool rounds), a
model stuck in a loop asks for the same tool again and again. :class:`TurnToolGuard` decides,
for each requested call, whether it may run:

1. **exact duplicate** — same tool name and the same arguments (canonical JSON: sorted keys at
   every depth, so ``{"a": {"x": 1, "y": 2}}`` equals ``{"a": {"y": 2, "x": 1}}``): not run;
   the earlier result is replayed (``Reservation.previous``). Replays cost nothing and are not
   counted against limits.
2. **in-flight duplicate** — an identical call (or a similar query) was reserved but not
   committed yet, e.g. two parallel tool calls in one batch: not run; ``Reservation.result()``
   / ``await Reservation.aresult()`` waits for the first one's result.
3. **similar query** — only for tools whose :class:`ToolPolicy` says ``read_only=True``: the
   query argument is compared with earlier queries of the same tool (all other arguments must
   be equal) using :func:`dupguard.runtime.similarity.similar`. This is *lexical* similarity
   (token-set ratio ≥ 0.90), never applied when numbers/ids, destructive verbs or negations
   differ. Tools that change the world are never deduplicated by similarity.
4. **limits** — a per-tool cap (``ToolPolicy.max_calls``) and a per-turn cap
   (``max_total_calls``) on calls that actually run.

Every refusal carries a model-facing ``reason`` to put in the tool message so the model can
change course. Callers who prefer an exception pass ``strict=True`` to :meth:`reserve` and get
:class:`~dupguard.runtime.errors.ToolLimitExceeded` for limit refusals.

All state sits behind one ``threading.Lock`` that is never held while a tool runs, so one guard
can be shared by the threads or tasks that execute a turn's tool calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ToolLimitExceeded
from .similarity import similar

__all__ = ["Reservation", "ToolPolicy", "TurnToolGuard", "canonical_args"]

#: Argument names searched, in order, for the query of a read-only tool when the policy does
#: not name one.
QUERY_ARG_NAMES = ("query", "q", "search_query", "search", "question", "keywords", "text")

NEW = "new"
EXACT = "exact"
SEMANTIC = "semantic"
IN_FLIGHT = "in_flight"
TOOL_LIMIT = "tool_limit"
TURN_LIMIT = "turn_limit"


@dataclass(frozen=True)
class ToolPolicy:
    """How one tool is treated within a turn.

    ``max_calls``: executions allowed per turn (``None`` = only the turn cap applies).
    ``read_only``: the tool only reads, so a lexically similar query may reuse an earlier
    result; leave it ``False`` for anything that writes, sends, pays or deletes.
    ``query_arg``: the argument holding the query text (default: the first string argument
    among :data:`QUERY_ARG_NAMES`). ``similarity_threshold``: token-set ratio, 0–1.
    ``dedupe_exact``: set ``False`` for tools whose identical calls legitimately differ
    (``now()``, ``random()``, polling a job status).
    """

    max_calls: int | None = 3
    read_only: bool = False
    query_arg: str | None = None
    similarity_threshold: float = 0.90
    dedupe_exact: bool = True

    def __post_init__(self) -> None:
        if self.max_calls is not None and self.max_calls < 0:
            raise ValueError("max_calls must be >= 0 or None")
        if not 0.0 < self.similarity_threshold <= 1.0:
            raise ValueError("similarity_threshold must be in (0, 1]")


def _parse_args(args: Any) -> Any:
    if isinstance(args, (str, bytes)):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def canonical_args(args: Any) -> str:
    """Canonical JSON of tool arguments: sorted keys at every depth, no whitespace.

    A JSON string (as OpenAI sends ``function.arguments``) is parsed first, so the string and
    the dict it encodes compare equal. Values JSON cannot encode fall back to ``repr``.
    """
    return json.dumps(_parse_args(args), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)


@dataclass
class _Entry:
    name: str
    key: str
    rest: str  # canonical args without the query, for semantic comparison
    query: str | None
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)
    counted: bool = True


@dataclass(eq=False)
class Reservation:
    """The guard's answer for one requested call.

    ``allowed``: run the tool, then :meth:`commit` its result (or :meth:`cancel` if it did not
    run). ``kind``: ``"new"`` when allowed; otherwise ``"exact"``, ``"semantic"``,
    ``"in_flight"``, ``"tool_limit"`` or ``"turn_limit"``. ``reason``: text for the model.
    ``previous``: the replayed result for ``"exact"`` and ``"semantic"``.
    """

    allowed: bool
    reason: str
    kind: str
    previous: Any = None
    name: str = ""
    _guard: TurnToolGuard | None = field(default=None, repr=False)
    _entry: _Entry | None = field(default=None, repr=False)
    _round: int = field(default=0, repr=False)
    _done: bool = field(default=False, repr=False)

    def commit(self, result: Any) -> None:
        """Record the result of an allowed call, so later duplicates replay it. If the tool
        failed, commit the error text the model will see: an identical retry then replays the
        failure instead of hammering a broken tool."""
        if self._guard is None or self._entry is None:
            raise RuntimeError(f"cannot commit a refused reservation ({self.kind})")
        self._guard._finish(self, result, cancelled=False)

    def cancel(self) -> None:
        """The call did not run: forget it and give its slot back to the limits."""
        if self._guard is None or self._entry is None:
            raise RuntimeError(f"cannot cancel a refused reservation ({self.kind})")
        self._guard._finish(self, None, cancelled=True)

    def result(self, timeout: float | None = None) -> Any:
        """The result the model should see for a refused duplicate: ``previous`` for exact and
        semantic replays; for an in-flight duplicate, waits for the first call's commit
        (``concurrent.futures.CancelledError`` if that call was cancelled)."""
        if self.kind in (EXACT, SEMANTIC):
            return self.previous
        if self.kind == IN_FLIGHT and self._entry is not None:
            return self._entry.future.result(timeout)
        raise RuntimeError(f"no result to wait for ({self.kind}): {self.reason}")

    async def aresult(self) -> Any:
        """Async :meth:`result`, usable from any event loop (the wait is a wrapped
        ``concurrent.futures.Future``, never a held lock)."""
        if self.kind == IN_FLIGHT and self._entry is not None:
            # shield: a cancelled waiter must not cancel the result other waiters share
            return await asyncio.shield(asyncio.wrap_future(self._entry.future))
        return self.result()

    def __enter__(self) -> Reservation:  # noqa: PYI034 (typing.Self needs Python 3.11)
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        # An allowed reservation left open by an exception (or forgotten) did not produce a
        # result the model saw: cancel it so waiters are released and the slot is returned.
        if self.allowed and not self._done:
            self.cancel()


class TurnToolGuard:
    """Exact/in-flight/semantic dedup and limits for the tool calls of one turn.

    Call :meth:`new_round` when a new user turn starts (it forgets results and counts), then
    :meth:`reserve` before every tool execution. ``policies`` maps tool names to
    :class:`ToolPolicy`; other tools use ``default``.
    """

    def __init__(
        self,
        policies: Mapping[str, ToolPolicy] = {},
        *,
        default: ToolPolicy = ToolPolicy(),
        max_total_calls: int | None = 25,
    ) -> None:
        if max_total_calls is not None and max_total_calls < 0:
            raise ValueError("max_total_calls must be >= 0 or None")
        self._policies = dict(policies)
        self._default = default
        self._max_total = max_total_calls
        self._lock = threading.Lock()
        self._round = 0
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._by_tool: dict[str, list[_Entry]] = {}
        self._counts: dict[str, int] = {}
        self._total = 0

    # -- introspection -----------------------------------------------------------------------

    def policy(self, name: str) -> ToolPolicy:
        return self._policies.get(name, self._default)

    @property
    def round(self) -> int:
        """How many times :meth:`new_round` was called."""
        return self._round

    def calls(self, name: str | None = None) -> int:
        """Executions counted this round, for one tool or in total."""
        with self._lock:
            return self._total if name is None else self._counts.get(name, 0)

    # -- lifecycle -------------------------------------------------------------------------

    def new_round(self) -> int:
        """Start a new turn: forget every result and count. Reservations from the old round
        can still be committed (their waiters get the result) but no longer affect this one."""
        with self._lock:
            self._round += 1
            self._entries = {}
            self._by_tool = {}
            self._counts = {}
            self._total = 0
            return self._round

    def _query_of(self, policy: ToolPolicy, args: Any) -> tuple[str | None, Any]:
        if not isinstance(args, Mapping):
            return None, args
        names = (policy.query_arg,) if policy.query_arg else QUERY_ARG_NAMES
        for arg in names:
            value = args.get(arg)
            if isinstance(value, str) and value.strip():
                rest = {k: v for k, v in args.items() if k != arg}
                return value, rest
        return None, args

    def reserve(self, name: str, args: Any = None, *, strict: bool = False) -> Reservation:
        """Decide whether ``name(**args)`` may run now. See the module docstring for the order
        of checks. With ``strict=True`` a limit refusal raises ``ToolLimitExceeded`` instead of
        returning a refused reservation."""
        policy = self.policy(name)
        args = _parse_args(args)
        key = (name, canonical_args(args))
        query, rest_args = self._query_of(policy, args) if policy.read_only else (None, None)
        rest = canonical_args(rest_args) if query is not None else ""
        with self._lock:
            if policy.dedupe_exact:
                earlier = self._entries.get(key)
                if earlier is not None:
                    return self._duplicate(name, earlier, EXACT, None)
            if query is not None:
                for earlier in self._by_tool.get(name, ()):
                    if (
                        earlier.query is not None
                        and earlier.rest == rest
                        and similar(query, earlier.query, threshold=policy.similarity_threshold)
                    ):
                        return self._duplicate(name, earlier, SEMANTIC, query)
            count = self._counts.get(name, 0)
            if policy.max_calls is not None and count >= policy.max_calls:
                return self._refuse(
                    strict,
                    Reservation(
                        False,
                        f"Tool '{name}' has reached its limit of {policy.max_calls} call(s) "
                        "for this turn. Do not call it again; use the results you already "
                        "have or try a different approach.",
                        TOOL_LIMIT,
                        name=name,
                    ),
                )
            if self._max_total is not None and self._total >= self._max_total:
                return self._refuse(
                    strict,
                    Reservation(
                        False,
                        f"The limit of {self._max_total} tool calls for this turn has been "
                        "reached. Answer the user with the information you already have.",
                        TURN_LIMIT,
                        name=name,
                    ),
                )
            entry = _Entry(name=name, key=key[1], rest=rest, query=query)
            if policy.dedupe_exact:
                self._entries[key] = entry
            self._by_tool.setdefault(name, []).append(entry)
            self._counts[name] = count + 1
            self._total += 1
            return Reservation(True, "", NEW, name=name, _guard=self, _entry=entry, _round=self._round)

    @staticmethod
    def _refuse(strict: bool, reservation: Reservation) -> Reservation:
        if strict:
            raise ToolLimitExceeded(reservation.reason)
        return reservation

    def _duplicate(self, name: str, earlier: _Entry, kind: str, query: str | None) -> Reservation:
        # called with the lock held
        what = "identical arguments" if kind == EXACT else f"a similar query ({earlier.query!r})"
        if not earlier.future.done():
            return Reservation(
                False,
                f"Tool '{name}' is already running with {what}; its result will be used. Do not request it again.",
                IN_FLIGHT,
                name=name,
                _entry=earlier,
                _round=self._round,
            )
        previous = earlier.future.result()
        return Reservation(
            False,
            f"Tool '{name}' was already called this turn with {what}. The earlier result is "
            "repeated below; do not call it again with the same input — use it, or try a "
            "different query or tool.",
            kind,
            previous,
            name=name,
        )

    def _finish(self, reservation: Reservation, result: Any, *, cancelled: bool) -> None:
        entry = reservation._entry
        assert entry is not None
        with self._lock:
            if reservation._done:
                raise RuntimeError("reservation already committed or cancelled")
            reservation._done = True
            if cancelled and reservation._round == self._round:
                # forget it entirely: an identical call may run again, and the slot is returned
                if self._entries.get((entry.name, entry.key)) is entry:
                    del self._entries[(entry.name, entry.key)]
                peers = self._by_tool.get(entry.name, [])
                if entry in peers:
                    peers.remove(entry)
                self._counts[entry.name] = max(0, self._counts.get(entry.name, 0) - 1)
                self._total = max(0, self._total - 1)
        # resolve waiters outside the lock (their callbacks may do anything)
        if cancelled:
            entry.future.cancel()
        else:
            entry.future.set_result(result)

    # -- convenience -----------------------------------------------------------------------

    def execute(self, name: str, args: Any, fn: Callable[..., Any]) -> Any:
        """Reserve, run ``fn(**args)`` if allowed and commit; otherwise return what the model
        should see instead: the replayed result, the in-flight call's result, or the reason.
        Exceptions from ``fn`` cancel the reservation and propagate."""
        args = _parse_args(args)
        reservation = self.reserve(name, args)
        if not reservation.allowed:
            return self._refusal_value(reservation)
        with reservation:
            value = fn(**(args or {}))
            reservation.commit(value)
            return value

    async def aexecute(self, name: str, args: Any, fn: Callable[..., Awaitable[Any]]) -> Any:
        """Async :meth:`execute` for coroutine tools."""
        args = _parse_args(args)
        reservation = self.reserve(name, args)
        if not reservation.allowed:
            if reservation.kind == IN_FLIGHT:
                return await reservation.aresult()
            return self._refusal_value(reservation)
        with reservation:
            value = await fn(**(args or {}))
            reservation.commit(value)
            return value

    @staticmethod
    def _refusal_value(reservation: Reservation) -> Any:
        if reservation.kind in (EXACT, SEMANTIC, IN_FLIGHT):
            return reservation.result()
        return reservation.reason
