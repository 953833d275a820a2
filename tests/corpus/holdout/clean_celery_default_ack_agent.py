"""Celery worker: per-task LlamaIndex workflow agent, default early ack, no autoretry."""
import asyncio

from celery import Celery
from llama_index.core.agent.workflow import ReActAgent
from llama_index.llms.openai import OpenAI

from newsroom.tools import fetch_wire, draft_headline
from newsroom.store import save_headline

app = Celery("newsroom", broker="amqp://rabbit")
llm = OpenAI(model="gpt-4o-mini")


def make_agent() -> ReActAgent:
    return ReActAgent(tools=[fetch_wire, draft_headline], llm=llm)


async def _headline(story_id: str) -> str:
    agent = make_agent()
    handler = agent.run(user_msg=f"Write a headline for wire story {story_id}.")
    return str(await handler)


@app.task(ignore_result=True, max_retries=0)
def headline_for(story_id: str) -> None:
    text = asyncio.run(_headline(story_id))
    save_headline(story_id, text)


@app.task
def headlines_for_batch(story_ids: list[str]) -> None:
    for sid in story_ids:
        headline_for.delay(sid)
