import asyncio
import json

import boto3
import httpx
from agents import function_tool
from agents.tool_context import ToolContext
from anthropic import Anthropic
from google.adk.tools import ToolContext as AdkToolContext
from openai import OpenAI
from redis import Redis

from dupguard.runtime import Idempotency, idempotent

from .payments import payments

client = OpenAI()
claude = Anthropic()
redis = Redis.from_url("redis://localhost:6379/0")
sqs = boto3.client("sqs")
idem = Idempotency()
PROCESSED_CALLS: set[str] = set()
_tool_locks: dict[str, asyncio.Lock] = {}


# OpenAI Agents SDK: the refund is keyed by the tool call the model made this time
# (openai/openai-agents-python#4254: "the model mints a new one every turn")
@function_tool
async def refund_order(ctx: ToolContext, order_id: str, amount: int) -> str:
    return await idem.arun(ctx.tool_call_id, lambda: payments.refund(order_id, amount))  # error: DUP506


# Google ADK: a lock per invocation does not stop the parallel agent's second call
# (google/adk-python#3940: "invocation id are dynamic")
async def book_slot(slot: str, tool_context: AdkToolContext) -> dict:
    lock = _tool_locks.setdefault(tool_context.invocation_id, asyncio.Lock())  # error: DUP506
    async with lock:
        return {"booked": slot}


# raw OpenAI loop: a process-wide "already executed" set keyed by the model's id
def run_tools(message) -> list[dict]:
    out = []
    for tool_call in message.tool_calls:
        if tool_call.id in PROCESSED_CALLS:  # error: DUP506
            continue
        PROCESSED_CALLS.add(tool_call.id)
        result = payments.execute(tool_call.function.name, json.loads(tool_call.function.arguments))
        out.append({"role": "tool", "tool_call_id": tool_call.id, "content": json.dumps(result)})
    return out


# Anthropic: a Redis claim on the tool_use id, built in a local key
def run_tool_use(tool_use, conversation_id: str) -> str | None:
    key = f"claim:{conversation_id}:{tool_use.id}"
    if not redis.set(key, "1", nx=True, ex=86400):  # error: DUP506
        return None
    return json.dumps(payments.execute(tool_use.name, tool_use.input))


# a LangChain tool call ({"name", "args", "id"}) forwarded to the payment API with its id as the
# key: the retried attempt's call has another id (agno-agi/agno#10366 measured call_1, call_3, call_5)
def charge(call: dict) -> dict:
    response = httpx.post(
        "https://api.payments.example/charges",
        json=call["args"],
        headers={"Idempotency-Key": call["id"]},  # error: DUP506
    )
    return response.json()


# a worker queue deduplicating on the call id
def enqueue_email(call) -> None:
    sqs.send_message(
        QueueUrl="https://sqs.example/emails.fifo",
        MessageBody=call.function.arguments,
        MessageGroupId="emails",
        MessageDeduplicationId=call.id,  # error: DUP506
    )


# the executor keyed by the id it is handed
@idempotent(key=lambda tool_call_id, arguments: tool_call_id)  # error: DUP506
def execute_tool_call(tool_call_id: str, arguments: str) -> dict:
    return payments.post("/refunds", json=json.loads(arguments)).json()
