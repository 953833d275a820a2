"""Streaming chat for the desktop client: tokens go to the UI, tool calls to the executor."""
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_openai import ChatOpenAI

from .executor import execute_tool_call
from .ui import push_token

TOOLS = []  # filled by the plugin loader at startup


class UIStreamHandler(BaseCallbackHandler):
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._chunks: dict[int, dict] = {}

    def on_llm_new_token(self, token: str, *, chunk=None, **kwargs: Any) -> None:
        if token:
            push_token(self.session_id, token)
        for tc in getattr(getattr(chunk, "message", None), "tool_call_chunks", None) or []:
            acc = self._chunks.setdefault(tc["index"], {"id": None, "name": "", "args": ""})
            acc["id"] = tc.get("id") or acc["id"]
            acc["name"] += tc.get("name") or ""
            acc["args"] += tc.get("args") or ""
            if acc["args"].endswith("}"):
                execute_tool_call(self.session_id, acc["id"], acc["name"], acc["args"])

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        message = response.generations[0][0].message
        for call in message.tool_calls:
            execute_tool_call(self.session_id, call["id"], call["name"], call["args"])
        self._chunks.clear()


def stream_reply(session_id: str, messages: list) -> None:
    llm = ChatOpenAI(model="gpt-4o", streaming=True).bind_tools(TOOLS)
    llm.invoke(messages, config={"callbacks": [UIStreamHandler(session_id)]})
