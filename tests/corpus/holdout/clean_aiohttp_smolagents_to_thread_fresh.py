"""aiohttp endpoint running a smolagents ToolCallingAgent in a worker thread, fresh per call."""
import asyncio

from aiohttp import web
from smolagents import OpenAIServerModel, ToolCallingAgent

from realestate.tools import ListingSearchTool, MortgageCalculatorTool

model = OpenAIServerModel(model_id="gpt-4o-mini")


def run_agent(question: str) -> str:
    agent = ToolCallingAgent(
        tools=[ListingSearchTool(), MortgageCalculatorTool()],
        model=model,
        max_steps=6,
    )
    return str(agent.run(question))


async def ask(request: web.Request) -> web.Response:
    question = (await request.json())["question"]
    answer = await asyncio.to_thread(run_agent, question)
    return web.json_response({"answer": answer})


async def compare(request: web.Request) -> web.Response:
    areas = (await request.json())["areas"]
    answers = await asyncio.gather(
        *(asyncio.to_thread(run_agent, f"Median 2-bed price in {a}?") for a in areas)
    )
    return web.json_response(dict(zip(areas, answers)))


app = web.Application()
app.add_routes([web.post("/ask", ask), web.post("/compare", compare)])
