import asyncio
import json
from concurrent.futures import ThreadPoolExecutor, as_completed

from openai import AsyncOpenAI

client = AsyncOpenAI()
TOOLS = {}


async def execute(call):
    fn = TOOLS[call.function.name]
    return await fn(**json.loads(call.function.arguments))


async def run_tools_as_they_finish(messages: list, tool_calls: list):
    tasks = [asyncio.create_task(execute(call)) for call in tool_calls]
    for finished in asyncio.as_completed(tasks):
        result = await finished
        messages.append({"role": "tool", "content": json.dumps(result)})  # error: DUP203


async def run_one(call, messages: list):
    result = await execute(call)
    messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})  # error: DUP203


async def run_tools_in_parallel(messages: list, tool_calls: list):
    await asyncio.gather(*(run_one(call, messages) for call in tool_calls))


def run_tools_in_threads(chat_history: list, tool_calls: list, call_tool):
    with ThreadPoolExecutor() as pool:
        futures = {pool.submit(call_tool, call): call for call in tool_calls}
        for future in as_completed(futures):
            chat_history.append({"role": "tool", "tool_call_id": futures[future]["id"], "content": future.result()})  # error: DUP203


class Session:
    def __init__(self):
        self.messages = []

    async def _tool(self, call):
        result = await execute(call)
        self.messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})  # error: DUP203

    async def step(self, tool_calls):
        await asyncio.gather(*[self._tool(c) for c in tool_calls])


async def stream_results(conversation: list, tool_calls: list):
    pending = [execute(c) for c in tool_calls]
    for coro in asyncio.as_completed(pending):
        conversation.extend([{"role": "tool", "content": str(await coro)}])  # error: DUP203
