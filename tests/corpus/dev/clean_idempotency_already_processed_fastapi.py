from fastapi import FastAPI, Header
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .cache import already_processed, get_cached_result, store_result
from .payments import create_payout, get_balance

llm = OpenAI(model="gpt-4o")
TOOLS = [FunctionTool.from_defaults(fn=create_payout), FunctionTool.from_defaults(fn=get_balance)]

app = FastAPI()


class PayoutRequest(BaseModel):
    vendor_id: str
    instruction: str


@app.post("/payouts/agent")
async def payout_agent(payload: PayoutRequest, idempotency_key: str = Header(...)):
    if already_processed(idempotency_key):
        return get_cached_result(idempotency_key)
    agent = ReActAgent.from_tools(TOOLS, llm=llm, max_iterations=6)
    result = await agent.achat(f"Vendor {payload.vendor_id}: {payload.instruction}")
    body = {"answer": str(result)}
    store_result(idempotency_key, body)
    return body


@app.get("/payouts/{vendor_id}/balance")
async def balance(vendor_id: str):
    return {"balance": get_balance(vendor_id)}
