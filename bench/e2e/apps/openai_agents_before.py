"""Support bot on the OpenAI Agents SDK behind FastAPI, written the way tutorials write it.

The e2e harness serves this file as it is ("before") and as ``dupguard fix --unsafe-fixes``
leaves it ("fixed"); it is never edited by hand between the two. What a reviewer would flag:
one session for every user, a retry loop that replays the whole run (and so the refund), and a
batch endpoint that runs the shared session from several tasks at once.
"""

import asyncio
import os

import shop
from agents import Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession, function_tool, set_tracing_disabled
from fastapi import FastAPI
from openai import AsyncOpenAI
from pydantic import BaseModel

set_tracing_disabled(True)
client = AsyncOpenAI(
    base_url=os.environ.get("FAKE_OPENAI_URL", "http://127.0.0.1:8900/v1"), api_key="sk-fake", max_retries=0, timeout=5
)
model = OpenAIChatCompletionsModel(model="fake-model", openai_client=client)


@function_tool
async def refund_order(order_id: str) -> str:
    """Refund an order."""
    return await shop.refund_order(order_id)


@function_tool
async def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return await shop.lookup_order(order_id)


agent = Agent(
    name="support", instructions="Help customers with their orders.", model=model, tools=[lookup_order, refund_order]
)
session = SQLiteSession("support", os.environ.get("SESSION_DB", "sessions.db"))

app = FastAPI()


class ChatRequest(BaseModel):
    user_id: str
    request_id: str
    message: str


@app.post("/chat")
async def chat(req: ChatRequest):
    shop.current_request.set((req.request_id, req.user_id))
    for attempt in range(3):
        try:
            result = await Runner.run(agent, req.message, session=session)
            return {"answer": result.final_output}
        except Exception:
            await asyncio.sleep(0.2 * (attempt + 1))
    return {"answer": "Sorry, something went wrong."}


class BatchRequest(BaseModel):
    user_id: str
    request_id: str
    messages: list[str]


@app.post("/batch")
async def batch(req: BatchRequest):
    shop.current_request.set((req.request_id, req.user_id))
    results = await asyncio.gather(*(Runner.run(agent, m, session=session) for m in req.messages))
    return {"answers": [r.final_output for r in results]}
