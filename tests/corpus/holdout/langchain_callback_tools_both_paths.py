"""Worker-side LangChain callback that executes tool calls as they stream in.

Used by the voice gateway so that slow tools start before the model finishes talking.
"""
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from voice.tools import TOOL_REGISTRY


class EagerToolRunner(BaseCallbackHandler):
    """Starts tools as early as possible and keeps their results for the next turn."""

    def __init__(self) -> None:
        self.results: dict[str, Any] = {}
        self._partial: dict[int, dict] = {}

    def execute_tool_call(self, call: dict) -> None:
        tool = TOOL_REGISTRY[call["name"]]
        self.results[call["id"]] = tool.invoke(call["args"])

    def on_llm_new_token(self, token: str, *, chunk: Any = None, **kwargs: Any) -> None:
        if chunk is None:
            return
        for part in getattr(chunk.message, "tool_call_chunks", []) or []:
            slot = self._partial.setdefault(part["index"], {"name": "", "args": "", "id": None})
            slot["name"] += part.get("name") or ""
            slot["args"] += part.get("args") or ""
            slot["id"] = slot["id"] or part.get("id")
            if slot["args"].endswith("}"):
                import json

                self.execute_tool_call({"name": slot["name"], "args": json.loads(slot["args"]), "id": slot["id"]})

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generation in response.generations[0]:
            message = getattr(generation, "message", None)
            for call in getattr(message, "tool_calls", []) or []:
                self.execute_tool_call(call)
        self._partial.clear()
