# trap: LLM clients are stateless and made to be shared
import asyncio

from fastapi import FastAPI
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI, OpenAI

app = FastAPI()
client = OpenAI()
aclient = AsyncOpenAI()
chat_model = ChatOpenAI(model="gpt-4o-mini")


@app.post("/complete")
def complete(payload: dict):
    return client.chat.completions.create(model="gpt-4o-mini", messages=payload["messages"])


@app.post("/lc")
async def lc(payload: dict):
    return await chat_model.ainvoke(payload["message"])


@app.post("/many")
async def many(payload: dict):
    return await asyncio.gather(*(aclient.responses.create(model="gpt-4o-mini", input=p) for p in payload["prompts"]))
