import json
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.outputs import LLMResult
from openai import AssistantEventHandler

from .executor import execute_tool_call, log_tool_call
from .registry import call_tool
from .ws import send_token


# tokens only while streaming; tools run from the final message
class TokenRelay(AsyncCallbackHandler):
    def __init__(self, websocket) -> None:
        self.websocket = websocket

    async def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        await send_token(self.websocket, token)

    async def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for call in response.generations[0][0].message.tool_calls:
            await execute_tool_call(call["id"], call["name"], call["args"])


# deltas printed, tool creation logged, tools run only on requires_action
class ToolRunner(AssistantEventHandler):
    def on_text_delta(self, delta, snapshot):
        print(delta.value, end="", flush=True)

    def on_tool_call_created(self, tool_call):
        log_tool_call(tool_call.id, tool_call.type)

    def on_event(self, event):
        if event.event != "thread.run.requires_action":
            return
        for tc in event.data.required_action.submit_tool_outputs.tool_calls:
            call_tool(tc.function.name, json.loads(tc.function.arguments))


# both callbacks execute, but each tool call id runs once
class IdempotentRunner(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen_ids: set[str] = set()

    def on_llm_new_token(self, token: str, *, chunk=None, **kwargs: Any) -> None:
        for tc in getattr(chunk, "tool_calls", None) or []:
            if tc["id"] in self.seen_ids:
                continue
            self.seen_ids.add(tc["id"])
            execute_tool_call(tc["id"], tc["name"], tc["args"])

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for call in response.generations[0][0].message.tool_calls:
            if call["id"] not in self.seen_ids:
                self.seen_ids.add(call["id"])
                execute_tool_call(call["id"], call["name"], call["args"])


# two handlers, one executing callback each (they are attached to different runs)
class StreamingExecutor(BaseCallbackHandler):
    def on_llm_new_token(self, token: str, *, chunk=None, **kwargs: Any) -> None:
        for tc in getattr(chunk, "tool_calls", None) or []:
            execute_tool_call(tc["id"], tc["name"], tc["args"])


class FinalExecutor(BaseCallbackHandler):
    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for call in response.generations[0][0].message.tool_calls:
            execute_tool_call(call["id"], call["name"], call["args"])


# chat UI callbacks for two different user actions, not two views of one stream
def on_message(message):
    execute_tool_call(message.id, "answer", message.content)


def on_action(action):
    execute_tool_call(action.id, action.name, action.payload)


# callbacks handed to one stream by keyword: only the final one runs tools
def show_progress(event):
    print(event.type, flush=True)


def finish_turn(message):
    for tc in message.tool_calls:
        call_tool(tc.function.name, json.loads(tc.function.arguments))


async def stream_turn(stream_client, messages: list) -> None:
    await stream_client.stream(messages=messages, on_delta=show_progress, on_done=finish_turn)


# the streaming callback only accumulates tool-call chunks and reports tool errors
class ChunkCollector(BaseCallbackHandler):
    def __init__(self) -> None:
        self.partial: dict[int, str] = {}

    def on_llm_new_token(self, token: str, *, chunk=None, **kwargs: Any) -> None:
        self.process_tool_call_chunk(chunk)

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for call in response.generations[0][0].message.tool_calls:
            execute_tool_call(call["id"], call["name"], call["args"])

    def on_tool_end(self, output: str, **kwargs: Any) -> None:
        self.handle_tool_error(output)

    def process_tool_call_chunk(self, chunk) -> None:
        for tc in getattr(chunk, "tool_call_chunks", None) or []:
            self.partial[tc["index"]] = self.partial.get(tc["index"], "") + (tc.get("args") or "")

    def handle_tool_error(self, output: str) -> None:
        if output.startswith("Error"):
            log_tool_call("error", output)
