from agents import Agent, Runner, function_tool
from fastapi import FastAPI
from pydantic import BaseModel

from shop.db import get_order, get_invoice, get_shipment


def order_status(order_id: str) -> dict:
    """Return the status of an order."""
    return get_order(order_id).status_dict()


def invoice_status(order_id: str) -> dict:
    """Return the invoice attached to an order."""
    return get_invoice(order_id).as_dict()


def shipment_status(order_id: str) -> dict:
    """Return tracking information for an order."""
    return get_shipment(order_id).as_dict()


support_agent = Agent(
    name="Shop support",
    instructions="Help customers with their orders. Never guess order ids.",
    model="gpt-4.1-mini",
    tools=[
        function_tool(order_status, name_override="lookup"),
        function_tool(invoice_status, name_override="lookup"),
        function_tool(shipment_status, name_override="track_shipment"),
    ],
)

app = FastAPI()


class Question(BaseModel):
    text: str


@app.post("/support")
async def support(q: Question):
    result = await Runner.run(support_agent, q.text)
    return {"answer": result.final_output}
