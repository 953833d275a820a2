"""RAG chat over a product catalog: a search agent whose only tool reads, stopping on it.

Written after Azure-Samples/rag-postgres-openai-python, src/backend/fastapi_app/rag_advanced.py
at 8895875d9033c33c4efabf132ad5d8fb989f034d: the search agent is built per request with
``tool_use_behavior="stop_on_first_tool"`` and one tool that searches the database; a second
parallel search the model asks for only costs a query (DUP204 near-miss).
"""
from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, ToolCallOutputItem, function_tool
from fastapi import FastAPI

from .search import ProductSearcher, searcher_from_env

app = FastAPI()


class CatalogChat:
    def __init__(self, searcher: ProductSearcher, model: OpenAIChatCompletionsModel, temperature: float):
        self.searcher = searcher
        self.search_agent = Agent(
            name="Searcher",
            instructions="Turn the question into a catalog search.",
            tools=[function_tool(self.search_products)],
            tool_use_behavior="stop_on_first_tool",
            model=model,
        )
        self.answer_agent = Agent(
            name="Answerer",
            instructions="Answer from the search results only.",
            model=model,
            model_settings=ModelSettings(temperature=temperature),
        )

    async def search_products(self, query: str, max_price: float | None = None) -> list[dict]:
        """Search the catalog for products matching the query."""
        return await self.searcher.search(query, max_price=max_price)

    async def answer(self, question: str) -> str:
        found = await Runner.run(self.search_agent, input=question)
        last = found.new_items[-1]
        results = last.output if isinstance(last, ToolCallOutputItem) else []
        reply = await Runner.run(self.answer_agent, input=f"{question}\n\nResults: {results}")
        return str(reply.final_output)


@app.post("/chat")
async def chat(payload: dict) -> dict:
    session = CatalogChat(searcher_from_env(), model=payload.get("model", "gpt-4o-mini"), temperature=0.3)
    return {"answer": await session.answer(payload["message"])}
