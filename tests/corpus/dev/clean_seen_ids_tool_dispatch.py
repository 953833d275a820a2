"""Executes tool calls from the model exactly once per call id, even when a turn is replayed."""
import json
import logging

from openai import OpenAI

from .tools import TOOL_SCHEMAS, run_tool

log = logging.getLogger(__name__)
client = OpenAI()
MAX_STEPS = 10


def process_tool_calls(message, seen_call_ids: set[str], results: dict[str, str]) -> list[dict]:
    out = []
    for call in message.tool_calls or []:
        if call.id in seen_call_ids:
            log.info("skip duplicate tool call %s", call.id)
        else:
            seen_call_ids.add(call.id)
            results[call.id] = json.dumps(run_tool(call.function.name, json.loads(call.function.arguments)))
        out.append({"role": "tool", "tool_call_id": call.id, "content": results[call.id]})
    return out


def converse(messages: list[dict]) -> str:
    seen_call_ids: set[str] = set()
    results: dict[str, str] = {}
    for _ in range(MAX_STEPS):
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOL_SCHEMAS).choices[0].message
        if not msg.tool_calls:
            return msg.content
        messages.append(msg.model_dump(exclude_none=True))
        messages.extend(process_tool_calls(msg, seen_call_ids, results))
    return "step limit reached"
