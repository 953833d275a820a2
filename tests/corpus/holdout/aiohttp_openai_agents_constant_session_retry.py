"""aiohttp webhook for the WhatsApp channel, on the OpenAI Agents SDK."""
import asyncio
import logging

from aiohttp import web
from agents import Agent, Runner, SQLiteSession
from agents.exceptions import ModelBehaviorError
from openai import APITimeoutError

from delivery.tools import track_order, reschedule_delivery

log = logging.getLogger(__name__)

courier = Agent(
    name="Courier",
    instructions="Help customers track and reschedule deliveries.",
    tools=[track_order, reschedule_delivery],
    model="gpt-4o-mini",
)


async def whatsapp_webhook(request: web.Request) -> web.Response:
    payload = await request.json()
    text = payload["entry"][0]["changes"][0]["value"]["messages"][0]["text"]["body"]
    session = SQLiteSession("whatsapp", "conversations.db")
    for attempt in range(3):
        try:
            result = await Runner.run(courier, text, session=session)
            break
        except (APITimeoutError, ModelBehaviorError):
            log.warning("attempt %d failed, retrying", attempt + 1)
            await asyncio.sleep(2 ** attempt)
    else:
        return web.json_response({"status": "failed"}, status=502)
    return web.json_response({"reply": result.final_output})


app = web.Application()
app.router.add_post("/webhooks/whatsapp", whatsapp_webhook)
