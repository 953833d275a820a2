"""Sanic API on Google ADK: runner shared, sessions keyed by the caller's ids."""
from sanic import Sanic, json
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from recipes.tools import pantry_lookup, shopping_list

APP = "sous-chef"
app = Sanic("souschef")

chef = LlmAgent(
    name="sous_chef",
    model="gemini-2.0-flash",
    instruction="Suggest meals from what is in the pantry; add missing items to the list.",
    tools=[pantry_lookup, shopping_list],
)
session_service = InMemorySessionService()
runner = Runner(agent=chef, app_name=APP, session_service=session_service)


@app.post("/users/<user_id>/sessions/<session_id>/message")
async def message(request, user_id: str, session_id: str):
    if await session_service.get_session(app_name=APP, user_id=user_id, session_id=session_id) is None:
        await session_service.create_session(app_name=APP, user_id=user_id, session_id=session_id)
    content = types.Content(role="user", parts=[types.Part(text=request.json["text"])])
    reply = ""
    async for event in runner.run_async(user_id=user_id, session_id=session_id, new_message=content):
        if event.is_final_response() and event.content:
            reply = "".join(p.text or "" for p in event.content.parts)
    return json({"reply": reply})
