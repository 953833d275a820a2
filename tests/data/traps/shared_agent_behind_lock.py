# trap: a shared stateful agent used under a lock runs one request at a time
import asyncio
import threading

from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from strands import Agent

app = FastAPI()
agent = ReActAgent.from_tools(tools=[])
agent_lock = asyncio.Lock()
bot = Agent(system_prompt="support")
bot_lock = threading.Lock()


@app.post("/chat")
async def chat(payload: dict):
    async with agent_lock:
        return await agent.achat(payload["message"])


@app.post("/bot")
def bot_route(payload: dict):
    with bot_lock:
        return str(bot(payload["message"]))
