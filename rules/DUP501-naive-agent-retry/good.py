import asyncio
import json

import backoff
import httpx
import openai
from agents import Agent, Runner
from fastapi import FastAPI, Header
from llama_index.core.agent import ReActAgent
from openai import OpenAI
from tenacity import retry, stop_after_attempt

from dupguard.runtime import Idempotency, SQLiteBackend, idempotent

from .db import already_processed, get_cached_result, store_result
from .tools import TOOL_SCHEMAS, payments, run_tool, support_tools

app = FastAPI()
client = OpenAI()
billing = Agent(name="Billing", instructions="Send invoices.", tools=support_tools)
idem = Idempotency(SQLiteBackend("/var/lib/app/idem.sqlite"), on_in_progress="wait")


# the fix: an idempotency key per user action, checked before the run
@app.post("/chat")
async def chat(payload: dict):
    request_id = payload["request_id"]
    if already_processed(request_id):
        return get_cached_result(request_id)
    agent = ReActAgent.from_tools(tools=support_tools)
    for _ in range(3):
        result = await agent.achat(payload["message"])
    store_result(request_id, result)
    return result


# the retry goes through dupguard.runtime.Idempotency: one execution per key
@app.post("/invoices")
async def invoices(text: str, idempotency_key: str = Header(...)):
    async def run_once():
        return (await Runner.run(billing, text)).final_output

    for attempt in range(3):
        try:
            return {"answer": await idem.arun(idempotency_key, run_once)}
        except ConnectionError:
            await asyncio.sleep(2 ** attempt)
    return {"error": "unavailable"}


# @idempotent under the retry decorator: a retried call with the same key returns the stored result
@retry(stop=stop_after_attempt(3))
@idempotent(key=lambda text, key: key)
async def run_billing(text: str, key: str):
    return await Runner.run(billing, text)


# the tool executor itself is @idempotent: a retried call with the same key replays its result
@backoff.on_exception(backoff.expo, httpx.HTTPError, max_tries=4)
@idempotent(key=lambda idempotency_key, arguments: idempotency_key)
def execute_tool_call(idempotency_key: str, arguments: str) -> dict:
    response = payments.post("/refunds", json=json.loads(arguments))
    response.raise_for_status()
    return response.json()


# a retry around the LLM call only: no tool runs inside it
@backoff.on_exception(backoff.expo, openai.RateLimitError, max_tries=6)
def classify(text: str) -> str:
    response = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return response.choices[0].message.content


# a bounded model↔tool loop: each round executes the *new* response's tool calls, not a retry
def converse(messages: list[dict]) -> str:
    for _ in range(8):
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOL_SCHEMAS).choices[0].message
        if not msg.tool_calls:
            return msg.content
        for call in msg.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": str(run_tool(call.function.name, call.function.arguments))})
    return "step limit reached"


# a work list, not a retry: each question is asked once
async def batch(questions: list[str]) -> list[str]:
    agent = ReActAgent.from_tools(tools=support_tools)
    return [str(await agent.achat(q)) for q in questions]


# a single attempt is not a retry
@retry(stop=stop_after_attempt(1))
async def run_once_only(text: str):
    return await Runner.run(billing, text)


# a chat REPL: each round answers a new message, even after an error
async def repl() -> None:
    agent = ReActAgent.from_tools(tools=support_tools)
    while True:
        try:
            print(await agent.achat(input("> ")))
        except ValueError as exc:
            print("error:", exc)


# a periodic job: it runs again on schedule, not because an attempt failed
async def hourly_digest() -> None:
    while True:
        try:
            await Runner.run(billing, "Send the hourly billing digest.")
        except ConnectionError:
            pass
        await asyncio.sleep(3600)


# sampling: three answers are wanted, each run is collected
async def translations(text: str) -> list[str]:
    out = []
    for _ in range(3):
        result = await Runner.run(billing, text)
        out.append(result.final_output)
    return out


# a retry around an agent whose tools only read: replaying it repeats model calls and reads
def multiply(a: float, b: float) -> float:
    return round(a * b, 4)


research_agent = Agent(name="researcher", tools=[multiply])


@retry(stop=stop_after_attempt(3))
async def research(question: str):
    return await Runner.run(research_agent, question)
