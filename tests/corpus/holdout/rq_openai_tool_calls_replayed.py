"""RQ job: reconcile a customer's subscription with a raw OpenAI tool loop."""
import json
import logging

from openai import OpenAI, APIError
from redis import Redis
from rq import Queue

from subscriptions import api as subs

log = logging.getLogger(__name__)
client = OpenAI()
queue = Queue("reconcile", connection=Redis())
MAX_STEPS = 8

TOOLS = [
    {"type": "function", "function": {"name": "get_subscription", "parameters": {
        "type": "object", "properties": {"customer_id": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "apply_credit", "parameters": {
        "type": "object", "properties": {"customer_id": {"type": "string"}, "cents": {"type": "integer"}}}}},
]
HANDLERS = {"get_subscription": subs.get_subscription, "apply_credit": subs.apply_credit}


def execute_tool_calls(messages: list, tool_calls) -> None:
    for call in tool_calls:
        result = HANDLERS[call.function.name](**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})


def reconcile(customer_id: str) -> str:
    messages = [
        {"role": "system", "content": "Fix billing mismatches. Apply at most one credit."},
        {"role": "user", "content": f"Reconcile customer {customer_id}."},
    ]
    for _step in range(MAX_STEPS):
        response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
        msg = response.choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content or ""
        try:
            execute_tool_calls(messages, msg.tool_calls)
        except APIError:
            log.warning("billing API hiccup, running the calls again")
            execute_tool_calls(messages, msg.tool_calls)
    return "gave up"


def enqueue(customer_id: str):
    return queue.enqueue(reconcile, customer_id, job_timeout=300)
