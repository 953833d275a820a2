import logging
import os

from celery import Celery
from langchain import hub
from langchain.agents import AgentExecutor, create_react_agent
from langchain_openai import ChatOpenAI

from .db import already_processed, mark_processed
from .tools import get_lead, update_lead_score

log = logging.getLogger(__name__)
app = Celery("scoring", broker=os.environ["CELERY_BROKER_URL"])

llm = ChatOpenAI(model="gpt-4o-mini")
tools = [get_lead, update_lead_score]
react_prompt = hub.pull("hwchase17/react")
scorer = AgentExecutor(
    agent=create_react_agent(llm, tools, react_prompt),
    tools=tools,
    max_iterations=4,
)


@app.task(acks_late=True)
def score_lead(lead_id: str, event_id: str) -> str | None:
    if already_processed(event_id):
        log.info("event %s already scored, skipping redelivery", event_id)
        return None
    result = scorer.invoke({"input": f"Score lead {lead_id} from 0-100 and save it."})
    mark_processed(event_id, result["output"])
    return result["output"]
