"""Chat service's tool loop, deduplicated per turn with dupguard's TurnToolGuard."""
import json

from openai import OpenAI

from dupguard.runtime import ToolPolicy, TurnToolGuard
from kb.tools import search_kb, open_ticket

client = OpenAI()
HANDLERS = {"search_kb": search_kb, "open_ticket": open_ticket}
SPECS = [
    {"type": "function", "function": {"name": "search_kb", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "open_ticket", "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}},
]
POLICIES = {"search_kb": ToolPolicy(max_calls=2), "open_ticket": ToolPolicy(max_calls=1)}


def respond(user_text: str) -> str:
    guard = TurnToolGuard(POLICIES, max_total_calls=8)
    messages = [{"role": "user", "content": user_text}]
    while True:
        guard.new_round()
        resp = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SPECS)
        msg = resp.choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content or ""
        for call in msg.tool_calls:
            args = json.loads(call.function.arguments)
            reservation = guard.reserve(call.function.name, args)
            if not reservation.allowed:
                content = reservation.reason
            else:
                result = HANDLERS[call.function.name](**args)
                reservation.commit(result)
                content = json.dumps(result)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
