import asyncio

from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .tools import my_tools

app = FastAPI()
llm = OpenAI(model="gpt-4o-mini")


def build_agent() -> ReActAgent:
    return ReActAgent.from_tools(tools=my_tools, llm=llm, max_iterations=6)


async def run_query(q: str) -> str:
    local_agent = build_agent()
    return str(await local_agent.achat(q))


class Batch(BaseModel):
    queries: list[str]


@app.post("/batch")
async def batch(body: Batch):
    results = await asyncio.gather(*(run_query(q) for q in body.queries))
    return {"results": results}


@app.post("/batch/fast")
async def batch_fast(body: Batch):
    results = await asyncio.gather(*(build_agent().achat(q) for q in body.queries))
    return {"results": [str(r) for r in results]}
