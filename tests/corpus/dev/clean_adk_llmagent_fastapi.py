from fastapi import FastAPI, Request
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.genai import types
from pydantic import BaseModel

from .tools import check_order, start_return

APP_NAME = "returns_desk"

returns_agent = LlmAgent(
    name="returns_agent",
    model="gemini-2.0-flash",
    description="Handles product returns.",
    instruction="Check the order before starting a return. Ask for the reason.",
    tools=[check_order, start_return],
)
session_service = DatabaseSessionService(db_url="sqlite:///./adk_sessions.db")
runner = Runner(agent=returns_agent, app_name=APP_NAME, session_service=session_service)

app = FastAPI()


class Turn(BaseModel):
    user_id: str
    session_id: str | None = None
    text: str


@app.post("/returns/turn")
async def turn(body: Turn, request: Request):
    session_id = body.session_id
    if session_id is None:
        created = await session_service.create_session(app_name=APP_NAME, user_id=body.user_id)
        session_id = created.id
    content = types.Content(role="user", parts=[types.Part(text=body.text)])
    reply = ""
    async for event in runner.run_async(user_id=body.user_id, session_id=session_id, new_message=content):
        if event.is_final_response() and event.content:
            reply = "".join(p.text or "" for p in event.content.parts)
    return {"session_id": session_id, "reply": reply}
