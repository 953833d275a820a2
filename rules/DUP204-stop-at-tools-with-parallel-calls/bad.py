from agents import Agent, ModelSettings, Runner, StopAtTools, function_tool
from celery import Celery
from fastapi import FastAPI

from .backends import calendar, mailer, payments

app = FastAPI()
celery_app = Celery("agents")


@function_tool
def refund_order(order_id: str, amount: int) -> str:
    """Refund an order."""
    return payments.refund(order_id, amount)


@function_tool
def lookup_order(order_id: str) -> dict:
    """Read an order."""
    return payments.get(order_id)


@function_tool
def send_email(to: str, body: str) -> str:
    """Email the customer."""
    return mailer.send(to, body)


@function_tool
def book_slot(slot: str) -> str:
    """Book a calendar slot."""
    return calendar.book(slot)


# FastAPI: the first tool result is the answer; a second refund in the same response runs anyway
refunds = Agent(
    name="Refunds",
    instructions="Refund what the customer asks for.",
    tools=[lookup_order, refund_order],
    tool_use_behavior="stop_on_first_tool",  # error: DUP204
)


@app.post("/refund")
async def refund(payload: dict) -> dict:
    result = await Runner.run(refunds, payload["message"])
    return {"answer": result.final_output}


# Celery: stop at the booking tool, while the model may also email in the same response
STOP_AT_BOOKING = StopAtTools(stop_at_tool_names=["book_slot"])
scheduler = Agent(
    name="Scheduler",
    tools=[book_slot, send_email],
    tool_use_behavior=STOP_AT_BOOKING,  # error: DUP204
    model_settings=ModelSettings(temperature=0.2),
)


@celery_app.task
def schedule(request: str) -> str:
    return Runner.run_sync(scheduler, request).final_output


# the dict form, and parallel calls asked for explicitly
mailer_agent = Agent(
    name="Mailer",
    tools=[send_email],
    tool_use_behavior={"stop_at_tool_names": ["send_email"]},  # error: DUP204
    model_settings=ModelSettings(parallel_tool_calls=True),
)


# a clone of an agent with parallel calls on (AWS Lambda handler)
strict_refunds = refunds.clone(tool_use_behavior=StopAtTools(stop_at_tool_names=["refund_order"]))  # error: DUP204


def handler(event, context):
    return Runner.run_sync(strict_refunds, event["message"]).final_output
