from fastapi import FastAPI, Header, HTTPException
from pydantic import BaseModel
from strands import Agent

from dupguard.runtime import ConcurrentInvocationError, InvocationGuard, SessionRegistry

from .tools import get_policy, file_claim


def new_claims_agent(session_id: str) -> Agent:
    return Agent(
        system_prompt="You help customers file insurance claims.",
        tools=[get_policy, file_claim],
        trace_attributes={"session.id": session_id},
    )


agents = SessionRegistry(new_claims_agent, max_sessions=5_000, idle_ttl=1800)
guards = SessionRegistry(lambda _sid: InvocationGuard(mode="throw"), max_sessions=5_000, idle_ttl=1800)

app = FastAPI()


class Message(BaseModel):
    text: str


@app.post("/claims/chat")
async def claims_chat(msg: Message, x_session_id: str = Header(...)):
    agent = agents.get(x_session_id)
    try:
        async with guards.get(x_session_id).ahold():
            result = await agent.invoke_async(msg.text)
    except ConcurrentInvocationError:
        raise HTTPException(status_code=409, detail="previous message still being processed")
    return {"reply": str(result)}
