"""Streaming gateway: relays model events to the browser and runs tools.

The SDK calls the module-level on_* functions registered in `wire()`.
"""
import json

from llama_index.core import Settings
from llama_index.core.callbacks import CallbackManager, LlamaDebugHandler

from gateway.tools import dispatch
from gateway.push import push_to_browser

Settings.callback_manager = CallbackManager([])
Settings.callback_manager.add_handler(LlamaDebugHandler())
Settings.callback_manager.add_handler(LlamaDebugHandler())

_buffers: dict[str, dict] = {}


def on_delta(event: dict) -> None:
    push_to_browser(event["session"], event.get("text", ""))
    for part in event.get("tool_calls", []):
        buf = _buffers.setdefault(part["id"], {"name": part.get("name"), "args": ""})
        buf["args"] += part.get("arguments", "")
        if buf["args"].rstrip().endswith("}"):
            dispatch(buf["name"], json.loads(buf["args"]))


def on_complete(message: dict) -> None:
    for call in message.get("tool_calls", []):
        dispatch(call["function"]["name"], json.loads(call["function"]["arguments"]))
    _buffers.clear()
    push_to_browser(message["session"], "[done]")


def wire(stream) -> None:
    stream.subscribe("delta", on_delta)
    stream.subscribe("complete", on_complete)
