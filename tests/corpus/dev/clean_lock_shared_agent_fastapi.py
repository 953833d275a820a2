"""Internal ops bot: one operator console, one agent, calls serialized."""
import asyncio

from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from .ops import drain_node, get_node_health

tools = [FunctionTool.from_defaults(fn=get_node_health), FunctionTool.from_defaults(fn=drain_node)]
ops_agent = ReActAgent.from_tools(tools, llm=OpenAI(model="gpt-4o"), max_iterations=8)
agent_lock = asyncio.Lock()

app = FastAPI(title="ops-console")


@app.post("/ops/ask")
async def ops_ask(question: str):
    async with agent_lock:
        ops_agent.reset()
        answer = await ops_agent.achat(question)
    return {"answer": str(answer)}


@app.get("/ops/busy")
async def busy():
    return {"busy": agent_lock.locked()}


@app.get("/healthz")
async def healthz():
    return {"ok": True}
