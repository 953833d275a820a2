import asyncio
import json

from anthropic import AsyncAnthropic

from .registry import TOOL_SPECS, dispatch

client = AsyncAnthropic()


class StreamConsumer:
    """Feeds Anthropic stream events to the websocket and runs the requested tools."""

    def __init__(self, websocket) -> None:
        self.ws = websocket
        self.pending_json: dict[int, str] = {}
        self.blocks: dict[int, dict] = {}

    async def on_delta(self, event) -> None:
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            self.blocks[event.index] = {"id": event.content_block.id, "name": event.content_block.name}
            self.pending_json[event.index] = ""
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            self.pending_json[event.index] += event.delta.partial_json
        elif event.type == "content_block_stop" and event.index in self.blocks:
            block = self.blocks[event.index]
            await dispatch(block["name"], json.loads(self.pending_json[event.index] or "{}"))
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            await self.ws.send_text(event.delta.text)

    async def on_complete(self, message) -> None:
        for block in message.content:
            if block.type == "tool_use":
                await dispatch(block.name, block.input)
        await self.ws.send_json({"done": True, "stop_reason": message.stop_reason})


async def stream_turn(websocket, messages: list) -> None:
    consumer = StreamConsumer(websocket)
    async with client.messages.stream(
        model="claude-3-5-sonnet-latest", max_tokens=1024, tools=TOOL_SPECS, messages=messages
    ) as stream:
        async for event in stream:
            await consumer.on_delta(event)
        await consumer.on_complete(await stream.get_final_message())
