"""Strands Agents adapter: a hook provider that cancels duplicate tool calls, and one
invocation at a time per agent.

::

    from dupguard.runtime.adapters.strands import StrandsGuard

    guard = StrandsGuard(invocation="wait", ledger=ToolCallLedger(scope=session_id))
    agent = guard.protect(Agent(model=model, tools=[search, send_email], hooks=[guard]))
    agent("email bob", invocation_state={"turn_id": request_id})

* As a hook provider (``hooks=[guard]``), in ``BeforeToolCallEvent`` it asks the gate
  (the ledger, then the turn guard) and cancels a duplicate with
  ``event.cancel_tool`` set to a model-facing text; in ``AfterToolCallEvent`` it records the
  result (so later duplicates replay it) and, for a replayed duplicate, rewrites the
  cancellation's error result into a success result carrying the replayed content, so the
  model sees the earlier answer, not an error. Limit refusals stay error results with the
  reason. Each ``BeforeInvocationEvent`` starts a new round.
* ``protect(agent)`` wraps ``agent.stream_async`` (which ``__call__``, ``invoke_async`` and
  ``structured_output`` all go through) in one turn under the invocation guard: ``"wait"``
  serialises overlapping invocations (Strands itself can only refuse them), ``"throw"``
  raises :class:`~dupguard.runtime.ConcurrentInvocationError` before the agent touches any
  state. The agent object stays the same object.
* The ledger key: with a turn id (``invocation_state={"turn_id": ...}`` under ``protect``,
  or an enclosing ``guard.turn(request_id)``), the turn plus the tool, its input and its
  occurrence in the invocation, so a retried request runs each call once although the model
  gives the retry's tool uses new ``toolUseId`` s; without one, the ``toolUseId``, which only
  dedupes the same message executed again.
* Identical calls in one model message run concurrently under Strands' default
  ``ConcurrentToolExecutor``: the second waits in its ``BeforeToolCallEvent`` callback (an
  async callback, so the loop keeps running) for the first one's result.

Strands is imported only when hooks are registered or an agent is protected.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator
from typing import Any

from ._core import AdapterGuard, Outcome, Pending

__all__ = ["StrandsGuard"]


def _result_text(result: Any) -> str:
    """The text of a Strands ``ToolResult`` (its text and JSON content blocks)."""
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        parts = []
        for block in result["content"]:
            if "text" in block:
                parts.append(str(block["text"]))
            elif "json" in block:
                import json

                parts.append(json.dumps(block["json"], sort_keys=True, default=repr))
        return "\n".join(parts)
    return str(result)


class StrandsGuard(AdapterGuard):
    """Hook provider + invocation guard for Strands agents. Arguments as
    :class:`~dupguard.runtime.adapters.AdapterGuard`."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.gate.to_text = _result_text
        self._lock = threading.Lock()
        self._pending: dict[tuple[int, str], Pending] = {}
        self._replays: dict[tuple[int, str], Outcome] = {}

    # -- HookProvider ----------------------------------------------------------------------------

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        from strands.hooks import (
            AfterInvocationEvent,
            AfterToolCallEvent,
            BeforeInvocationEvent,
            BeforeToolCallEvent,
        )

        registry.add_callback(BeforeInvocationEvent, self._on_invocation)
        registry.add_callback(AfterInvocationEvent, self._after_invocation)
        registry.add_callback(BeforeToolCallEvent, self._before_tool)
        registry.add_callback(AfterToolCallEvent, self._after_tool)

    def _on_invocation(self, event: Any) -> None:
        # tools of an invocation outside protect()/turn() share the ambient turn guard
        self.new_round()

    async def _after_invocation(self, event: Any) -> None:
        """Calls allowed but never finished (an interrupt or a cancelled invocation stopped
        them between the two tool events) are given back: their waiters are released and
        their ledger ids freed, so a resumed invocation may run them."""
        agent_id = id(event.agent)
        with self._lock:
            stale = [key for key in self._pending if key[0] == agent_id]
            left = [self._pending.pop(key) for key in stale]
            for key in [key for key in self._replays if key[0] == agent_id]:
                del self._replays[key]
        for pending in left:
            await pending.afail(None)

    @staticmethod
    def _key(event: Any) -> tuple[int, str]:
        return (id(event.agent), str(event.tool_use.get("toolUseId")))

    async def _before_tool(self, event: Any) -> None:
        if event.cancel_tool:  # another hook already cancelled it
            return
        key = self._key(event)
        with self._lock:
            if key in self._pending:  # a hook-requested retry of a call we allowed: let it run
                return
        tool_use = event.tool_use
        decision = await self.gate.abegin(tool_use["name"], tool_use.get("input") or {}, key[1])
        if isinstance(decision, Pending):
            with self._lock:
                self._pending[key] = decision
            return
        # refused: cancel with the model-facing text; After rewrites replays into successes
        with self._lock:
            self._replays[key] = decision
        event.cancel_tool = decision.value if isinstance(decision.value, str) else decision.reason

    async def _after_tool(self, event: Any) -> None:
        key = self._key(event)
        with self._lock:
            replay = self._replays.pop(key, None)
            pending = None if replay is not None else self._pending.get(key)
            if pending is not None and not event.retry:
                del self._pending[key]
        if replay is not None:
            if replay.replayed:
                event.result = self._replay_result(event, replay)
            return
        if pending is None or event.retry:  # not ours, or it will run again
            return
        if event.exception is not None or event.result.get("status") == "error":
            await pending.afail(event.exception or RuntimeError(_result_text(event.result)), shown=event.result)
        else:
            await pending.acommit(event.result)

    def _replay_result(self, event: Any, outcome: Outcome) -> dict:
        value = outcome.value
        if isinstance(value, dict) and "content" in value:  # replay="result": the earlier result
            content = value["content"]
            status = value.get("status", "success")
        else:
            content = [{"text": str(value)}]
            previous = outcome.previous
            status = previous.get("status", "success") if isinstance(previous, dict) else "success"
        return {"toolUseId": str(event.tool_use.get("toolUseId")), "status": status, "content": content}

    # -- invocation guard --------------------------------------------------------------------------

    def protect(self, agent: Any) -> Any:
        """Run every invocation of ``agent`` as one guarded turn (one attempt, inside a
        caller's :meth:`turn`; see the module docstring). Returns the same agent. Pass the
        request's id as ``invocation_state={"turn_id": request_id}``: it keys the ledger, so a
        retried request does not run its tools again (the model's ``toolUseId`` s are new in
        every retry and cannot)."""
        if getattr(agent, "_dupguard_protected", None) is self:
            return agent
        original = agent.stream_async
        guard = self

        @functools.wraps(original)
        async def stream_async(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            state = kwargs.get("invocation_state") or {}
            async with guard.attempt(state.get("turn_id") if isinstance(state, dict) else None):
                async for event in original(*args, **kwargs):
                    yield event

        agent.stream_async = stream_async
        agent._dupguard_protected = self
        return agent
