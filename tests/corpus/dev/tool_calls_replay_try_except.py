"""Tool execution layer for the scheduling assistant (raw OpenAI tool calling)."""
import json
import logging

from openai import OpenAI

from .calendar_api import CalendarError, book_slot, find_slots

log = logging.getLogger(__name__)
client = OpenAI()

HANDLERS = {"find_slots": find_slots, "book_slot": book_slot}


def execute_tool_calls(tool_calls) -> list[dict]:
    out = []
    for call in tool_calls:
        fn = HANDLERS[call.function.name]
        out.append({
            "role": "tool",
            "tool_call_id": call.id,
            "content": json.dumps(fn(**json.loads(call.function.arguments))),
        })
    return out


def schedule(messages: list[dict], tools: list[dict]) -> str:
    for _ in range(6):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
        msg = reply.choices[0].message
        if not msg.tool_calls:
            return msg.content
        messages.append(msg.model_dump(exclude_none=True))
        try:
            results = execute_tool_calls(msg.tool_calls)
        except CalendarError as exc:
            log.warning("calendar hiccup, retrying tool calls: %s", exc)
            results = execute_tool_calls(msg.tool_calls)
        messages.extend(results)
    return "I could not complete the booking."
