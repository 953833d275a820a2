"""A scripted llama-index function-calling model: ``llm``.

For a user message such as ``"refund order-42"`` it first asks for the tools named in the
message (``refund(order_id="order-42")``: :func:`myapp.script.tool_calls_for`), then, once the tool results are in the conversation, answers with them. It is
llama-index's own ``MockFunctionCallingLLM`` with a response generator, so agents drive it as
they drive a provider's model (``FunctionAgent(tools=..., llm=llm)``).
"""

from __future__ import annotations

import itertools

from llama_index.core.callbacks.base_handler import BaseCallbackHandler
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM

from myapp.script import tool_calls_for

_ids = itertools.count(1)


def _respond(messages, **_kwargs) -> ChatMessage:
    messages = list(messages)
    users = [i for i, m in enumerate(messages) if m.role == MessageRole.USER]
    if not users:
        return ChatMessage(role=MessageRole.ASSISTANT, content="Hello.")
    turn = messages[users[-1] :]
    results = [str(m.content) for m in turn if m.role == MessageRole.TOOL]
    if any(m.role == MessageRole.ASSISTANT for m in turn):  # the tools ran: answer
        return ChatMessage(role=MessageRole.ASSISTANT, content="; ".join(results) or "done")
    selections = [
        ToolSelection(tool_id=f"call_{next(_ids)}", tool_name=name, tool_kwargs=kwargs)
        for name, kwargs in tool_calls_for(str(turn[0].content))
    ]
    if not selections:
        return ChatMessage(role=MessageRole.ASSISTANT, content=f"You said: {turn[0].content}")
    return ChatMessage(role=MessageRole.ASSISTANT, content="", additional_kwargs={"tool_calls": selections})


llm = MockFunctionCallingLLM(response_generator=_respond)


class TracingHandler(BaseCallbackHandler):
    """A callback handler that counts the events it sees (what a tracing exporter would send)."""

    def __init__(self) -> None:
        super().__init__(event_starts_to_ignore=[], event_ends_to_ignore=[])
        self.events = 0

    def on_event_start(self, event_type, payload=None, event_id="", parent_id="", **kwargs) -> str:
        self.events += 1
        return event_id

    def on_event_end(self, event_type, payload=None, event_id="", **kwargs) -> None:
        self.events += 1

    def start_trace(self, trace_id=None) -> None:
        pass

    def end_trace(self, trace_id=None, trace_map=None) -> None:
        pass
