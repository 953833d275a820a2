# trap: pydantic-ai Agent is made to be module-level; each run has its own state
import asyncio

from fastapi import FastAPI
from pydantic_ai import Agent

app = FastAPI()
agent = Agent("openai:gpt-4o", system_prompt="Be concise.")


@app.post("/ask")
async def ask(payload: dict):
    result = await agent.run(payload["question"])
    return {"answer": result.output}


@app.post("/many")
async def many(payload: dict):
    results = await asyncio.gather(*(agent.run(q) for q in payload["questions"]))
    return [r.output for r in results]
