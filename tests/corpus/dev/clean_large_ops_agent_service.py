"""aiohttp service behind the on-call Slack bot.

One ops agent per incident channel, tool calls deduplicated by id, bounded tool rounds.
"""
import asyncio
import json
import logging
from collections import OrderedDict

from aiohttp import web
from openai import AsyncOpenAI

from .slack import post_message, verify_signature
from .tools import TOOL_SCHEMAS, TOOLS

log = logging.getLogger("ops-bot")
MAX_ROUNDS = 8
MAX_CHANNELS = 500

client = AsyncOpenAI()


class ChannelState:
    """Conversation of one incident channel; turns are serialized by the lock."""

    def __init__(self, channel: str) -> None:
        self.channel = channel
        self.messages: list[dict] = [
            {"role": "system", "content": f"You are the on-call assistant for #{channel}."}
        ]
        self.executed: dict[str, str] = {}
        self.lock = asyncio.Lock()


channels: "OrderedDict[str, ChannelState]" = OrderedDict()


def channel_state(channel: str) -> ChannelState:
    state = channels.get(channel)
    if state is None:
        state = channels[channel] = ChannelState(channel)
        while len(channels) > MAX_CHANNELS:
            channels.popitem(last=False)
    channels.move_to_end(channel)
    return state


async def run_tool(state: ChannelState, call) -> str:
    if call.id in state.executed:
        return state.executed[call.id]
    fn = TOOLS[call.function.name]
    try:
        result = json.dumps(await fn(**json.loads(call.function.arguments or "{}")))
    except Exception as exc:
        result = json.dumps({"error": str(exc)})
    state.executed[call.id] = result
    return result


async def answer(state: ChannelState, text: str) -> str:
    async with state.lock:
        state.messages.append({"role": "user", "content": text})
        for _ in range(MAX_ROUNDS):
            resp = await client.chat.completions.create(
                model="gpt-4o", messages=state.messages, tools=TOOL_SCHEMAS
            )
            msg = resp.choices[0].message
            state.messages.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                return msg.content or ""
            outputs = await asyncio.gather(*(run_tool(state, c) for c in msg.tool_calls))
            for call, output in zip(msg.tool_calls, outputs):
                state.messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        return "I stopped after too many tool rounds; please narrow the question."


routes = web.RouteTableDef()


@routes.post("/slack/events")
async def slack_events(request: web.Request) -> web.Response:
    body = await request.read()
    if not verify_signature(request.headers, body):
        raise web.HTTPUnauthorized()
    event = json.loads(body)
    if event.get("type") == "url_verification":
        return web.json_response({"challenge": event["challenge"]})
    inner = event["event"]
    if inner.get("bot_id"):
        return web.Response(status=200)
    seen = request.app["seen_event_ids"]
    if event["event_id"] in seen:
        return web.Response(status=200)
    seen.add(event["event_id"])
    state = channel_state(inner["channel"])
    reply = await answer(state, inner["text"])
    await post_message(inner["channel"], reply, thread_ts=inner.get("ts"))
    return web.Response(status=200)


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"channels": len(channels)})


async def on_startup(app: web.Application) -> None:
    app["seen_event_ids"] = set()
    log.info("ops bot ready with %d tools", len(TOOLS))


async def on_cleanup(app: web.Application) -> None:
    await client.close()


def make_app() -> web.Application:
    app = web.Application()
    app.add_routes(routes)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


if __name__ == "__main__":
    web.run_app(make_app(), port=3000)
