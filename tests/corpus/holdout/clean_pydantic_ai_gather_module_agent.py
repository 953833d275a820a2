"""Sanic endpoint: module-level pydantic-ai agent fanned out over several documents."""
import asyncio

from pydantic import BaseModel
from pydantic_ai import Agent
from sanic import Sanic, json

app = Sanic("extractor")


class Invoice(BaseModel):
    vendor: str
    total: float
    currency: str


extractor = Agent("openai:gpt-4o-mini", output_type=Invoice, system_prompt="Extract the invoice fields.")


@app.post("/extract")
async def extract(request):
    docs: list[str] = request.json["documents"]
    results = await asyncio.gather(*(extractor.run(d) for d in docs))
    return json({"invoices": [r.output.model_dump() for r in results]})


@app.post("/extract-one")
async def extract_one(request):
    result = await extractor.run(request.json["document"])
    return json(result.output.model_dump())
