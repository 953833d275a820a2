"""FastAPI-free helper module: run one turn's tool calls concurrently, record in order."""
import asyncio
import json
from typing import Any

from openai import AsyncOpenAI

from geo.tools import geocode, timezone_for, local_time

client = AsyncOpenAI()
TOOLS = {"geocode": geocode, "timezone_for": timezone_for, "local_time": local_time}
SCHEMAS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {"place": {"type": "string"}}}}}
    for n in TOOLS
]


async def _execute(call) -> Any:
    return await TOOLS[call.function.name](**json.loads(call.function.arguments))


async def answer(question: str, max_rounds: int = 4) -> str:
    messages: list[Any] = [{"role": "user", "content": question}]
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        resp = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SCHEMAS)
        msg = resp.choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content or ""
        values = await asyncio.gather(*(_execute(c) for c in msg.tool_calls), return_exceptions=True)
        for call, value in zip(msg.tool_calls, values):
            text = f"error: {value}" if isinstance(value, Exception) else json.dumps(value)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    return "too many rounds"
