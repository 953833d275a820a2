"""Class-based service wrapping an OpenAI Agents SDK shipping assistant."""
from agents import Agent, Runner, function_tool

from logistics import carriers, warehouse


def carrier_track(tracking_number: str) -> str:
    """Track a parcel with the carrier."""
    return carriers.track(tracking_number)


def warehouse_track(order_id: str) -> str:
    """Where an order is inside the warehouse."""
    return warehouse.locate(order_id)


def reroute(tracking_number: str, address: str) -> str:
    """Ask the carrier to deliver to another address."""
    return carriers.reroute(tracking_number, address)


class ShippingAssistant:
    """Stateless facade; the SDK Agent is configuration, runs go through Runner."""

    def __init__(self, model: str = "gpt-4o-mini") -> None:
        self.agent = Agent(
            name="Shipping",
            instructions="Help customers find and reroute their parcels.",
            model=model,
            tools=[
                function_tool(carrier_track, name_override="track"),
                function_tool(warehouse_track, name_override="track"),
                function_tool(reroute),
            ],
        )

    async def ask(self, question: str) -> str:
        result = await Runner.run(self.agent, question)
        return result.final_output


assistant = ShippingAssistant()
