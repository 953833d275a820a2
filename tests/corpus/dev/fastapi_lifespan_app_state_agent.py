from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI, Request
from llama_index.agent.openai import OpenAIAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .github import create_issue, search_issues


@asynccontextmanager
async def lifespan(app: FastAPI):
    app.state.http = httpx.AsyncClient(timeout=30)
    tools = [FunctionTool.from_defaults(async_fn=search_issues),
             FunctionTool.from_defaults(async_fn=create_issue)]
    app.state.agent = OpenAIAgent.from_tools(tools, llm=OpenAI(model="gpt-4o"), verbose=True)
    yield
    await app.state.http.aclose()


app = FastAPI(lifespan=lifespan)


class Triage(BaseModel):
    repo: str
    report: str


@app.post("/triage")
async def triage(body: Triage, request: Request):
    agent: OpenAIAgent = request.app.state.agent
    response = await agent.achat(
        f"Repository {body.repo}. Find duplicates of this report or open a new issue:\n{body.report}"
    )
    return {"answer": response.response, "tools": [s.tool_name for s in response.sources]}


@app.get("/status")
async def status(request: Request):
    r = await request.app.state.http.get("https://www.githubstatus.com/api/v2/status.json")
    return r.json()
