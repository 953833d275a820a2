from dataclasses import dataclass

import httpx
from fastapi import Depends, FastAPI
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext


@dataclass
class Deps:
    http: httpx.AsyncClient
    user_id: str


class Forecast(BaseModel):
    summary: str
    temperature_c: float


weather_agent = Agent(
    "openai:gpt-4o",
    deps_type=Deps,
    output_type=Forecast,
    system_prompt="Give short, accurate weather forecasts.",
)


@weather_agent.tool
async def get_forecast(ctx: RunContext[Deps], city: str) -> dict:
    r = await ctx.deps.http.get("https://api.weather.example/forecast", params={"q": city})
    r.raise_for_status()
    return r.json()


app = FastAPI()
http_client = httpx.AsyncClient(timeout=15)


def get_deps(user_id: str) -> Deps:
    return Deps(http=http_client, user_id=user_id)


@app.get("/forecast/{city}")
async def forecast(city: str, deps: Deps = Depends(get_deps)) -> Forecast:
    result = await weather_agent.run(f"Forecast for {city}", deps=deps)
    return result.output
