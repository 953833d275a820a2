"""Celery worker that answers tickets with an AutoGen assistant/executor pair."""
import os

from autogen import AssistantAgent, UserProxyAgent
from celery import Celery

from helpdesk.tools import fetch_ticket, post_reply, refund_order

celery_app = Celery("helpdesk", broker=os.environ["BROKER_URL"])

llm_config = {
    "config_list": [{"model": "gpt-4o-mini", "api_key": os.environ["OPENAI_API_KEY"]}],
    "temperature": 0,
}

assistant = AssistantAgent(
    name="helpdesk_assistant",
    system_message="You resolve customer tickets. Use tools. Reply TERMINATE when done.",
    llm_config=llm_config,
)
executor = UserProxyAgent(
    name="executor",
    human_input_mode="NEVER",
    code_execution_config=False,
    is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
)

for fn in (fetch_ticket, post_reply, refund_order):
    assistant.register_for_llm(description=fn.__doc__)(fn)
    executor.register_for_execution()(fn)


@celery_app.task(bind=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=5)
def resolve_ticket(self, ticket_id: int) -> str:
    ticket = fetch_ticket(ticket_id)
    result = executor.initiate_chat(
        assistant,
        message=f"Ticket #{ticket_id}: {ticket['subject']}\n\n{ticket['body']}",
        max_turns=8,
    )
    return result.summary
