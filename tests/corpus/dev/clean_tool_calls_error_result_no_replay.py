"""On a tool failure we report the error to the model instead of re-running the calls."""
import json
import logging

from openai import OpenAI

from .calendar_api import CalendarError, HANDLERS

log = logging.getLogger(__name__)
client = OpenAI()


def execute_tool_calls(tool_calls) -> list[dict]:
    out = []
    for call in tool_calls:
        try:
            content = json.dumps(HANDLERS[call.function.name](**json.loads(call.function.arguments)))
        except CalendarError as exc:
            log.warning("tool %s failed: %s", call.function.name, exc)
            content = json.dumps({"error": str(exc), "retryable": True})
        out.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return out


def schedule(messages: list[dict], tools: list[dict]) -> str:
    for _ in range(6):
        msg = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools).choices[0].message
        if not msg.tool_calls:
            return msg.content
        messages.append(msg.model_dump(exclude_none=True))
        messages.extend(execute_tool_calls(msg.tool_calls))
    return "I could not complete the booking."
