"""OpenAI Assistants streaming: tokens relayed from deltas, tools run from requires_action only."""
import json

from openai import AsyncOpenAI, AsyncAssistantEventHandler
from typing_extensions import override

from orders.tools import TOOLS

client = AsyncOpenAI()


class OrderDeskHandler(AsyncAssistantEventHandler):
    def __init__(self, sink) -> None:
        super().__init__()
        self.sink = sink

    @override
    async def on_text_delta(self, delta, snapshot) -> None:
        await self.sink.send(delta.value or "")

    @override
    async def on_tool_call_delta(self, delta, snapshot) -> None:
        if delta.type == "function" and delta.function and delta.function.name:
            await self.sink.send(f"[calling {delta.function.name}]")

    @override
    async def on_event(self, event) -> None:
        if event.event == "thread.run.requires_action":
            run = event.data
            outputs = []
            for call in run.required_action.submit_tool_outputs.tool_calls:
                result = await TOOLS[call.function.name](**json.loads(call.function.arguments))
                outputs.append({"tool_call_id": call.id, "output": json.dumps(result)})
            async with client.beta.threads.runs.submit_tool_outputs_stream(
                thread_id=run.thread_id, run_id=run.id, tool_outputs=outputs,
                event_handler=OrderDeskHandler(self.sink),
            ) as stream:
                await stream.until_done()


async def stream_turn(thread_id: str, assistant_id: str, sink) -> None:
    async with client.beta.threads.runs.stream(
        thread_id=thread_id, assistant_id=assistant_id, event_handler=OrderDeskHandler(sink)
    ) as stream:
        await stream.until_done()
