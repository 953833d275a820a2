"""What every framework adapter shares: one gate in front of each tool execution, and turns.

The adapters differ only in *where* they hook into a framework (a tool wrapper, a hook
provider, a patched method); the decision for one requested tool call is the same everywhere
and lives here, in :class:`ToolCallGate`:

1. **ledger** (across turns and retries): :class:`~dupguard.runtime.ToolCallLedger` decides
   whether the call already ran, by a key that a retry of the same user action reproduces.
   When the turn has an id (the caller's request or idempotency key), the key is the turn id
   plus the tool's name, its canonical arguments and how many identical calls came before it
   in the same attempt — never the model's tool-call id: a model issues new ids every time it
   is asked again, so a retried turn would not find them. Only without a turn id is the
   model's id used, and then it dedupes nothing but the *same* assistant message executed
   again (a stored ``tool_calls`` message replayed without asking the model).
2. **turn guard** (within one turn): :class:`~dupguard.runtime.TurnToolGuard` replays exact
   duplicates, joins in-flight duplicates (two identical calls in one parallel batch), and
   enforces per-tool and per-turn limits with a model-facing reason.
3. the tool runs only when both allow it; its result is committed to both, so that later
   duplicates replay it.

A *turn* is one user message → one final answer. :class:`AdapterGuard` scopes a fresh
``TurnToolGuard`` to each turn through a context variable, so that one set of wrapped tools
(built once, at startup, as frameworks expect) serves many concurrent sessions without one
session's ``new_round`` wiping another's state. It also owns the optional
:class:`~dupguard.runtime.InvocationGuard` that keeps two turns off one stateful agent.

An *attempt* is one run of the agent inside a turn (the adapters' ``run``/``protect`` entry
points open one, through :meth:`AdapterGuard.attempt`). A retry may come as a new turn with
the same id (a client re-sending the request: the occurrence count starts fresh) or as a
second run inside the same turn (a retry loop in the handler): a run that starts after the
turn's previous run raised is a retry, and the occurrence count starts again, so in both
shapes the retried calls map to the keys of the attempt that failed.

This module never imports an agent framework.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..backends import compose_key
from ..guard import InvocationGuard
from ..turn_guard import TurnToolGuard, canonical_args

__all__ = [
    "REPLAY_MODES",
    "AdapterGuard",
    "Outcome",
    "Pending",
    "ToolCallGate",
    "Turn",
    "current_turn",
]

#: ``"annotate"``: a replayed result reaches the model as the guard's reason followed by the
#: earlier result (text), so a looping model learns why; ``"result"``: the earlier result
#: object itself, unchanged (type-preserving, the model cannot tell it was replayed).
REPLAY_MODES = ("annotate", "result")

REPLAYED_KINDS = ("exact", "semantic", "in_flight", "ledger")


@dataclass
class Outcome:
    """What one gated tool call produced.

    ``value``: what the model must see (the tool's result, a replayed result, or a reason).
    ``executed``: the tool body ran in this call. ``kind``: ``"new"`` when it ran, otherwise
    the turn guard's refusal kind or ``"ledger"`` (the call id ran before). ``reason``: the
    model-facing explanation for a refusal (empty when the tool ran). ``error``: the tool's
    exception when it failed (the gate re-raises it after recording).
    """

    value: Any
    executed: bool
    kind: str
    reason: str = ""
    previous: Any = None

    @property
    def replayed(self) -> bool:
        return self.kind in REPLAYED_KINDS


@dataclass
class Turn:
    """One turn's state: its own ``TurnToolGuard``, the caller's turn id (if any), and what
    the ledger keys need: how often each (tool, arguments) was called in the current attempt,
    and whether the previous run in this turn failed (then the next run is a retry)."""

    guard: TurnToolGuard | None
    turn_id: str | None = None
    owner: AdapterGuard | None = None
    occurrences: dict = field(default_factory=dict)
    serial: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    runs: int = 0
    retrying: bool = False

    def begin_run(self) -> None:
        """A run of the agent starts in this turn. Runs nest (a framework entry point calling
        another: only the outermost counts) and may overlap (runs gathered in one turn). The
        outermost run starting after the turn's previous run raised is a retry of it: the
        occurrence count starts again, so its calls get the keys the failed run used. After a
        run that completed, the count goes on: a further run in the same turn (a team's next
        step, a second message) is new work, not a retry."""
        with self.lock:
            if self.runs == 0 and self.retrying:
                self.occurrences.clear()
                self.retrying = False
            self.runs += 1

    def end_run(self, failed: bool) -> None:
        """The run started by :meth:`begin_run` ended; ``failed``: it raised (or was
        cancelled, or its stream was abandoned)."""
        with self.lock:
            self.runs -= 1
            if self.runs == 0:
                self.retrying = failed


_CURRENT: contextvars.ContextVar[Turn | None] = contextvars.ContextVar("dupguard_adapter_turn", default=None)
_HELD: contextvars.ContextVar[frozenset] = contextvars.ContextVar("dupguard_adapter_held", default=frozenset())
_SERIALS = itertools.count(1)


def current_turn() -> Turn | None:
    """The turn the calling task runs in (set by :meth:`AdapterGuard.turn`), or ``None``."""
    return _CURRENT.get()


def _failure_text(exc: BaseException) -> str:
    return f"Error: {type(exc).__name__}: {exc}"


class ToolCallGate:
    """Ledger + turn guard in front of one tool execution. See the module docstring.

    ``turn_guard`` resolves the ``TurnToolGuard`` for the current call (the adapter passes a
    callable that reads the current turn). ``ledger`` is an optional
    :class:`~dupguard.runtime.ToolCallLedger`. ``replay`` is one of :data:`REPLAY_MODES`.
    ``to_text`` renders a result for ``"annotate"`` replays (the framework's own rendering).
    """

    def __init__(
        self,
        turn_guard: Callable[[], TurnToolGuard | None],
        ledger: Any = None,
        *,
        replay: str = "annotate",
        to_text: Callable[[Any], str] = str,
    ) -> None:
        if replay not in REPLAY_MODES:
            raise ValueError(f"replay must be one of {REPLAY_MODES}, not {replay!r}")
        self._turn_guard = turn_guard
        self.ledger = ledger
        self.replay = replay
        self.to_text = to_text

    # -- the model-facing value of a refusal ---------------------------------------------------

    def _shown(self, kind: str, reason: str, previous: Any, to_text: Callable[[Any], str]) -> Any:
        if kind not in REPLAYED_KINDS:
            return reason
        if self.replay == "result":
            return previous
        return f"{reason}\n\n{to_text(previous)}"

    # -- ledger ----------------------------------------------------------------------------------

    def _replay_of(self, decision: Any, name: str, derived: bool) -> Outcome:
        # a key derived from the turn id is not the model's id: name the request instead
        subject = "with these arguments for this request" if derived else f"as call {decision.call_id!r}"
        reason = (
            f"Tool '{name}' was already executed {subject}; its recorded result is repeated below. "
            "Do not request it again."
        )
        return Outcome(None, False, "ledger", reason, decision.result)

    def _key(self, name: str, args: Any, call_id: str | None) -> tuple[str | None, bool]:
        """The ledger key for one call, and whether it was derived from the turn id (see the
        module docstring): the turn's key whenever the turn has an id, else the model's id."""
        if self.ledger is None:
            return None, False
        derived = _derived_call_id(name, args)
        return (derived, True) if derived is not None else (call_id or None, False)

    def _ledger_begin(self, call_id: str | None, name: str, args: Any) -> tuple[Any, Outcome | None]:
        """Claim ``call_id`` in the ledger: ``(decision, None)`` when the call may go on
        (``decision`` is ``None`` without a ledger or an id), ``(None, outcome)`` when the id
        already ran. A call running in another worker is waited for (polling with backoff up
        to its lease: if that worker dies, its lease expires and this call takes over)."""
        key, derived = self._key(name, args, call_id)
        if key is None:
            return None, None
        delay = 0.01
        while True:
            decision = self.ledger.begin(key, name, args)
            if decision.action == "execute":
                return decision, None
            if decision.action == "replay":
                return None, self._replay_of(decision, name, derived)
            time.sleep(min(delay, max(decision.retry_after, 0.001)))
            delay = min(delay * 2, 0.25)

    async def _aledger_begin(self, call_id: str | None, name: str, args: Any) -> tuple[Any, Outcome | None]:
        key, derived = self._key(name, args, call_id)
        if key is None:
            return None, None
        delay = 0.01
        while True:
            decision = await self.ledger.abegin(key, name, args)
            if decision.action == "execute":
                return decision, None
            if decision.action == "replay":
                return None, self._replay_of(decision, name, derived)
            await asyncio.sleep(min(delay, max(decision.retry_after, 0.001)))
            delay = min(delay * 2, 0.25)

    def _ledger_complete(self, decision: Any, value: Any) -> None:
        if decision is not None:
            self.ledger.complete(decision.call_id, value, fence=decision.fence)

    async def _aledger_complete(self, decision: Any, value: Any) -> None:
        if decision is not None:
            await self.ledger.acomplete(decision.call_id, value, fence=decision.fence)

    def _ledger_release(self, decision: Any) -> None:
        if decision is not None:
            self.ledger.release(decision.call_id, fence=decision.fence)

    async def _aledger_release(self, decision: Any) -> None:
        if decision is not None:
            await self.ledger.arelease(decision.call_id, fence=decision.fence)

    # -- the gate ------------------------------------------------------------------------------

    def _shown_outcome(self, outcome: Outcome, render: Callable[[Any], str]) -> Outcome:
        outcome.value = self._shown(outcome.kind, outcome.reason, outcome.previous, render)
        return outcome

    @staticmethod
    def _refusal(reservation: Any, previous: Any) -> Outcome:
        return Outcome(None, False, reservation.kind, reservation.reason, previous)

    async def abegin(
        self,
        name: str,
        args: Any,
        call_id: str | None = None,
        *,
        to_text: Callable[[Any], str] | None = None,
    ) -> Pending | Outcome:
        """Decide for one requested call. Returns a :class:`Pending` when the tool must run
        now (then :meth:`Pending.acommit` its result or :meth:`Pending.afail`), otherwise the
        :class:`Outcome` the model must see instead (a replayed result or a reason). An
        in-flight duplicate waits here, without blocking the loop, for the first call.

        ``call_id`` is the model's tool-call id, if the framework exposes one: the ledger uses
        it only when the current turn has no turn id (see the module docstring)."""
        render = to_text or self.to_text
        decision, done = await self._aledger_begin(call_id, name, args)
        if done is not None:
            return self._shown_outcome(done, render)
        guard = self._turn_guard()
        while True:
            reservation = guard.reserve(name, args) if guard is not None else None
            if reservation is None or reservation.allowed:
                return Pending(self, reservation, decision, render)
            previous = reservation.previous
            if reservation.kind == "in_flight":
                try:
                    previous = await reservation.aresult()
                except (asyncio.CancelledError, concurrent.futures.CancelledError):
                    # the first call was cancelled before producing a result: reserve again,
                    # so that this call (or another waiter) takes its place
                    continue
            outcome = self._shown_outcome(self._refusal(reservation, previous), render)
            # the model sees this answer for this call id: a replay of the id must see it too
            await self._aledger_complete(decision, _jsonable(outcome.value, render))
            return outcome

    def begin(
        self,
        name: str,
        args: Any,
        call_id: str | None = None,
        *,
        to_text: Callable[[Any], str] | None = None,
    ) -> Pending | Outcome:
        """Sync :meth:`abegin` (an in-flight duplicate blocks this thread: use it in worker
        threads, not in a running event loop); finish with :meth:`Pending.commit`/``fail``."""
        render = to_text or self.to_text
        decision, done = self._ledger_begin(call_id, name, args)
        if done is not None:
            return self._shown_outcome(done, render)
        guard = self._turn_guard()
        while True:
            reservation = guard.reserve(name, args) if guard is not None else None
            if reservation is None or reservation.allowed:
                return Pending(self, reservation, decision, render)
            previous = reservation.previous
            if reservation.kind == "in_flight":
                try:
                    previous = reservation.result()
                except concurrent.futures.CancelledError:
                    continue
            outcome = self._shown_outcome(self._refusal(reservation, previous), render)
            self._ledger_complete(decision, _jsonable(outcome.value, render))
            return outcome

    async def arun(
        self,
        name: str,
        args: Any,
        call_id: str | None,
        afn: Callable[[], Awaitable[Any]],
        *,
        to_text: Callable[[Any], str] | None = None,
    ) -> Outcome:
        """:meth:`abegin`, then ``await afn()`` when allowed, and commit. Exceptions from
        ``afn`` propagate after :meth:`Pending.afail` recorded them."""
        ticket = await self.abegin(name, args, call_id, to_text=to_text)
        if isinstance(ticket, Outcome):
            return ticket
        try:
            value = await afn()
        except BaseException as exc:
            await ticket.afail(exc)
            raise
        return await ticket.acommit(value)

    def run(
        self,
        name: str,
        args: Any,
        call_id: str | None,
        fn: Callable[[], Any],
        *,
        to_text: Callable[[Any], str] | None = None,
    ) -> Outcome:
        """Sync :meth:`arun`."""
        ticket = self.begin(name, args, call_id, to_text=to_text)
        if isinstance(ticket, Outcome):
            return ticket
        try:
            value = fn()
        except BaseException as exc:
            ticket.fail(exc)
            raise
        return ticket.commit(value)


class Pending:
    """A call the gate allowed: the caller runs the tool, then commits or fails it exactly
    once (``acommit``/``afail`` after :meth:`ToolCallGate.abegin`, ``commit``/``fail`` after
    :meth:`ToolCallGate.begin`). Hook-based adapters (Strands) hold it between two callbacks."""

    def __init__(self, gate: ToolCallGate, reservation: Any, decision: Any, render: Callable[[Any], str]) -> None:
        self.gate = gate
        self.reservation = reservation
        self.decision = decision
        self.render = render
        self.done = False

    @property
    def call_id(self) -> str | None:
        return self.decision.call_id if self.decision is not None else None

    def _record(self, value: Any) -> Outcome:
        self._finish()
        if self.reservation is not None:
            self.reservation.commit(value)
        return Outcome(value, True, "new")

    def commit(self, value: Any) -> Outcome:
        """Record the tool's result: later duplicates in the turn and replays of the call id
        get it."""
        outcome = self._record(value)
        self.gate._ledger_complete(self.decision, _jsonable(value, self.render))
        return outcome

    async def acommit(self, value: Any) -> Outcome:
        outcome = self._record(value)
        await self.gate._aledger_complete(self.decision, _jsonable(value, self.render))
        return outcome

    def _forget(self, exc: BaseException | None, shown: Any) -> None:
        self._finish()
        if self.reservation is not None:
            if isinstance(exc, Exception):
                self.reservation.commit(shown if shown is not None else _failure_text(exc))
            else:
                self.reservation.cancel()

    def fail(self, exc: BaseException | None = None, shown: Any = None) -> None:
        """The tool failed (``exc`` an ``Exception``) or did not run (a cancellation, or
        ``None``). A failure is committed to the turn as ``shown`` (default: the error text),
        so an identical retry in the same turn gets the same error instead of hammering a
        failing tool; a cancellation is forgotten. Either way the ledger id is released, so a
        retried turn may run it again."""
        self._forget(exc, shown)
        self.gate._ledger_release(self.decision)

    async def afail(self, exc: BaseException | None = None, shown: Any = None) -> None:
        self._forget(exc, shown)
        await self.gate._aledger_release(self.decision)

    def _finish(self) -> None:
        if self.done:
            raise RuntimeError("this call was already committed or failed")
        self.done = True


def _jsonable(value: Any, render: Callable[[Any], str]) -> Any:
    """The ledger stores JSON: plain data as it is, anything else as the text the model saw."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return render(value)
    return value


def _derived_call_id(name: str, args: Any) -> str | None:
    """The ledger key of a call in a turn that has an id: the turn's id plus the call's name
    and canonical arguments, and how many identical calls came before it in this attempt
    (:meth:`Turn.begin_run`). A retry of the turn with the same turn id — a new turn, or a new
    run in the same turn after a failed one — maps to the same keys, whatever ids the model
    gives its calls. Without a turn id there is no such key (``None``)."""
    turn = _CURRENT.get()
    if turn is None or not turn.turn_id:
        return None
    key = (name, canonical_args(args))
    # Exact duplicates inside a turn are the turn guard's job; the occurrence number keeps
    # tools with dedupe_exact=False from colliding on one ledger id.
    with turn.lock:
        n = turn.occurrences.get(key, 0)
        turn.occurrences[key] = n + 1
    return compose_key("turn", str(turn.turn_id), name, key[1], str(n))  # injective: parts are escaped


TurnGuardSpec = TurnToolGuard | Callable[[], TurnToolGuard] | None


class AdapterGuard:
    """The per-application object an adapter hangs off: turn guards, ledger, invocation guard.

    ``turn_guard``: a ``TurnToolGuard`` *factory* (default: ``TurnToolGuard`` with its
    defaults) — each turn gets a fresh one, so concurrent sessions never share turn state; or
    one ``TurnToolGuard`` instance, reused with ``new_round()`` at every turn (only when turns
    of this guard never overlap, e.g. behind the invocation guard). ``None`` disables per-turn
    dedup. ``ledger``: a :class:`~dupguard.runtime.ToolCallLedger` (``None``: no cross-turn
    dedup). ``invocation``: an :class:`~dupguard.runtime.InvocationGuard`, or a mode string
    (``"throw"``, ``"wait"``, ...) to create one, or ``None`` for none. ``replay``: see
    :data:`REPLAY_MODES`.
    """

    def __init__(
        self,
        *,
        turn_guard: TurnGuardSpec = TurnToolGuard,
        ledger: Any = None,
        invocation: InvocationGuard | str | None = None,
        replay: str = "annotate",
        name: str | None = None,
    ) -> None:
        self._turn_spec = turn_guard
        if isinstance(invocation, str):
            invocation = InvocationGuard(invocation, name=name)
        self.invocation = invocation
        self.ledger = ledger
        self._ambient: TurnToolGuard | None = turn_guard if isinstance(turn_guard, TurnToolGuard) else None
        self._ambient_lock = threading.Lock()
        self.gate = ToolCallGate(self._resolve_turn_guard, ledger, replay=replay)

    # -- turns ---------------------------------------------------------------------------------

    def _new_turn_guard(self) -> TurnToolGuard | None:
        spec = self._turn_spec
        if spec is None:
            return None
        if isinstance(spec, TurnToolGuard):
            spec.new_round()
            return spec
        return spec()

    def _resolve_turn_guard(self) -> TurnToolGuard | None:
        turn = _CURRENT.get()
        if turn is not None and turn.owner is self:
            return turn.guard
        # a tool called outside any turn() of this guard: one ambient guard, whose rounds
        # start at new_round() (e.g. the Strands hook's BeforeInvocationEvent)
        if self._turn_spec is None:
            return None
        with self._ambient_lock:
            if self._ambient is None:
                self._ambient = self._new_turn_guard()
            return self._ambient

    def new_round(self) -> None:
        """Start a new round on the ambient turn guard (tools called outside :meth:`turn`)."""
        if self._turn_spec is None:
            return
        with self._ambient_lock:
            self._ambient = self._new_turn_guard()

    @contextlib.contextmanager
    def _enter_turn(self, turn_id: str | None) -> Iterator[Turn]:
        turn = Turn(self._new_turn_guard(), turn_id, self, serial=next(_SERIALS))
        token = _CURRENT.set(turn)
        try:
            yield turn
        finally:
            _CURRENT.reset(token)

    def _holds(self) -> bool:
        return id(self) in _HELD.get()

    @contextlib.asynccontextmanager
    async def turn(self, turn_id: str | None = None) -> AsyncIterator[Turn]:
        """``async with guard.turn(request_id):`` — one turn: holds the invocation guard (if
        any; re-entrant within the same task tree), and scopes a fresh turn guard and the turn
        id to every tool call made inside, including tasks the framework spawns.

        ``turn_id`` identifies the user action (e.g. the HTTP request's idempotency key): a
        retry of the same action with the same id replays, through the ledger, the tool calls
        that already ran. The model's tool-call ids cannot do this (a model asked again issues
        new ids): without a turn id a retried turn runs its tools again."""
        if self._holds():  # re-entered by the same run (a framework method calling another)
            current = _CURRENT.get()
            if current is not None and current.owner is self:
                yield current
                return
            with self._enter_turn(turn_id) as turn:
                yield turn
            return
        held = self.invocation.ahold() if self.invocation is not None else contextlib.nullcontext()
        async with _async_cm(held):
            token = _HELD.set(_HELD.get() | {id(self)})
            try:
                with self._enter_turn(turn_id) as turn:
                    yield turn
            finally:
                _HELD.reset(token)

    @contextlib.contextmanager
    def sync_turn(self, turn_id: str | None = None) -> Iterator[Turn]:
        """Sync :meth:`turn` for frameworks' blocking entry points (call from a thread that
        runs no event loop; ``wait`` mode blocks that thread)."""
        if self._holds():
            current = _CURRENT.get()
            if current is not None and current.owner is self:
                yield current
                return
            with self._enter_turn(turn_id) as turn:
                yield turn
            return
        held = self.invocation.hold() if self.invocation is not None else contextlib.nullcontext()
        with held:
            token = _HELD.set(_HELD.get() | {id(self)})
            try:
                with self._enter_turn(turn_id) as turn:
                    yield turn
            finally:
                _HELD.reset(token)

    @contextlib.asynccontextmanager
    async def attempt(self, turn_id: str | None = None) -> AsyncIterator[Turn]:
        """``async with guard.attempt(request_id):`` — one run of the agent: :meth:`turn`
        (opened here, or the caller's, re-entered), marked as a run so that a run following a
        failed one in the same turn is recognised as its retry (:meth:`Turn.begin_run`). The
        adapters' run entry points (``run``, ``stream``, ``protect``) open one; use it yourself
        around a framework call you make directly inside a retry loop in one :meth:`turn`."""
        async with self.turn(turn_id) as turn:
            with _run_of(turn):
                yield turn

    @contextlib.contextmanager
    def sync_attempt(self, turn_id: str | None = None) -> Iterator[Turn]:
        """Sync :meth:`attempt`, over :meth:`sync_turn`."""
        with self.sync_turn(turn_id) as turn, _run_of(turn):
            yield turn


@contextlib.contextmanager
def _run_of(turn: Turn) -> Iterator[None]:
    turn.begin_run()
    failed = True
    try:
        yield
        failed = False
    finally:
        turn.end_run(failed)


@contextlib.asynccontextmanager
async def _async_cm(cm: Any) -> AsyncIterator[Any]:
    if hasattr(cm, "__aenter__"):
        async with cm as value:
            yield value
    else:
        with cm as value:
            yield value
