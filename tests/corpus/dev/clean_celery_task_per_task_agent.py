"""Celery tasks for the newsletter pipeline; each task builds its own agent."""
import os

from celery import Celery
from celery.utils.log import get_task_logger
from smolagents import LiteLLMModel, ToolCallingAgent

from .tools import fetch_feed, publish_draft, summarize_article

app = Celery("newsletter", broker=os.environ.get("BROKER_URL", "redis://localhost:6379/0"))
logger = get_task_logger(__name__)

MODEL = LiteLLMModel(model_id="anthropic/claude-3-5-haiku-latest")
EDITOR_TOOLS = [fetch_feed, summarize_article]


def editor() -> ToolCallingAgent:
    return ToolCallingAgent(tools=EDITOR_TOOLS, model=MODEL, max_steps=8)


@app.task(name="newsletter.draft", soft_time_limit=300)
def draft_issue(feed_urls: list[str]) -> str:
    agent = editor()
    text = agent.run(f"Summarize the five best articles from: {', '.join(feed_urls)}")
    logger.info("draft ready (%d chars)", len(str(text)))
    return str(text)


@app.task(name="newsletter.publish", max_retries=0)
def publish(draft: str, issue_no: int) -> str:
    agent = ToolCallingAgent(tools=[publish_draft], model=MODEL, max_steps=2)
    return str(agent.run(f"Publish issue #{issue_no} with this content:\n{draft}"))
