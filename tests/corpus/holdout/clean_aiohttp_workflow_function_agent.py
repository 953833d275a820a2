"""aiohttp service on LlamaIndex workflow agents (state lives in the run's Context)."""
import asyncio

from aiohttp import web
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.workflow import Context
from llama_index.llms.openai import OpenAI

from weather.api import forecast, alerts

llm = OpenAI(model="gpt-4o-mini")

weather_agent = FunctionAgent(
    tools=[forecast, alerts],
    llm=llm,
    system_prompt="You are a weather assistant. Use the tools; never guess.",
)

contexts: dict[str, Context] = {}


async def ask(request: web.Request) -> web.Response:
    body = await request.json()
    session_id = request.headers["X-Session-Id"]
    ctx = contexts.setdefault(session_id, Context(weather_agent))
    answer = await weather_agent.run(user_msg=body["question"], ctx=ctx)
    return web.json_response({"answer": str(answer)})


async def compare(request: web.Request) -> web.Response:
    cities = (await request.json())["cities"]
    runs = [weather_agent.run(user_msg=f"Weather tomorrow in {c}?") for c in cities]
    answers = await asyncio.gather(*runs)
    return web.json_response({c: str(a) for c, a in zip(cities, answers)})


app = web.Application()
app.router.add_post("/ask", ask)
app.router.add_post("/compare", compare)
