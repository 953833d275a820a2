import asyncio

from fastapi import APIRouter
from smolagents import OpenAIServerModel, ToolCallingAgent

from .tools import get_route, get_traffic, geocode

router = APIRouter()
MODEL = OpenAIServerModel(model_id="gpt-4o-mini")


class RoutingService:
    agent = ToolCallingAgent(tools=[geocode, get_route, get_traffic], model=MODEL, max_steps=5)

    def plan(self, origin: str, destination: str) -> str:
        prompt = f"Best route from {origin} to {destination}"
        return str(self.agent.run(prompt))

    async def plan_many(self, trips: list[tuple[str, str]]) -> list[str]:
        loop = asyncio.get_running_loop()
        local = ToolCallingAgent(tools=[geocode, get_route], model=MODEL, max_steps=5)
        futures = []
        for origin, destination in trips:
            futures.append(loop.run_in_executor(None, local.run, f"{origin} -> {destination}"))
        return [str(await f) for f in futures]


service = RoutingService()


@router.get("/route")
def route(origin: str, destination: str):
    return {"plan": service.plan(origin, destination)}


@router.post("/routes")
async def routes(trips: list[tuple[str, str]]):
    return {"plans": await service.plan_many(trips)}
