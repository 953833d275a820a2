"""Quart app for the single lobby kiosk: one shared AgentChat assistant, serialised.

There is exactly one kiosk and one visitor at a time; the agent is reset after each visit.
"""
import asyncio

from quart import Quart, jsonify, request
from autogen_agentchat.agents import AssistantAgent
from autogen_core import CancellationToken
from autogen_ext.models.openai import OpenAIChatCompletionClient

from lobby.tools import find_host, print_badge

app = Quart(__name__)
kiosk_lock = asyncio.Lock()

kiosk_agent = AssistantAgent(
    name="kiosk",
    model_client=OpenAIChatCompletionClient(model="gpt-4o-mini"),
    tools=[find_host, print_badge],
    system_message="Greet visitors, find their host and print a badge.",
)


@app.post("/kiosk/say")
async def say():
    text = (await request.get_json())["text"]
    async with kiosk_lock:
        result = await kiosk_agent.run(task=text)
    return jsonify({"reply": result.messages[-1].content})


@app.post("/kiosk/done")
async def done():
    async with kiosk_lock:
        await kiosk_agent.on_reset(CancellationToken())
    return jsonify({"ok": True})
