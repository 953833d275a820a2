import asyncio

from fastapi import APIRouter, FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.anthropic import Anthropic

from .finance import get_fx_rate, get_invoice, list_invoices

router = APIRouter(prefix="/finance")
llm = Anthropic(model="claude-3-5-sonnet-latest")
tools = [FunctionTool.from_defaults(fn=f) for f in (get_fx_rate, get_invoice, list_invoices)]
finance_agent = ReActAgent.from_tools(tools, llm=llm, max_iterations=10)


async def _ask(prompt: str) -> str:
    resp = await finance_agent.achat(prompt)
    return resp.response


@router.post("/compare")
async def compare(invoice_a: str, invoice_b: str):
    a, b = await asyncio.gather(
        _ask(f"Summarize invoice {invoice_a} in EUR"),
        _ask(f"Summarize invoice {invoice_b} in EUR"),
    )
    return {"a": a, "b": b}


@router.get("/invoices/{invoice_id}")
async def explain(invoice_id: str):
    return {"answer": await _ask(f"Explain invoice {invoice_id}")}


app = FastAPI()
app.include_router(router)
