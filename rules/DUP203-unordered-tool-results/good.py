import asyncio
import json
from concurrent.futures import ThreadPoolExecutor, as_completed

from dupguard.runtime import TurnClock, run_batch
from openai import AsyncOpenAI

client = AsyncOpenAI()
TOOLS = {}


async def execute(call):
    fn = TOOLS[call.function.name]
    return await fn(**json.loads(call.function.arguments))


async def gather_then_append(messages: list, tool_calls: list):
    # gather returns results in request order; one writer appends them
    results = await asyncio.gather(*(execute(c) for c in tool_calls))
    for call, result in zip(tool_calls, results):
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})


async def with_run_batch(messages: list, tool_calls: list, clock: TurnClock):
    for result in await run_batch(tool_calls, execute, clock=clock):
        messages.append({"role": "tool", "tool_call_id": result.call_id, "content": json.dumps(result.value)})


async def task_owns_its_list(call):
    notes = []
    notes.append(await execute(call))
    return notes


async def parallel_with_private_lists(tool_calls: list):
    return await asyncio.gather(*(task_owns_its_list(c) for c in tool_calls))


def completion_order_to_a_log(tool_calls: list, call_tool, log: list):
    with ThreadPoolExecutor() as pool:
        futures = [pool.submit(call_tool, c) for c in tool_calls]
        for future in as_completed(futures):
            log.append(future.result())  # a log, not the model's history


def collect_then_sort(messages: list, tool_calls: list, call_tool):
    with ThreadPoolExecutor() as pool:
        futures = {pool.submit(call_tool, c): i for i, c in enumerate(tool_calls)}
        results = {futures[f]: f.result() for f in as_completed(futures)}
    for index in sorted(results):
        messages.append({"role": "tool", "content": results[index]})


def respond(message: str, chat_history: list):
    # a Gradio event function: `box.submit(...)` below registers it; it is not executor.submit,
    # and chat_history is this visitor's own value, passed in and returned by Gradio
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": message}])
    chat_history.append({"role": "assistant", "content": reply.choices[0].message.content})
    return "", chat_history


def build_ui(gr):
    with gr.Blocks() as demo:
        history = gr.Chatbot()
        box = gr.Textbox()
        box.submit(respond, inputs=[box, history], outputs=[box, history])
    return demo
