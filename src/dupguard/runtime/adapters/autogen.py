"""AutoGen AgentChat adapter: guarded tools for ``AssistantAgent``, and one run at a time.

::

    from dupguard.runtime.adapters.autogen import AutoGenGuard

    guard = AutoGenGuard(invocation="wait", ledger=ToolCallLedger(scope=session_id))
    agent = guard.protect(AssistantAgent("assistant", model_client=client,
                                         tools=guard.tools([send_email, search])))
    result = await guard.run(agent, task="email bob", turn_id=request_id)

* :meth:`AutoGenGuard.tools` wraps each tool (a ``FunctionTool``, any ``BaseTool``, or a plain
  function, which becomes a ``FunctionTool``) in a ``BaseTool`` subclass that delegates to it.
  ``run_json(args, cancellation_token, call_id)`` — what the agent's workbench calls, with the
  model's call id — goes through the gate. With a turn id (:meth:`AutoGenGuard.run`, or an
  enclosing ``guard.turn(request_id)``), the ledger keys each call by the turn plus the tool,
  its arguments and its occurrence in the run, so a retried task or a redelivered job runs
  each call once although the model gives the retry's calls new ids; without one it keys by
  the call id, which only dedupes the same assistant message executed again (its
  ``tool_calls`` replayed from a stored history). The turn guard replays identical
  calls within a turn (AutoGen runs one message's calls concurrently: the second waits for the
  first's result) and enforces limits with a reason.
* :meth:`AutoGenGuard.protect` holds the invocation guard around ``on_messages`` and
  ``on_messages_stream`` — which ``run``/``run_stream`` and teams call — so two overlapping
  tasks on one agent serialise (``"wait"``) or the second fails fast with
  :class:`~dupguard.runtime.ConcurrentInvocationError` (``"throw"``) before it touches the
  model context. Each guarded call is one turn (one attempt, inside an enclosing turn). The
  agent object is patched in place, so it still is an ``AssistantAgent`` for teams and
  ``isinstance`` checks.

AutoGen is imported only when tools are wrapped.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._core import AdapterGuard

__all__ = ["AutoGenGuard"]


@functools.cache
def _guarded_tool_class() -> type:
    from autogen_core.tools import BaseTool

    class GuardedTool(BaseTool):
        """A ``BaseTool`` that runs its inner tool through an :class:`AutoGenGuard`'s gate.
        Name, description, schema and result rendering are the inner tool's."""

        def __init__(self, inner: Any, owner: AdapterGuard) -> None:
            super().__init__(
                inner.args_type(),
                inner.return_type(),
                inner.name,
                inner.description,
                strict=bool(getattr(inner, "_strict", False)),
            )
            self.inner = inner
            self._dg_owner = owner

        @property
        def schema(self) -> Any:
            return self.inner.schema

        def state_type(self) -> Any:
            return self.inner.state_type()

        def return_value_as_string(self, value: Any) -> str:
            # replays and reasons are already the text the model must see
            return value if isinstance(value, str) else self.inner.return_value_as_string(value)

        async def run(self, args: Any, cancellation_token: Any) -> Any:
            data = args.model_dump() if hasattr(args, "model_dump") else dict(args)
            outcome = await self._dg_owner.gate.arun(
                self.name,
                data,
                None,
                lambda: self.inner.run(args, cancellation_token),
                to_text=self.inner.return_value_as_string,
            )
            return outcome.value

        async def run_json(self, args: Mapping[str, Any], cancellation_token: Any, call_id: str | None = None) -> Any:
            outcome = await self._dg_owner.gate.arun(
                self.name,
                dict(args),
                call_id,
                lambda: self.inner.run_json(args, cancellation_token, call_id=call_id),
                to_text=self.inner.return_value_as_string,
            )
            return outcome.value

        async def save_state_json(self) -> Mapping[str, Any]:
            return await self.inner.save_state_json()

        async def load_state_json(self, state: Mapping[str, Any]) -> None:
            await self.inner.load_state_json(state)

    return GuardedTool


class AutoGenGuard(AdapterGuard):
    """Gated tools + invocation guard for AutoGen AgentChat agents. Arguments as
    :class:`~dupguard.runtime.adapters.AdapterGuard`."""

    def tools(self, tools: Sequence[Any]) -> list:
        """Wrap each tool (see the module docstring). A tool already wrapped by this guard is
        returned unchanged."""
        from autogen_core.tools import BaseTool, FunctionTool

        cls = _guarded_tool_class()
        out = []
        for tool in tools:
            if isinstance(tool, cls) and getattr(tool, "_dg_owner", None) is self:
                out.append(tool)
                continue
            if not isinstance(tool, BaseTool):
                if not callable(tool):
                    raise TypeError(f"not a tool or a function: {tool!r}")
                tool = FunctionTool(tool, description=(tool.__doc__ or tool.__name__).strip())
            out.append(cls(tool, self))
        return out

    async def run(self, agent: Any, *, turn_id: str | None = None, **kwargs: Any) -> Any:
        """``await agent.run(**kwargs)`` (an agent or a team) as one guarded turn keyed by
        ``turn_id``, the request's or job's id (one attempt, inside a caller's :meth:`turn`)."""
        async with self.attempt(turn_id):
            return await agent.run(**kwargs)

    def protect(self, agent: Any) -> Any:
        """Guard every run of ``agent`` (see the module docstring); returns the same agent."""
        if getattr(agent, "_dupguard_protected", None) is self:
            return agent
        on_messages = agent.on_messages
        on_messages_stream = agent.on_messages_stream
        guard = self

        @functools.wraps(on_messages)
        async def guarded_on_messages(*args: Any, **kwargs: Any) -> Any:
            async with guard.attempt():
                return await on_messages(*args, **kwargs)

        @functools.wraps(on_messages_stream)
        async def guarded_on_messages_stream(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            async with guard.attempt():
                async for item in on_messages_stream(*args, **kwargs):
                    yield item

        agent.on_messages = guarded_on_messages
        agent.on_messages_stream = guarded_on_messages_stream
        agent._dupguard_protected = self
        return agent
