"""Single-tenant home assistant: one agent, concurrent requests are rejected, not interleaved."""
from aiohttp import web
from strands import Agent

from dupguard.runtime import ConcurrentInvocationError, InvocationGuard

from .tools import lights, thermostat, music

home_agent = Agent(
    system_prompt="You control the house. Confirm before unlocking doors.",
    tools=[lights, thermostat, music],
    callback_handler=None,
)
guard = InvocationGuard(mode="throw")
routes = web.RouteTableDef()


@routes.post("/home")
async def home(request: web.Request) -> web.Response:
    data = await request.json()
    try:
        async with guard.ahold():
            result = await home_agent.invoke_async(data["text"])
    except ConcurrentInvocationError:
        return web.json_response({"error": "busy, try again"}, status=409)
    return web.json_response({"reply": str(result)})


@routes.get("/home/history")
async def history(request: web.Request) -> web.Response:
    return web.json_response({"turns": len(home_agent.messages)})


def make_app() -> web.Application:
    app = web.Application()
    app.add_routes(routes)
    return app


if __name__ == "__main__":
    web.run_app(make_app(), port=8099)
