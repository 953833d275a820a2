import json
from typing import Any

from anthropic import AsyncAnthropic
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from openai import AssistantEventHandler

from .executor import execute_tool_call, maybe_process_tools
from .registry import call_tool, dispatch
from .ui import push_token

client = AsyncAnthropic()


# LangChain: tool-call chunks executed as they stream, then again from the final message
class UIStreamHandler(BaseCallbackHandler):
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.chunks: dict[int, dict] = {}

    def on_llm_new_token(self, token: str, *, chunk=None, **kwargs: Any) -> None:
        push_token(self.session_id, token)
        for tc in getattr(getattr(chunk, "message", None), "tool_call_chunks", None) or []:
            acc = self.chunks.setdefault(tc["index"], {"id": None, "name": "", "args": ""})
            acc["name"] += tc.get("name") or ""
            acc["args"] += tc.get("args") or ""
            if acc["args"].endswith("}"):
                execute_tool_call(self.session_id, acc["id"], acc["name"], acc["args"])

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for call in response.generations[0][0].message.tool_calls:
            execute_tool_call(self.session_id, call["id"], call["name"], call["args"])  # error: DUP403


# OpenAI Assistants: run on "tool call done" and again on "requires_action"
class ToolRunner(AssistantEventHandler):
    def __init__(self) -> None:
        super().__init__()
        self.outputs: list[dict] = []

    def on_tool_call_done(self, tool_call):
        result = call_tool(tool_call.function.name, json.loads(tool_call.function.arguments))
        self.outputs.append({"tool_call_id": tool_call.id, "output": json.dumps(result)})

    def on_event(self, event):
        if event.event == "thread.run.requires_action":
            for tc in event.data.required_action.submit_tool_outputs.tool_calls:
                result = call_tool(tc.function.name, json.loads(tc.function.arguments))  # error: DUP403
                self.outputs.append({"tool_call_id": tc.id, "output": json.dumps(result)})


# Anthropic: dispatched on content_block_stop and again from the final message
class StreamConsumer:
    def __init__(self) -> None:
        self.blocks: dict[int, dict] = {}
        self.pending: dict[int, str] = {}

    async def on_delta(self, event) -> None:
        if event.type == "content_block_stop" and event.index in self.blocks:
            block = self.blocks[event.index]
            await dispatch(block["name"], json.loads(self.pending[event.index] or "{}"))

    async def on_complete(self, message) -> None:
        for block in message.content:
            if block.type == "tool_use":
                await dispatch(block.name, block.input)  # error: DUP403


# AutoGen: tool handling in both callbacks
def on_delta(event):
    maybe_process_tools(event)


def on_complete(message):
    maybe_process_tools(message)  # error: DUP403


# a custom stream listener: chunks run through the executor, the final message through a helper
class ChatCompletionListener:
    def __init__(self, executor) -> None:
        self.executor = executor

    def on_tool_call_delta(self, call) -> None:
        if call.arguments_complete:
            self.executor.execute(call)

    def on_message_done(self, message) -> None:
        self._run_tools(message)  # error: DUP403

    def _run_tools(self, message) -> None:
        for call in message.tool_calls:
            self.executor.execute(call)


# callbacks handed to one stream by keyword: both run the tools
def show_progress(event):
    if event.type == "tool_call.done":
        call_tool(event.name, json.loads(event.arguments))


def finish_turn(message):
    for tc in message.tool_calls:
        call_tool(tc.function.name, json.loads(tc.function.arguments))  # error: DUP403


async def stream_turn(stream_client, messages: list) -> None:
    await stream_client.stream(messages=messages, on_delta=show_progress, on_done=finish_turn)
