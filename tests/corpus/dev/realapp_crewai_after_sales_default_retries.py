# Case from a public repository, rewritten in our own words (no code copied):
# feng20000308-stack/crewai-customer-service, customer_service.py:709 at
# 0de1087fd43afa0494a37d49f8145dd2ac905538 (bench/real-apps/labels-e.toml). A FastAPI support desk
# routes each question to a CrewAI agent; the after-sales agent files refund requests
# and hands out coupons, each run minting a new record, and it keeps CrewAI's default task retries
# (max_retry_limit=2), so an error after the tool ran files the refund again.
import uuid

from crewai import Agent, Crew, Task
from crewai.tools import BaseTool
from fastapi import FastAPI

REFUND_REQUESTS: list[dict] = []
api = FastAPI()


class FileRefundRequest(BaseTool):
    name: str = "file_refund_request"
    description: str = "Open a refund request for an order; a person approves it later."

    def _run(self, order_no: str, reason: str) -> str:
        ticket = f"RF-{uuid.uuid4().hex[:8]}"
        REFUND_REQUESTS.append({"ticket": ticket, "order": order_no, "reason": reason})
        return f"refund request {ticket} opened for {order_no}"


class LookUpOrder(BaseTool):
    name: str = "look_up_order"
    description: str = "Show an order's status."

    def _run(self, order_no: str) -> str:
        return f"order {order_no}: delivered"


def after_sales_agent() -> Agent:
    return Agent(
        role="after-sales specialist",
        goal="settle returns and refunds politely",
        backstory="Knows the return policy by heart.",
        tools=[LookUpOrder(), FileRefundRequest()],
    )


@api.post("/support")
def support(question: str) -> dict:
    agent = after_sales_agent()
    task = Task(description=question, expected_output="a short answer", agent=agent)
    return {"answer": str(Crew(agents=[agent], tasks=[task]).kickoff())}
