import asyncio

from agents import Agent, Runner
from fastapi import FastAPI, Header
from pydantic import BaseModel

from dupguard.runtime import Idempotency, SQLiteBackend

from .tools import send_invoice, lookup_customer

billing_agent = Agent(
    name="Billing",
    instructions="Prepare and send invoices. Never send the same invoice twice.",
    tools=[lookup_customer, send_invoice],
)
idem = Idempotency(SQLiteBackend("/var/lib/billing/idem.sqlite"), ttl=86_400, on_in_progress="wait")

app = FastAPI()


class InvoiceRequest(BaseModel):
    customer_id: str
    text: str


@app.post("/invoices")
async def invoices(req: InvoiceRequest, idempotency_key: str = Header(...)):
    async def run_once():
        result = await Runner.run(billing_agent, f"Customer {req.customer_id}: {req.text}")
        return result.final_output

    for attempt in range(3):
        try:
            answer = await idem.arun(idempotency_key, run_once, payload=req.model_dump())
            return {"answer": answer}
        except ConnectionError:
            await asyncio.sleep(2 ** attempt)
    return {"error": "billing agent unavailable"}
