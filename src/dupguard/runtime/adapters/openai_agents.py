"""OpenAI Agents SDK adapter: guarded ``FunctionTool`` s, and one run at a time per session.

::

    from dupguard.runtime.adapters.openai_agents import OpenAIAgentsGuard

    guard = OpenAIAgentsGuard(ledger=ToolCallLedger(store, scope=session_id), invocation="wait")
    agent = Agent(name="assistant", tools=guard.tools([send_email, search]))
    result = await guard.run(agent, "email bob", session=session, turn_id=request_id)

* :meth:`OpenAIAgentsGuard.tools` returns copies of the ``FunctionTool`` s (as made by
  ``@function_tool``) whose ``on_invoke_tool(ctx, args)`` goes through the gate. With a
  ``turn_id`` (the request's id), the ledger keys each call by the turn plus the tool, its
  arguments and its occurrence in the run, so a retried request runs each call once although
  the model gives the retry's calls new ``call_id`` s; without one it falls back to
  ``ctx.tool_call_id``, which only dedupes the same model output executed again. The turn
  guard replays identical calls within a run (the SDK runs a response's tool calls
  concurrently: the second waits for the first's result) and enforces limits with a reason the
  model reads. Everything else about the tool (schema, guardrails, approval, timeout, error
  handling) is the SDK's own: the original invoker still runs inside the gate.
* The SDK's ``Agent`` is configuration and safe to share; the state two concurrent runs can
  corrupt is the **session** (conversation history). :meth:`OpenAIAgentsGuard.run` /
  :meth:`run_sync` / :meth:`stream` run one turn under the invocation guard: use one guard per
  session (e.g. from a ``SessionRegistry``) so a client retry waits for, or is refused by, the
  run in progress.

The SDK is imported only when tools are wrapped or a run starts.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ._core import AdapterGuard

__all__ = ["OpenAIAgentsGuard"]


def _output_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


class OpenAIAgentsGuard(AdapterGuard):
    """Gated function tools + per-session run guard for the OpenAI Agents SDK. Arguments as
    :class:`~dupguard.runtime.adapters.AdapterGuard`."""

    def tools(self, tools: Sequence[Any]) -> list:
        """Copies of ``tools`` with gated invocation. ``FunctionTool`` s are wrapped; other
        tools (hosted tools, handoffs) are returned unchanged: they do not run locally."""
        from agents import FunctionTool

        out = []
        for tool in tools:
            if isinstance(tool, FunctionTool) and getattr(tool, "_dupguard_owner", None) is not self:
                tool = self._wrap(tool)
            out.append(tool)
        return out

    def _wrap(self, tool: Any) -> Any:
        gate = self.gate
        original = tool.on_invoke_tool
        name = tool.name

        @functools.wraps(original)
        async def on_invoke_tool(ctx: Any, args: str) -> Any:
            call_id = getattr(ctx, "tool_call_id", None)
            outcome = await gate.arun(name, args or "{}", call_id, lambda: original(ctx, args), to_text=_output_text)
            return outcome.value

        wrapped = copy.copy(tool)
        wrapped.on_invoke_tool = on_invoke_tool
        wrapped._dupguard_owner = self
        wrapped._dupguard_inner = tool
        return wrapped

    async def run(self, agent: Any, input: Any, *, turn_id: str | None = None, **kwargs: Any) -> Any:
        """``await Runner.run(agent, input, **kwargs)`` as one guarded turn (one attempt, inside
        a caller's :meth:`turn`); ``turn_id``: the request's id, which keys the ledger."""
        from agents import Runner

        async with self.attempt(turn_id):
            return await Runner.run(agent, input, **kwargs)

    def run_sync(self, agent: Any, input: Any, *, turn_id: str | None = None, **kwargs: Any) -> Any:
        """``Runner.run_sync`` as one guarded turn (call it where no event loop runs)."""
        from agents import Runner

        with self.sync_attempt(turn_id):
            return Runner.run_sync(agent, input, **kwargs)

    async def stream(self, agent: Any, input: Any, *, turn_id: str | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        """``Runner.run_streamed`` as one guarded turn: yields the stream's events; the guard is
        held until the stream is exhausted (the run goes on in the background until then)."""
        from agents import Runner

        async with self.attempt(turn_id):
            result = Runner.run_streamed(agent, input, **kwargs)
            async for event in result.stream_events():
                yield event
