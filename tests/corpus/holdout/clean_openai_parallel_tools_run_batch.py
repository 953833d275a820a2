"""Async worker executing parallel OpenAI tool calls with dupguard's batch helper."""
import json

from openai import AsyncOpenAI

from dupguard.runtime import TurnClock, run_batch
from pricing.tools import get_price, get_stock, get_shipping

client = AsyncOpenAI()
REGISTRY = {"get_price": get_price, "get_stock": get_stock, "get_shipping": get_shipping}
SPECS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}}}}
    for name in REGISTRY
]
MAX_TURNS = 6


async def execute(call) -> str:
    fn = call["function"]
    value = await REGISTRY[fn["name"]](**json.loads(fn["arguments"]))
    return json.dumps(value)


async def quote(sku: str, conversation_id: str) -> str:
    clock = TurnClock(conversation_id)
    messages = [{"role": "user", "content": f"Quote SKU {sku} with shipping to Berlin."}]
    for _ in range(MAX_TURNS):
        resp = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SPECS)
        msg = resp.choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        if not msg.tool_calls:
            return msg.content or ""
        calls = [tc.model_dump() for tc in msg.tool_calls]
        results = await run_batch(calls, execute, clock=clock, timeout=20)
        for r in results:
            content = r.value if r.error is None else f"error: {r.error}"
            messages.append({"role": "tool", "tool_call_id": r.call_id, "content": content})
    return "no quote"
