# trap: openai-agents Agent is configuration; Runner.run keeps the run state
import asyncio

from agents import Agent, Runner, function_tool
from fastapi import FastAPI

app = FastAPI()


@function_tool
def lookup_order(order_id: str) -> str:
    return order_id


support = Agent(name="support", instructions="Help customers.", tools=[lookup_order])


@app.post("/chat")
async def chat(payload: dict):
    result = await Runner.run(support, payload["message"])
    return {"reply": result.final_output}


@app.post("/batch")
async def batch(payload: dict):
    results = await asyncio.gather(*(Runner.run(support, m) for m in payload["messages"]))
    return [r.final_output for r in results]
