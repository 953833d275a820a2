"""Quart API that researches several sub-questions at once with AgentChat."""
import asyncio as aio

from quart import Quart, jsonify, request
from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient

from research.tools import web_search, fetch_page

app = Quart(__name__)

model_client = OpenAIChatCompletionClient(model="gpt-4o")

researcher = AssistantAgent(
    name="researcher",
    model_client=model_client,
    tools=[web_search, fetch_page],
    system_message="Answer the question with sources. Be concise.",
    reflect_on_tool_use=True,
)


def split_question(question: str) -> list[str]:
    parts = [p.strip() for p in question.split(";")]
    return [p for p in parts if p]


@app.post("/research")
async def research():
    data = await request.get_json()
    sub_questions = split_question(data["question"])
    if not sub_questions:
        return jsonify({"error": "no question"}), 400
    results = await aio.gather(*[researcher.run(task=q) for q in sub_questions])
    answers = [r.messages[-1].content for r in results]
    return jsonify({"answers": dict(zip(sub_questions, answers))})


@app.get("/models")
async def models():
    return jsonify({"model": model_client.model_info})
