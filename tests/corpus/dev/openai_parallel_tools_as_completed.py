"""Async tool runner used by the chat service (parallel function calling)."""
import asyncio
import json
from typing import Any, Awaitable, Callable

from openai import AsyncOpenAI

client = AsyncOpenAI()
MAX_ROUNDS = 8

ToolFn = Callable[..., Awaitable[Any]]


async def _call(call, registry: dict[str, ToolFn]):
    fn = registry[call.function.name]
    result = await fn(**json.loads(call.function.arguments or "{}"))
    return call.id, result


async def complete_with_tools(messages: list[dict], tools: list[dict], registry: dict[str, ToolFn]) -> str:
    for _ in range(MAX_ROUNDS):
        resp = await client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools, parallel_tool_calls=True
        )
        msg = resp.choices[0].message
        if not msg.tool_calls:
            return msg.content or ""
        messages.append(msg.model_dump(exclude_none=True))
        pending = [_call(c, registry) for c in msg.tool_calls]
        # stream results back as soon as each tool finishes
        for fut in asyncio.as_completed(pending):
            call_id, result = await fut
            messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)})
    raise RuntimeError("tool rounds exhausted")
