"""Sanic chat API: one Strands agent per conversation, one turn at a time."""
from sanic import Sanic, json
from sanic.request import Request
from strands import Agent

from dupguard.runtime import InvocationGuard, SessionRegistry
from concierge.tools import find_restaurant, book_table

app = Sanic("concierge")


def new_agent(session_id: str) -> Agent:
    return Agent(
        tools=[find_restaurant, book_table],
        system_prompt="You are a hotel concierge. Book only when the guest confirms.",
        callback_handler=None,
    )


agents = SessionRegistry(new_agent, max_sessions=5_000, idle_ttl=1800)
guards = SessionRegistry(lambda _sid: InvocationGuard(mode="throw"), max_sessions=5_000, idle_ttl=1800)


@app.post("/chat/<session_id>")
async def chat(request: Request, session_id: str):
    agent = agents.get(session_id)
    async with guards.get(session_id).ahold():
        result = await agent.invoke_async(request.json["message"])
    return json({"reply": str(result)})


@app.delete("/chat/<session_id>")
async def end(request: Request, session_id: str):
    agents.evict(session_id)
    guards.evict(session_id)
    return json({"ok": True})
