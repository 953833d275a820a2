# trap: Google ADK LlmAgent holds configuration; state lives in the session service
from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

app = FastAPI()
root_agent = LlmAgent(name="helper", model="gemini-2.0-flash", instruction="Help the user.")
sessions = InMemorySessionService()
runner = Runner(agent=root_agent, app_name="helper", session_service=sessions)


@app.post("/chat/{user_id}/{session_id}")
async def chat(user_id: str, session_id: str, payload: dict):
    events = runner.run_async(user_id=user_id, session_id=session_id, new_message=payload["message"])
    return [e async for e in events]
