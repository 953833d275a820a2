from agno.agent import Agent
from agno.db.postgres import PostgresDb
from agno.models.openai import OpenAIChat
from agno.tools.duckduckgo import DuckDuckGoTools
from fastapi import FastAPI
from pydantic import BaseModel

db = PostgresDb(db_url="postgresql+psycopg://ai:ai@localhost:5532/ai")


def get_research_agent(user_id: str, session_id: str) -> Agent:
    return Agent(
        name="Research Agent",
        model=OpenAIChat(id="gpt-4o"),
        tools=[DuckDuckGoTools()],
        db=db,
        user_id=user_id,
        session_id=session_id,
        add_history_to_context=True,
        num_history_runs=5,
        markdown=True,
    )


app = FastAPI()


class RunRequest(BaseModel):
    user_id: str
    session_id: str
    message: str


@app.post("/agents/research/runs")
async def run_research(req: RunRequest):
    agent = get_research_agent(req.user_id, req.session_id)
    response = await agent.arun(req.message)
    return {"content": response.content, "session_id": req.session_id}
