import asyncio as aio

from fastapi import FastAPI
from pydantic import BaseModel
from strands import Agent, tool
from strands.models.bedrock import BedrockModel

from research.sources import search_arxiv, search_news

app = FastAPI()
model = BedrockModel(model_id="anthropic.claude-3-5-sonnet-20241022-v2:0")

TOOLS = [search_arxiv, search_news]


class ResearchRequest(BaseModel):
    topic: str
    sub_questions: list[str]
    workspace: str


def workspace_tool(workspace: str):
    @tool
    def save_note(text: str) -> str:
        """Save a note to the user's workspace."""
        return f"saved to {workspace}: {text[:40]}"

    return save_note


@app.post("/research")
async def research(req: ResearchRequest):
    TOOLS.append(workspace_tool(req.workspace))
    researcher = Agent(model=model, tools=TOOLS, system_prompt=f"You research {req.topic}.")
    tasks = []
    async with aio.TaskGroup() as tg:
        for q in req.sub_questions:
            tasks.append(tg.create_task(researcher.invoke_async(q)))
    return {
        "topic": req.topic,
        "answers": [str(t.result()) for t in tasks],
    }
