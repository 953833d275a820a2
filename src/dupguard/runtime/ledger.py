"""``ToolCallLedger``: each tool-call id executes once, however often its message is replayed.

The usual advice, "store an idempotency key per tool call and skip already-processed ids", done
atomically and across workers: ``begin(call_id, name, args)`` claims the id in the store and
answers with a :class:`CallDecision`:

* ``execute`` — you hold the call (``decision.fence``); run the tool, then
  ``complete(call_id, result, fence=decision.fence)`` (or ``release`` if it failed);
* ``replay`` — the call already ran; ``decision.result`` is what it returned;
* ``in_progress`` — another worker is running it right now (``retry_after`` seconds left on
  its lease).

The same id with a different tool name or different arguments raises ``ToolCallIdReused``:
ids are supposed to be unique, so this is a conflict to surface, not a call to run. JSON
argument strings are compared by their parsed value (``'{"a":1}'`` equals ``'{"a": 1}'``).

While a call executes, a heartbeat renews its lease (on the shared heartbeat thread after
``begin``, on the caller's loop after ``abegin``) until ``complete`` or ``release``.

A result the store cannot keep (not JSON, too large; see
:func:`~dupguard.runtime.backends.encode_result`) is not a reason to run the tool again:
``complete`` records the call as done with an :class:`~dupguard.runtime.backends.Unstorable`
marker (and a ``RuntimeWarning``), and a replay's ``result`` is that marker, whose text says
the call ran. Store keys are ``ledger:<scope>:<call id>`` with both parts escaped, so no scope
and id stand for another pair.

A worker killed after its tool ran and before ``complete`` leaves a call nobody knows ran;
``on_abandoned`` decides, as for :class:`~dupguard.runtime.Idempotency` (the claim keeps the
record ``ttl`` past its lease and reports such a call atomically): ``"rerun"`` (the default,
at-least-once: ``execute`` again, with ``decision.expired_holder`` set), ``"raise"``
(at-most-once: ``begin`` raises :class:`~dupguard.runtime.errors.OutcomeUnknown` for every
caller until :meth:`ToolCallLedger.resolve` or :meth:`ToolCallLedger.release` with its fence),
or a ``reconcile(call_id)`` function (sync, or async for ``abegin``) that asks the tool's own
system: what it returns is recorded and answered as a ``replay``; ``MISSING`` means ``execute``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .backends import Backend, Claim, Record, Unstorable, check_duration, compose_key
from .backends.memory import default_backend
from .errors import LeaseLost, OutcomeUnknown, StoreError, ToolCallIdReused
from .idempotency import _GIVE_BACK, MISSING, OnAbandoned, payload_hash
from .lease import Lease, _note

__all__ = ["CallDecision", "ToolCallLedger", "tool_call_parts"]


@dataclass(frozen=True)
class CallDecision:
    """What to do with one tool call; see the module docstring."""

    action: Literal["execute", "replay", "in_progress"]
    call_id: str
    name: str
    fence: int | None = None
    result: Any = None
    retry_after: float = 0.0
    expired_holder: int | None = None  # execute: the fence of a holder that stopped without completing

    @property
    def execute(self) -> bool:
        return self.action == "execute"

    @property
    def replay(self) -> bool:
        return self.action == "replay"


def tool_call_parts(call: Any) -> tuple[str, str, Any]:
    """``(id, name, arguments)`` of a tool call in any of the common shapes.

    OpenAI chat ``{"id", "function": {"name", "arguments"}}`` (dicts or SDK objects), the
    Responses API's ``call_id``, Anthropic's ``{"id", "name", "input"}``, and any mapping or
    object with ``id``/``name``/``arguments`` (or ``args``).
    """

    def field(obj: Any, *names: str) -> Any:
        for name in names:
            value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
            if value is not None:
                return value
        return None

    call_id = field(call, "call_id", "id")
    function = field(call, "function")
    source = function if function is not None else call
    name = field(source, "name")
    args = field(source, "arguments", "args", "input")
    if call_id is None or name is None:
        raise TypeError(f"not a tool call (needs an id and a name): {call!r}")
    return str(call_id), str(name), args


def _canonical_args(args: Any) -> Any:
    if isinstance(args, (str, bytes)):
        try:
            return json.loads(args)
        except ValueError:
            return args if isinstance(args, str) else args.decode(errors="replace")
    return args


class ToolCallLedger:
    """Each tool-call id executes once per ``scope`` (a conversation, a run, an agent…).

    ``ttl`` is how long finished calls are remembered (and replayed), ``lease`` how long a
    worker that stops renewing keeps a call, ``on_abandoned`` what ``begin`` does with a call
    whose worker stopped before completing it (see the module docstring).
    """

    def __init__(
        self,
        store: Backend | None = None,
        *,
        scope: str,
        ttl: float = 86400,
        lease: float = 60,
        on_abandoned: OnAbandoned = "rerun",
    ) -> None:
        if not scope or not isinstance(scope, str):
            raise ValueError("a ToolCallLedger needs a scope (a conversation or run id, a non-empty str)")
        if not callable(on_abandoned) and on_abandoned not in ("rerun", "raise"):
            raise ValueError(
                f"on_abandoned must be 'rerun', 'raise' or a reconcile(call_id) function, not {on_abandoned!r}"
            )
        self.on_abandoned = on_abandoned
        self._store = store
        self.scope = scope
        self.ttl = check_duration(ttl, "ttl")
        self.lease = check_duration(lease, "lease")
        self._leases: dict[tuple[str, int], Lease] = {}
        self._lock = threading.Lock()  # guards _leases only; never held across a store call

    def __repr__(self) -> str:
        return f"ToolCallLedger(scope={self.scope!r})"

    @property
    def store(self) -> Backend:
        return self._store if self._store is not None else default_backend()

    def _key(self, call_id: str) -> str:
        return compose_key("ledger", self.scope, str(call_id))

    def _unstorable(self, call_id: str, error: TypeError) -> Unstorable:
        warnings.warn(
            f"dupguard: the result of tool call {call_id!r} cannot be stored ({error}); it is recorded "
            "as executed, and replays get an Unstorable marker instead of the result",
            RuntimeWarning,
            stacklevel=3,
        )
        return Unstorable(str(error))

    @staticmethod
    def _payload(name: str, args: Any) -> str | None:
        return payload_hash({"name": name, "arguments": _canonical_args(args)})

    @staticmethod
    def _conflict(call_id: str, name: str, stored: str | None, mine: str | None) -> None:
        if stored and mine and stored != mine:
            raise ToolCallIdReused(f"tool call id {call_id!r} ({name}) was seen before with different arguments")

    def _claim_args(self, phash: str | None) -> dict[str, Any]:
        return {"lease": self.lease, "payload": phash, "keep": self.ttl, "take_abandoned": self.on_abandoned != "raise"}

    def _decide(self, call_id: str, name: str, phash: str | None, claim: Claim) -> CallDecision:
        if claim.acquired:
            return CallDecision("execute", call_id, name, fence=claim.fence, expired_holder=claim.expired_holder)
        self._conflict(call_id, name, claim.payload, phash)
        if claim.status == "abandoned":
            raise OutcomeUnknown(
                f"tool call {call_id!r} ({name}): its worker (fence {claim.fence}) stopped before recording whether "
                "it ran, and on_abandoned='raise' does not run it again; find out, then resolve(call_id, result, "
                f"fence={claim.fence}) or release(call_id, fence={claim.fence})",
                key=call_id,
                fence=claim.fence,
            )
        if claim.status == "done":
            return CallDecision("replay", call_id, name, fence=claim.fence, result=claim.result)
        return CallDecision("in_progress", call_id, name, retry_after=claim.remaining)

    def _hold(self, call_id: str, lease: Lease) -> None:
        with self._lock:
            self._leases[(call_id, lease.fence)] = lease

    def _drop(self, call_id: str, fence: int) -> Lease | None:
        with self._lock:
            return self._leases.pop((call_id, fence), None)

    def _reconciling(self, decision: CallDecision) -> bool:
        return decision.execute and decision.expired_holder is not None and callable(self.on_abandoned)

    def _found(self, decision: CallDecision, found: Any) -> CallDecision:
        """What ``reconcile`` found is the call's result: a replay (MISSING: execute it)."""
        if found is MISSING:
            return decision
        return CallDecision("replay", decision.call_id, decision.name, fence=decision.fence, result=found)

    # ------------------------------------------------------------------ sync
    def begin(self, call_id: str, name: str, args: Any = None) -> CallDecision:
        """Claim ``call_id``: execute it, replay its result, or see it running elsewhere."""
        phash = self._payload(name, args)
        claim = self.store.claim(self._key(call_id), **self._claim_args(phash))
        decision = self._decide(call_id, name, phash, claim)
        if decision.execute:
            self._hold(
                call_id, Lease(self.store, self._key(call_id), claim.fence, ttl=self.lease, max_run=self.ttl).start()
            )
        if self._reconciling(decision):
            try:
                found = self.on_abandoned(call_id)  # type: ignore[operator]
                if inspect.isawaitable(found):
                    if inspect.iscoroutine(found):
                        found.close()
                    raise TypeError("on_abandoned returned an awaitable: use abegin(), or a sync reconcile function")
            except BaseException as exc:
                self._give_back_undecided(call_id, claim.fence, exc)
                raise
            decision = self._found(decision, found)
            if decision.replay:
                self.complete(call_id, found, fence=claim.fence)
        return decision

    def _give_back_undecided(self, call_id: str, fence: int, exc: BaseException) -> None:
        """``reconcile`` failed: end the lease now but keep the call abandoned for the next worker."""
        lease = self._drop(call_id, fence)
        if lease is not None:
            lease.stop()
        try:
            self.store.renew(self._key(call_id), fence, lease=_GIVE_BACK)
        except (LeaseLost, StoreError) as failure:
            _note(exc, self._key(call_id), failure)

    def resolve(self, call_id: str, result: Any, *, fence: int) -> None:
        """Record ``result`` for a call whose worker ``fence`` stopped before completing it (see
        :class:`OutcomeUnknown`); ``release(call_id, fence=…)`` declares it did not run instead."""
        self.store.complete(self._key(call_id), fence, result, ttl=self.ttl)

    def complete(self, call_id: str, result: Any, *, fence: int) -> None:
        """Record the result of a call you hold; ``LeaseLost`` if it was taken over."""
        lease = self._drop(call_id, fence)
        try:  # the heartbeat keeps the call ours until its result is recorded
            try:
                self.store.complete(self._key(call_id), fence, result, ttl=self.ttl)
            except TypeError as exc:  # the result cannot be stored: the call still ran
                self.store.complete(self._key(call_id), fence, self._unstorable(call_id, exc), ttl=self.ttl)
        finally:
            if lease is not None:
                lease.stop()

    def release(self, call_id: str, *, fence: int) -> bool:
        """Give a call back after its tool failed, so that a retry may execute it."""
        lease = self._drop(call_id, fence)
        if lease is not None:
            lease.stop()
        return self.store.release(self._key(call_id), fence)

    def pending(self, calls: Iterable[Any]) -> list[Any]:
        """The calls (as given, in order) that have not completed yet.

        A read-only filter: calls running elsewhere are included (they are not finished), and
        ``begin`` still decides who executes. A call id repeated in ``calls`` appears once; a
        repeated or stored id with different arguments raises ``ToolCallIdReused``.
        """
        wanted = self._dedupe(calls)
        return [
            call
            for call, (call_id, name, phash) in wanted
            if self._open(call_id, name, phash, self.store.get(self._key(call_id)))
        ]

    def _dedupe(self, calls: Iterable[Any]) -> list[tuple[Any, tuple[str, str, str | None]]]:
        seen: dict[str, str | None] = {}
        out = []
        for call in calls:
            call_id, name, args = tool_call_parts(call)
            phash = self._payload(name, args)
            if call_id in seen:
                self._conflict(call_id, name, seen[call_id], phash)
                continue
            seen[call_id] = phash
            out.append((call, (call_id, name, phash)))
        return out

    def _open(self, call_id: str, name: str, phash: str | None, record: Record | None) -> bool:
        if record is None:
            return True
        self._conflict(call_id, name, record.payload, phash)
        return record.state != "done"

    # ------------------------------------------------------------------ async
    async def abegin(self, call_id: str, name: str, args: Any = None) -> CallDecision:
        """:meth:`begin` for async code; the heartbeat runs on the caller's loop."""
        phash = self._payload(name, args)
        claim = await self.store.aclaim(self._key(call_id), **self._claim_args(phash))
        decision = self._decide(call_id, name, phash, claim)
        if decision.execute:
            self._hold(
                call_id, Lease(self.store, self._key(call_id), claim.fence, ttl=self.lease, max_run=self.ttl).astart()
            )
        if self._reconciling(decision):
            try:
                found = self.on_abandoned(call_id)  # type: ignore[operator]
                if inspect.isawaitable(found):
                    found = await found
            except BaseException as exc:
                lease = self._drop(call_id, claim.fence)
                if lease is not None:
                    await lease.astop()
                try:
                    await self.store.arenew(self._key(call_id), claim.fence, lease=_GIVE_BACK)
                except (LeaseLost, StoreError) as failure:
                    _note(exc, self._key(call_id), failure)
                raise
            decision = self._found(decision, found)
            if decision.replay:
                await self.acomplete(call_id, found, fence=claim.fence)
        return decision

    async def aresolve(self, call_id: str, result: Any, *, fence: int) -> None:
        """:meth:`resolve` for async code."""
        await self.store.acomplete(self._key(call_id), fence, result, ttl=self.ttl)

    async def acomplete(self, call_id: str, result: Any, *, fence: int) -> None:
        lease = self._drop(call_id, fence)
        try:
            try:
                await self.store.acomplete(self._key(call_id), fence, result, ttl=self.ttl)
            except TypeError as exc:
                marker = self._unstorable(call_id, exc)
                await self.store.acomplete(self._key(call_id), fence, marker, ttl=self.ttl)
        finally:
            if lease is not None:
                await lease.astop()

    async def arelease(self, call_id: str, *, fence: int) -> bool:
        lease = self._drop(call_id, fence)
        if lease is not None:
            await lease.astop()
        return await self.store.arelease(self._key(call_id), fence)

    async def apending(self, calls: Iterable[Any]) -> list[Any]:
        wanted = self._dedupe(calls)
        records = await asyncio.gather(*(self.store.aget(self._key(call_id)) for _call, (call_id, _n, _p) in wanted))
        return [
            call
            for (call, (call_id, name, phash)), record in zip(wanted, records)
            if self._open(call_id, name, phash, record)
        ]
