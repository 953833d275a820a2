from agno.agent import Agent
from agno.tools.duckduckgo import DuckDuckGoTools
from agno.tools.google import GmailTools
from agno.tools.mem0 import Mem0Tools
from agno.tools.yfinance import YFinanceTools
from fastapi import FastAPI

from .auth import credentials_for

app = FastAPI()

# read-only toolkits with no account: safe to share
research_agent = Agent(name="research", tools=[DuckDuckGoTools(), YFinanceTools()])
# the run's user_id is used when no user_id= is given to the toolkit
memory_agent = Agent(name="memory", tools=[Mem0Tools()])
# a single-user assistant: its handlers serve one mailbox owner and know no user
owner_agent = Agent(name="owner", tools=[GmailTools()])


@app.post("/research")
async def research(payload: dict):
    return await research_agent.arun(payload["question"], user_id=payload["user_id"])


@app.post("/memory")
async def memory(payload: dict):
    return await memory_agent.arun(payload["message"], user_id=payload["user_id"])


@app.post("/inbox")
async def inbox(payload: dict):
    return await owner_agent.arun(payload["message"])


@app.post("/mail/{user_id}")
async def mail(user_id: str, payload: dict):
    # built per request with this user's own credentials
    agent = Agent(name="mail", tools=[GmailTools(creds=credentials_for(user_id))])
    return await agent.arun(payload["message"], user_id=user_id)


if __name__ == "__main__":
    Agent(name="cli", tools=[GmailTools()]).print_response("summarise my inbox", user_id="me")
