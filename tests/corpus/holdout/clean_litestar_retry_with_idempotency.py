"""Litestar checkout assistant: client retries are safe because every run is keyed."""
from litestar import Litestar, Request, post
from litestar.exceptions import ClientException
from agents import Agent, Runner

from dupguard.runtime import Idempotency, SQLiteBackend
from shop.tools import add_to_cart, place_order

checkout_agent = Agent(
    name="Checkout",
    instructions="Help the customer check out. Place the order only once they confirm.",
    tools=[add_to_cart, place_order],
)
idem = Idempotency(SQLiteBackend("/var/lib/shop/idem.sqlite3"), ttl=86_400, on_in_progress="wait")


@post("/checkout/message")
async def message(request: Request, data: dict) -> dict:
    key = request.headers.get("Idempotency-Key")
    if not key:
        raise ClientException("Idempotency-Key header required")

    async def run_turn():
        result = await Runner.run(checkout_agent, data["text"])
        return result.final_output

    reply = await idem.arun(f"checkout:{key}", run_turn, payload=data["text"])
    return {"reply": reply}


app = Litestar([message])
