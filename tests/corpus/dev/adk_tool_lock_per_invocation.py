"""ADK tools behind a FastAPI chat endpoint, with a single-execution wrapper for slow tools.

Written after the wrapper a user described in google/adk-python#3940 ("Tool Call has been
called multiple times by ADK"): one lock per invocation id did not stop the parallel agent's
second call of the same tool, "since invocation id are dynamic"; the workaround in the thread
keyed the lock by session and tool name instead.
"""
import asyncio

from fastapi import FastAPI
from google.adk.agents import LlmAgent, ParallelAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import ToolContext
from google.genai import types

from .reports import build_quarterly_report, fetch_kpis

app = FastAPI()
_invocation_locks: dict[str, asyncio.Lock] = {}
_session_locks: dict[str, asyncio.Lock] = {}
_results: dict[str, dict] = {}


async def generate_report(quarter: str, tool_context: ToolContext) -> dict:
    """Build the quarterly report (slow: several minutes)."""
    lock = _invocation_locks.setdefault(tool_context.invocation_id, asyncio.Lock())
    async with lock:
        return await build_quarterly_report(quarter)


async def refresh_kpis(quarter: str, tool_context: ToolContext) -> dict:
    """Refresh the KPI cache once per session, whichever agent asks first."""
    key = f"{tool_context.session.id}:refresh_kpis:{quarter}"
    async with _session_locks.setdefault(key, asyncio.Lock()):
        if key not in _results:
            _results[key] = await fetch_kpis(quarter)
        return _results[key]


writer = LlmAgent(name="writer", model="gemini-2.0-flash", tools=[generate_report, refresh_kpis])
checker = LlmAgent(name="checker", model="gemini-2.0-flash", tools=[generate_report, refresh_kpis])
team = ParallelAgent(name="team", sub_agents=[writer, checker])
sessions = InMemorySessionService()
runner = Runner(agent=team, app_name="reports", session_service=sessions)


@app.post("/report/{user_id}/{session_id}")
async def report(user_id: str, session_id: str, payload: dict) -> dict:
    message = types.Content(role="user", parts=[types.Part(text=payload["message"])])
    replies = []
    async for event in runner.run_async(user_id=user_id, session_id=session_id, new_message=message):
        if event.is_final_response():
            replies.append(event.content.parts[0].text)
    return {"replies": replies}
