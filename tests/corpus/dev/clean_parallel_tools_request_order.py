import asyncio
import json

from openai import AsyncOpenAI

from .tools import SCHEMAS, TOOLS

client = AsyncOpenAI()


async def run_call(call) -> str:
    fn = TOOLS[call.function.name]
    try:
        return json.dumps(await fn(**json.loads(call.function.arguments)))
    except Exception as exc:  # report the failure to the model instead of crashing the turn
        return json.dumps({"error": str(exc)})


async def answer(messages: list[dict], max_rounds: int = 8) -> str:
    for _ in range(max_rounds):
        resp = await client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS)
        msg = resp.choices[0].message
        if not msg.tool_calls:
            return msg.content or ""
        messages.append(msg.model_dump(exclude_none=True))
        outputs = await asyncio.gather(*(run_call(c) for c in msg.tool_calls))
        for call, output in zip(msg.tool_calls, outputs):
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    return "Too many tool rounds."


def answer_sync(question: str) -> str:
    return asyncio.run(answer([{"role": "user", "content": question}]))
