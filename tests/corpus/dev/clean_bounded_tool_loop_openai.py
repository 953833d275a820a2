import json

from fastapi import FastAPI
from openai import AsyncOpenAI
from pydantic import BaseModel

from .tools import SCHEMAS, call

client = AsyncOpenAI()
app = FastAPI()
MAX_TURNS = 6


class Query(BaseModel):
    messages: list[dict]


async def agent_loop(messages: list[dict]) -> str:
    for _turn in range(MAX_TURNS):
        resp = await client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS)
        msg = resp.choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        if not msg.tool_calls:
            return msg.content or ""
        for tc in msg.tool_calls:
            result = await call(tc.function.name, json.loads(tc.function.arguments))
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": json.dumps(result)})
    return "Stopped after too many tool rounds."


@app.post("/agent")
async def agent(q: Query):
    return {"answer": await agent_loop(list(q.messages))}
