"""Single-tenant home assistant (one household, one agent), serialised by InvocationGuard."""
from aiohttp import web
from strands import Agent

from dupguard.runtime import ConcurrentInvocationError, InvocationGuard
from home.devices import set_thermostat, lights, lock_door

home_agent = Agent(
    tools=[set_thermostat, lights, lock_door],
    system_prompt="You control one household's devices. Confirm before unlocking anything.",
    callback_handler=None,
)
guard = InvocationGuard(mode="throw")


async def command(request: web.Request) -> web.Response:
    text = (await request.json())["text"]
    try:
        async with guard.ahold():
            result = await home_agent.invoke_async(text)
    except ConcurrentInvocationError:
        return web.json_response({"error": "busy"}, status=409)
    return web.json_response({"reply": str(result)})


async def forget(request: web.Request) -> web.Response:
    async with guard.ahold():
        home_agent.messages.clear()
    return web.json_response({"ok": True})


app = web.Application()
app.router.add_post("/home/command", command)
app.router.add_post("/home/forget", forget)
