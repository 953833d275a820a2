"""LlamaIndex adapter: guarded tools for workflow agents, and one turn at a time per agent.

::

    from dupguard.runtime.adapters.llamaindex import LlamaIndexGuard

    guard = LlamaIndexGuard(invocation="wait")                  # one per agent / session
    agent = FunctionAgent(tools=guard.tools([search, send_email]), llm=llm)
    result = await guard.run(agent, "hi", memory=memory, turn_id=request_id)

* :meth:`LlamaIndexGuard.tools` wraps ``FunctionTool`` s (or plain callables, or any
  ``BaseTool``) so every call goes through the turn guard: an identical call in the same turn
  gets the earlier ``ToolOutput`` replayed instead of running again; limits answer with a
  reason the model reads. Wrapped ``FunctionTool`` s stay ``FunctionTool`` s, so tools that take
  the workflow ``Context`` still receive it.
* :meth:`LlamaIndexGuard.run` runs one turn: it holds the invocation guard (an agent, memory
  or ``Context`` shared by mistake is used by one run at a time, or the second run fails with
  ``ConcurrentInvocationError``), gives the turn a fresh turn guard, and awaits
  ``agent.run(...)``.
* The ledger (cross-turn dedup) is keyed by ``turn_id`` (the user action's request or
  idempotency key) plus the call's name and arguments: a retried request with the same
  ``turn_id`` replays the results of tool calls that already ran, whatever ids the model gives
  them this time. Without a ``turn_id``, an agent built from :meth:`LlamaIndexGuard.agent_class`
  keys it by the model's tool-call id (LlamaIndex does not hand a tool its call id; the
  subclass's ``call_tool`` step publishes ``ToolCall.tool_id`` through a context variable) —
  which only dedupes the same assistant message executed again, since a model asked again
  issues new ids. Without either only the turn guard applies.

LlamaIndex is imported only when a tool is wrapped.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Sequence
from typing import Any

from ._core import AdapterGuard, Outcome

__all__ = ["LlamaIndexGuard", "current_tool_call_id", "guard_tools"]

_TOOL_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "dupguard_llamaindex_tool_call_id", default=None
)


def current_tool_call_id() -> str | None:
    """The model's id of the tool call being executed, inside an agent built from
    :meth:`LlamaIndexGuard.agent_class` (``None`` elsewhere)."""
    return _TOOL_CALL_ID.get()


@functools.cache
def _agent_class(base: Any) -> type:
    from llama_index.core.agent.workflow.workflow_events import ToolCall, ToolCallResult
    from llama_index.core.workflow import Context, step

    base_call_tool = base.call_tool

    class GuardedAgent(base):
        @step
        async def call_tool(self, ctx: Context, ev: ToolCall) -> ToolCallResult:
            token = _TOOL_CALL_ID.set(ev.tool_id or None)
            try:
                return await base_call_tool(self, ctx, ev)
            finally:
                _TOOL_CALL_ID.reset(token)

    GuardedAgent.__name__ = GuardedAgent.__qualname__ = base.__name__
    GuardedAgent.__doc__ = (base.__doc__ or "") + "\n\n(dupguard: tools see the model's tool-call id.)"
    return GuardedAgent


def _output_text(output: Any) -> str:
    content = getattr(output, "content", None)
    return content if isinstance(content, str) else str(output)


@functools.cache
def _classes() -> tuple[type, type]:
    """Build the wrapper classes on first use (LlamaIndex imported here, never at import)."""
    from llama_index.core.tools import FunctionTool, ToolOutput
    from llama_index.core.tools.types import AsyncBaseTool

    def to_output(tool: Any, outcome: Outcome, kwargs: dict) -> Any:
        if outcome.executed:
            return outcome.value
        if isinstance(outcome.value, ToolOutput):  # replay="result": the earlier output itself
            return outcome.value
        previous = outcome.previous
        return ToolOutput(
            content=str(outcome.value),
            tool_name=tool.metadata.get_name(),
            raw_input={"args": (), "kwargs": kwargs},
            raw_output=getattr(previous, "raw_output", previous) if outcome.replayed else None,
            is_error=not outcome.replayed,
        )

    class _Gated:
        """Shared call path: strip the workflow Context, gate, convert the outcome."""

        _dg_inner: Any
        _dg_owner: AdapterGuard
        metadata: Any  # FunctionTool's attribute, or GuardedTool's property

        def _dg_args(self, kwargs: dict) -> dict:
            ctx_name = getattr(self._dg_inner, "ctx_param_name", None)
            return {k: v for k, v in kwargs.items() if k != ctx_name}

        def call(self, *args: Any, **kwargs: Any) -> Any:
            call_args = self._dg_args(kwargs) if not args else {"args": list(args), **self._dg_args(kwargs)}
            outcome = self._dg_owner.gate.run(
                self.metadata.get_name(),
                call_args,
                _TOOL_CALL_ID.get(),
                lambda: self._dg_inner.call(*args, **kwargs),
                to_text=_output_text,
            )
            return to_output(self, outcome, call_args)

        async def acall(self, *args: Any, **kwargs: Any) -> Any:
            call_args = self._dg_args(kwargs) if not args else {"args": list(args), **self._dg_args(kwargs)}
            outcome = await self._dg_owner.gate.arun(
                self.metadata.get_name(),
                call_args,
                _TOOL_CALL_ID.get(),
                lambda: self._dg_inner.acall(*args, **kwargs),
                to_text=_output_text,
            )
            return to_output(self, outcome, call_args)

        @property
        def inner(self) -> Any:
            """The wrapped tool."""
            return self._dg_inner

    class GuardedFunctionTool(_Gated, FunctionTool):
        """A ``FunctionTool`` whose calls go through a :class:`LlamaIndexGuard`. It copies the
        wrapped tool's state (metadata, context parameter, partial params) so agents treat it
        exactly like the original, and delegates execution to the original."""

        def __init__(self, inner: Any, owner: AdapterGuard) -> None:
            self.__dict__.update(inner.__dict__)
            self._dg_inner = inner
            self._dg_owner = owner

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self.call(*args, **kwargs)

    class GuardedTool(_Gated, AsyncBaseTool):
        """Any other LlamaIndex tool behind a :class:`LlamaIndexGuard`."""

        def __init__(self, inner: Any, owner: AdapterGuard) -> None:
            self._dg_inner = inner
            self._dg_owner = owner

        @property
        def metadata(self) -> Any:
            return self._dg_inner.metadata

    return GuardedFunctionTool, GuardedTool


class LlamaIndexGuard(AdapterGuard):
    """Turn guard + ledger + invocation guard for LlamaIndex agents. Arguments as
    :class:`~dupguard.runtime.adapters.AdapterGuard` (``turn_guard``, ``ledger``,
    ``invocation``, ``replay``)."""

    def tools(self, tools: Sequence[Any]) -> list:
        """Wrap each tool (``FunctionTool``, any ``BaseTool``, or a plain function, which becomes
        ``FunctionTool.from_defaults(fn)``). Wrapping a wrapped tool returns it unchanged."""
        from llama_index.core.tools import FunctionTool

        guarded_fn_cls, guarded_cls = _classes()
        out = []
        for tool in tools:
            if isinstance(tool, (guarded_fn_cls, guarded_cls)) and getattr(tool, "_dg_owner", None) is self:
                out.append(tool)
                continue
            if not hasattr(tool, "metadata") and callable(tool):
                tool = FunctionTool.from_defaults(tool)
            if isinstance(tool, FunctionTool):
                out.append(guarded_fn_cls(tool, self))
            else:
                out.append(guarded_cls(tool, self))
        return out

    @staticmethod
    def agent_class(base: type) -> type:
        """A subclass of a workflow agent class (``FunctionAgent``, ``ReActAgent``,
        ``CodeActAgent``…) whose ``call_tool`` step tells the tools the model's tool-call id
        (:func:`current_tool_call_id`): ``guard.agent_class(FunctionAgent)(tools=..., llm=...)``.
        The ledger uses that id only in runs without a ``turn_id`` (see the module docstring).
        The subclass changes nothing else (one per base class, cached)."""
        if not hasattr(base, "call_tool"):
            raise TypeError(f"{base.__name__} has no call_tool step (not a LlamaIndex workflow agent)")
        return _agent_class(base)

    async def run(self, agent: Any, *args: Any, turn_id: str | None = None, **kwargs: Any) -> Any:
        """``await agent.run(*args, **kwargs)`` as one guarded turn (see the module docstring),
        or, inside a caller's :meth:`turn`, one attempt of it. Pass the request's id as
        ``turn_id``. Returns the workflow's result (``AgentOutput`` for the built-in agents)."""
        async with self.attempt(turn_id):
            handler = agent.run(*args, **kwargs)
            return await handler

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator for your own coroutine that drives an agent: the whole call is one turn
        (one attempt, inside a caller's :meth:`turn`), keyed by its ``turn_id=`` keyword."""

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            async with self.attempt(kwargs.pop("turn_id", None)):
                return await fn(*args, **kwargs)

        return wrapper


def guard_tools(tools: Sequence[Any], **options: Any) -> list:
    """One-liner: ``FunctionAgent(tools=guard_tools([...]))`` — a fresh :class:`LlamaIndexGuard`
    (``options`` as its arguments) wrapping ``tools``. Keep the guard (``tools[0].inner`` is the
    original) when you also want :meth:`LlamaIndexGuard.run`."""
    return LlamaIndexGuard(**options).tools(tools)
