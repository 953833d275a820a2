import asyncio

from fastapi import FastAPI
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.workflow import Context
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .kb import search_kb, create_issue

agent = FunctionAgent(
    tools=[search_kb, create_issue],
    llm=OpenAI(model="gpt-4o-mini"),
    system_prompt="You are the internal IT helpdesk.",
)
# keep the conversation between calls
ctx = Context(agent)

app = FastAPI()


class Msg(BaseModel):
    text: str


class Bulk(BaseModel):
    texts: list[str]


@app.post("/helpdesk")
async def helpdesk(msg: Msg):
    response = await agent.run(msg.text, ctx=ctx)
    return {"reply": str(response)}


@app.post("/helpdesk/bulk")
async def helpdesk_bulk(bulk: Bulk):
    replies = await asyncio.gather(*[agent.run(t, ctx=ctx) for t in bulk.texts])
    return {"replies": [str(r) for r in replies]}
