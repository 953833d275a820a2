import asyncio

from agents import Agent, Runner, handoff
from litestar import Litestar, Request, post
from pydantic import BaseModel

from .tools import check_eligibility, get_plan, change_plan

billing = Agent(name="Billing", instructions="Handle plan changes.", tools=[get_plan, change_plan])
eligibility = Agent(name="Eligibility", instructions="Check promo eligibility.", tools=[check_eligibility])
triage = Agent(
    name="Triage",
    instructions="Route the customer to billing or eligibility.",
    handoffs=[billing, handoff(eligibility)],
)


class Message(BaseModel):
    customer_id: str
    text: str
    previous_response_id: str | None = None


@post("/telecom/chat")
async def chat(data: Message, request: Request) -> dict:
    result = await Runner.run(
        triage,
        f"[customer {data.customer_id}] {data.text}",
        previous_response_id=data.previous_response_id,
    )
    return {"answer": result.final_output, "response_id": result.last_response_id}


@post("/telecom/eligibility/bulk")
async def bulk(data: list[str]) -> dict:
    runs = await asyncio.gather(*(Runner.run(eligibility, f"Customer {cid}") for cid in data))
    return {cid: r.final_output for cid, r in zip(data, runs)}


app = Litestar(route_handlers=[chat, bulk])
