import asyncio
import threading

from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from strands import Agent

app = FastAPI()
lock = asyncio.Lock()
guarded_agent = ReActAgent.from_tools(tools=[])
script_agent = Agent(system_prompt="batch job")


@app.post("/chat")
async def chat(payload: dict):
    # a fresh agent per request: nothing shared
    agent = ReActAgent.from_tools(tools=[])
    return await agent.achat(payload["message"])


@app.post("/locked")
async def locked(payload: dict):
    # shared, but one run at a time
    async with lock:
        return await guarded_agent.achat(payload["message"])


def summarize(text: str) -> str:
    # a library function: nothing says it runs per request
    return str(script_agent(text))


if __name__ == "__main__":
    cli_agent = Agent(system_prompt="cli")
    print(cli_agent("hello"))
    print(summarize("report"))
    threading.Thread(target=print).start()
