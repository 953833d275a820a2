"""Support bot on LlamaIndex (``FunctionAgent``) behind FastAPI, written the way tutorials write it.

The e2e harness serves this file as it is ("before") and as ``dupguard fix --unsafe-fixes``
leaves it ("fixed"); it is never edited by hand between the two. What a reviewer would flag:
one agent and one memory for every user, a tool listed twice, a callback handler added on
every request, a retry loop that replays the whole run (and so the refund), and a batch
endpoint that runs the shared agent and memory from several tasks at once.
"""

import asyncio
import os

import shop
from fastapi import FastAPI
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.callbacks import LlamaDebugHandler
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

llm = OpenAI(
    model="gpt-4o-mini",
    api_base=os.environ.get("FAKE_OPENAI_URL", "http://127.0.0.1:8900/v1"),
    api_key="sk-fake",
    max_retries=0,
    timeout=5,
)
lookup_tool = FunctionTool.from_defaults(fn=shop.lookup_order)
refund_tool = FunctionTool.from_defaults(fn=shop.refund_order)

memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
agent = FunctionAgent(
    tools=[lookup_tool, refund_tool, lookup_tool], llm=llm, system_prompt="Help customers with their orders."
)

app = FastAPI()


class ChatRequest(BaseModel):
    user_id: str
    request_id: str
    message: str


@app.post("/chat")
async def chat(req: ChatRequest):
    shop.current_request.set((req.request_id, req.user_id))
    llm.callback_manager.add_handler(LlamaDebugHandler())
    for attempt in range(3):
        try:
            response = await agent.run(user_msg=req.message, memory=memory)
            return {"answer": str(response)}
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
    responses = await asyncio.gather(*(agent.run(user_msg=m, memory=memory) for m in req.messages))
    return {"answers": [str(r) for r in responses]}
