from functools import lru_cache

import chainlit as cl
from agno.agent import Agent
from agno.tools.google import GmailTools
from agno.tools.googlecalendar import GoogleCalendarTools  # agno 1.x path
from agno.tools.mem0 import Mem0Tools
from agno.tools.zep import ZepTools
from celery import shared_task
from fastapi import FastAPI

app = FastAPI()

# the first caller's OAuth token and API client are cached on this one instance
mail_agent = Agent(name="mail", tools=[GmailTools()])  # error: DUP105
MEMORY_TOOLS = [Mem0Tools(user_id="default")]  # error: DUP105
memory_agent = Agent(name="memory", tools=MEMORY_TOOLS)
zep = ZepTools()  # error: DUP105


@app.post("/mail")
async def mail(payload: dict):
    return await mail_agent.arun(payload["message"], user_id=payload["user_id"])


@app.post("/remember/{user_id}")
async def remember(user_id: str, payload: dict):
    return await memory_agent.arun(payload["message"], user_id=user_id)


@cl.on_message
async def on_message(message: cl.Message):
    session_id = cl.user_session.get("id")
    agent = Agent(name="chat", tools=[zep])
    await cl.Message(content=(await agent.arun(message.content, session_id=session_id)).content).send()


@lru_cache
def calendar_tools():
    return GoogleCalendarTools()  # error: DUP105


@shared_task
def plan_week(account_id: str, request: str):
    agent = Agent(name="planner", tools=[calendar_tools()])
    return agent.run(request, user_id=account_id).content
