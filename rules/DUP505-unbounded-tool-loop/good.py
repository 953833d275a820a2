import json
import queue
import time

import anthropic
from openai import OpenAI

from dupguard.runtime import TurnToolGuard

from .tools import DISPATCH, EVENTS, SCHEMAS, TOOLS, WEATHER, run_tool

client = OpenAI()
claude = anthropic.Anthropic()
MAX_STEPS = 8
MAX_ROUNDS = 12


# an iteration cap in the loop header
def capped_for(messages: list) -> str:
    for _step in range(MAX_STEPS):
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        if not msg.tool_calls:
            return msg.content
        for call in msg.tool_calls:
            output = DISPATCH[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)})
    return "step limit reached"


# a counter checked inside `while True`
def counted(task: str) -> str:
    messages = [{"role": "user", "content": task}]
    rounds = 0
    while True:
        rounds += 1
        if rounds > MAX_ROUNDS:
            return "Giving up: too many tool rounds."
        response = claude.messages.create(model="claude-3-7-sonnet-latest", max_tokens=2048, tools=TOOLS, messages=messages)
        if response.stop_reason != "tool_use":
            return "".join(b.text for b in response.content if b.type == "text")
        results = [{"type": "tool_result", "tool_use_id": b.id, "content": str(run_tool(b.name, b.input))}
                   for b in response.content if b.type == "tool_use"]
        messages.append({"role": "user", "content": results})


# a counter in the loop test
def while_counter(messages: list) -> str:
    steps = 0
    while steps < MAX_STEPS:
        steps += 1
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        if not msg.tool_calls:
            return msg.content
        for call in msg.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": str(run_tool(call.function.name, json.loads(call.function.arguments)))})
    return "step limit reached"


# a time budget
def deadline_loop(messages: list, budget_s: float = 60.0) -> str:
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        if not msg.tool_calls:
            return msg.content
        for call in msg.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": str(run_tool(call.function.name, json.loads(call.function.arguments)))})
    return "time budget exhausted"


# TurnToolGuard dedups and limits the calls of this turn
def guarded(messages: list) -> str:
    guard = TurnToolGuard(max_total_calls=20)
    while True:
        guard.new_round()
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        if not msg.tool_calls:
            return msg.content
        for call in msg.tool_calls:
            reservation = guard.reserve(call.function.name, json.loads(call.function.arguments))
            if not reservation.allowed:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": reservation.reason})
                continue
            result = run_tool(call.function.name, json.loads(call.function.arguments))
            reservation.commit(result)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})


# per-call-id dedup: a call id that already ran gets its stored result
def deduped(messages: list) -> str:
    done: dict[str, str] = {}
    while True:
        response = claude.messages.create(model="claude-3-7-sonnet-latest", max_tokens=2048, tools=TOOLS, messages=messages)
        if response.stop_reason != "tool_use":
            return "".join(b.text for b in response.content if b.type == "text")
        for block in response.content:
            if block.type == "tool_use" and block.id not in done:
                done[block.id] = str(run_tool(block.name, block.input))
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": k, "content": v}
                                                     for k, v in done.items()]})


# a while loop that only talks to the model (streaming reconnects): no tools run
def stream_until_done(messages: list) -> str:
    text = ""
    while not text:
        text = client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content or ""
    return text


# a worker loop: every round is a new job with a single model round, not a model↔tool loop
jobs: queue.Queue = queue.Queue()


def worker() -> None:
    while True:
        job = jobs.get()
        msg = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": job}],
                                             tools=SCHEMAS).choices[0].message
        for call in msg.tool_calls or []:
            DISPATCH[call.function.name](**json.loads(call.function.arguments))
        jobs.task_done()


# bounded by a budget of tool calls rather than by a round counter
def budgeted(messages: list) -> str:
    remaining = 12
    while remaining:
        reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS)
        message = reply.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            return message.content
        remaining -= len(message.tool_calls)
        for call in message.tool_calls:
            result = DISPATCH[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})
    return "tool budget spent"


# every tool the loop can run only reads (a dispatch table of this module): a stuck model repeats
# lookups, nothing a user sees twice
def lookup_weather(city: str) -> str:
    return WEATHER.get(city, "unknown")


def search_events(city: str) -> list:
    return EVENTS.get(city, [])


READERS = {"lookup_weather": lookup_weather, "search_events": search_events}


def read_only(messages: list) -> str:
    while True:
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content or ""
        for call in msg.tool_calls:
            output = READERS[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)})
