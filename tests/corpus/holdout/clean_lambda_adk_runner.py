"""AWS Lambda behind API Gateway: Google ADK agent with a per-user session."""
import asyncio
import json

from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.genai import types

from travel.tools import search_hotels, hold_room

APP_NAME = "trip-planner"

planner = LlmAgent(
    name="planner",
    model="gemini-2.0-flash",
    instruction="Plan trips. Hold a room only after the traveller confirms.",
    tools=[search_hotels, hold_room],
)
sessions = DatabaseSessionService(db_url="postgresql+asyncpg://planner@db/sessions")
runner = Runner(agent=planner, app_name=APP_NAME, session_service=sessions)


async def _turn(user_id: str, session_id: str, text: str) -> str:
    session = await sessions.get_session(app_name=APP_NAME, user_id=user_id, session_id=session_id)
    if session is None:
        await sessions.create_session(app_name=APP_NAME, user_id=user_id, session_id=session_id)
    content = types.Content(role="user", parts=[types.Part(text=text)])
    final = ""
    async for event in runner.run_async(user_id=user_id, session_id=session_id, new_message=content):
        if event.is_final_response() and event.content and event.content.parts:
            final = event.content.parts[0].text
    return final


def handler(event, context):
    claims = event["requestContext"]["authorizer"]["claims"]
    body = json.loads(event["body"])
    reply = asyncio.run(_turn(claims["sub"], body["session_id"], body["message"]))
    return {"statusCode": 200, "body": json.dumps({"reply": reply})}
