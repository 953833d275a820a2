from agents import Agent, Runner, SQLiteSession, function_tool
from fastapi import FastAPI, Header
from openai import AsyncOpenAI
from pydantic import BaseModel

from .catalog import find_products, get_product

openai_client = AsyncOpenAI()


@function_tool
async def search_products(query: str, limit: int = 5) -> list[dict]:
    """Search the product catalog."""
    return await find_products(query, limit=limit)


@function_tool
async def product_details(sku: str) -> dict:
    """Get one product by SKU."""
    return await get_product(sku)


shopping_agent = Agent(
    name="Shopping assistant",
    instructions="Help users find products. Only recommend products returned by the tools.",
    model="gpt-4.1-mini",
    tools=[search_products, product_details],
)

app = FastAPI()


class Ask(BaseModel):
    text: str


@app.post("/shop/ask")
async def ask(body: Ask, x_conversation_id: str = Header(...)):
    session = SQLiteSession(session_id=x_conversation_id, db_path="shop_sessions.db")
    result = await Runner.run(shopping_agent, body.text, session=session, max_turns=8)
    return {"answer": result.final_output}


@app.post("/shop/embed")
async def embed(body: Ask):
    emb = await openai_client.embeddings.create(model="text-embedding-3-small", input=body.text)
    return {"dims": len(emb.data[0].embedding)}
