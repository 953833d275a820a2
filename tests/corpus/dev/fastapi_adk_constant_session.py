from contextlib import asynccontextmanager

from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from pydantic import BaseModel

from .tools import get_forecast, get_weather

APP_NAME = "weather_app"

weather_agent = LlmAgent(
    name="weather_agent",
    model="gemini-2.0-flash",
    instruction="Answer weather questions using the tools.",
    tools=[get_weather, get_forecast],
)
session_service = InMemorySessionService()
runner = Runner(agent=weather_agent, app_name=APP_NAME, session_service=session_service)


@asynccontextmanager
async def lifespan(app: FastAPI):
    await session_service.create_session(app_name=APP_NAME, user_id="web", session_id="default")
    yield


app = FastAPI(lifespan=lifespan)


class Ask(BaseModel):
    text: str


@app.post("/ask")
async def ask(body: Ask):
    content = types.Content(role="user", parts=[types.Part(text=body.text)])
    final = ""
    async for event in runner.run_async(
        user_id="web",
        session_id="default",
        new_message=content,
    ):
        if event.is_final_response() and event.content and event.content.parts:
            final = event.content.parts[0].text
    return {"answer": final}
