import asyncio
import json
import time

import backoff
import httpx
import stamina
from agents import Agent, Runner
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.teams import RoundRobinGroupChat
from crewai import Crew
from dupguard.runtime import Idempotency, ToolCallLedger, idempotent, store_from_env
from dupguard.runtime.adapters.llamaindex import LlamaIndexGuard
from dupguard.runtime.adapters.openai_agents import OpenAIAgentsGuard
from fastapi import FastAPI, Header
from langchain.agents import AgentExecutor
from llama_index.core.agent import ReActAgent
from llama_index.core.agent.workflow import FunctionAgent
from pydantic import BaseModel
from strands import Agent as StrandsAgent
from tenacity import Retrying, retry, stop_after_attempt, wait_exponential

from .tools import billing_tools, model_client, payments, refund_order, support_tools

_store = store_from_env()
_guard = OpenAIAgentsGuard(ledger=ToolCallLedger(_store, scope=__name__))
_llama_index_guard = LlamaIndexGuard(ledger=ToolCallLedger(_store, scope=__name__))

_idempotency = Idempotency(on_in_progress="wait")

app = FastAPI()
concierge = Agent(name="Concierge", instructions="Book rooms.", tools=billing_tools)
desk = Agent(name="Desk", instructions="Refund orders.", tools=_guard.tools([refund_order]))
helper = FunctionAgent(tools=_llama_index_guard.tools([refund_order]), llm=model_client, system_prompt="Refund orders.")


# LlamaIndex: the naive retry replays the whole agent run, even with the
# client's Idempotency-Key header at hand
async def ask(agent: ReActAgent, message: str) -> str:
    return str(await agent.achat(message))


@app.post("/chat")
async def chat(payload: dict, idempotency_key: str = Header(...)):
    agent = ReActAgent.from_tools(tools=support_tools)
    message = payload["message"]
    for _ in range(3):
        reply = await _idempotency.arun(f"{__name__}.chat:{idempotency_key}", lambda: ask(agent, message))
    return {"answer": reply}


# AutoGen AgentChat: a timeout after the first tool call runs the whole team again
async def review_text(team: RoundRobinGroupChat, ticker: str) -> str:
    result = await team.run(task=f"Review {ticker}")
    return result.messages[-1].content


@app.post("/review")
async def review(ticker: str, request_id: str = Header(...)):
    writer = AssistantAgent("writer", model_client=model_client, tools=[refund_order])
    team = RoundRobinGroupChat([writer])
    for attempt in range(3):
        try:
            text = await _idempotency.arun(f"{__name__}.review:{request_id}", lambda: review_text(team, ticker))
            return {"text": text}
        except TimeoutError:
            await asyncio.sleep(1 + attempt)
    return {"error": "timed out"}


# OpenAI Agents SDK: the Agent is config, but Runner.run executes its tools again
@idempotent(key=lambda text, request_id: request_id, on_in_progress="wait")
@retry(stop=stop_after_attempt(4), wait=wait_exponential(min=1, max=20))
async def run_concierge(text: str, request_id: str) -> str:
    result = await Runner.run(concierge, text)
    return result.final_output


# Strands: retry until the model stops failing
def answer(prompt: str, message_id: str) -> str:
    support = StrandsAgent(system_prompt="You issue refunds.", tools=[refund_order])
    while True:
        try:
            return _idempotency.run(f"{__name__}.answer:{message_id}", lambda: str(support(prompt)))
        except ConnectionError:
            time.sleep(2)


# raw OpenAI tool execution retried by backoff: the refund is posted twice after a read timeout
@idempotent(key=lambda idempotency_key, arguments: idempotency_key, on_in_progress="wait")
@backoff.on_exception(backoff.expo, httpx.HTTPError, max_tries=4)
def execute_tool_call(idempotency_key: str, arguments: str) -> dict:
    response = payments.post("/refunds", json=json.loads(arguments))
    response.raise_for_status()
    return response.json()


# LangChain AgentExecutor behind stamina
@idempotent(key=lambda executor, lead_id, request_id: request_id, on_in_progress="wait")
@stamina.retry(on=httpx.HTTPError, attempts=3)
def score_lead(executor: AgentExecutor, lead_id: str, request_id: str) -> str:
    return executor.invoke({"input": f"Score lead {lead_id} and save it."})["output"]


# CrewAI with tenacity's iterator form, through a helper
def kick(crew: Crew, topic: str) -> str:
    return crew.kickoff(inputs={"topic": topic}).raw


def publish(crew: Crew, topic: str, task_id: str) -> str:
    for attempt in Retrying(stop=stop_after_attempt(3)):
        with attempt:
            return _idempotency.run(f"{__name__}.publish:{task_id}", lambda: kick(crew, topic))


# OpenAI Agents SDK behind FastAPI: the model call after the refund times out, the loop runs the
# agent again, the model asks for the refund again with a new tool-call id
class RefundRequest(BaseModel):
    request_id: str
    message: str


@app.post("/refunds")
async def refunds(req: RefundRequest):
    for attempt in range(3):
        try:
            result = await _guard.run(desk, req.message, turn_id=req.request_id)
            return {"answer": result.final_output}
        except TimeoutError:
            await asyncio.sleep(1 + attempt)
    return {"error": "timed out"}


# LlamaIndex workflow agent, keyed by the client's X-Request-ID header
@app.post("/helper")
async def helper_turn(message: str, x_request_id: str = Header(...)):
    for attempt in range(3):
        try:
            return {"answer": str(await _llama_index_guard.run(helper, user_msg=message, turn_id=x_request_id))}
        except TimeoutError:
            await asyncio.sleep(1 + attempt)
    return {"error": "timed out"}
