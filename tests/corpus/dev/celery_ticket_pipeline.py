"""Ticket pipeline: ingest -> classify -> draft reply -> (human approves) -> send.

Runs on the `tickets` Celery queue; see deploy/worker.yaml for concurrency settings.
"""
import logging
import os

from celery import Celery, chain
from strands import Agent
from strands.models.openai import OpenAIModel

from .db import (
    already_processed,
    load_ticket,
    mark_processed,
    save_classification,
    save_draft,
)
from .tools import issue_credit, lookup_order, search_help_center

log = logging.getLogger(__name__)

app = Celery("tickets", broker=os.environ["CELERY_BROKER_URL"], backend=os.environ["CELERY_RESULT_BACKEND"])
app.conf.task_routes = {"tickets.*": {"queue": "tickets"}}
app.conf.worker_prefetch_multiplier = 1

model = OpenAIModel(model_id="gpt-4o-mini", params={"temperature": 0})

CLASSIFIER_PROMPT = "Classify the ticket as one of: refund, shipping, account, other. One word."
DRAFTER_PROMPT = """You draft replies to customer tickets. Look up the order first.
If a refund under 20 EUR is clearly owed, issue a credit. Otherwise draft a reply only."""

drafter = Agent(
    model=model,
    system_prompt=DRAFTER_PROMPT,
    tools=[lookup_order, search_help_center, issue_credit],
    callback_handler=None,
)


def classifier() -> Agent:
    return Agent(model=model, system_prompt=CLASSIFIER_PROMPT, tools=[], callback_handler=None)


@app.task(name="tickets.ingest")
def ingest(ticket_id: str) -> str:
    ticket = load_ticket(ticket_id)
    log.info("ingested %s (%d chars)", ticket_id, len(ticket["body"]))
    return ticket_id


@app.task(name="tickets.classify", acks_late=True)
def classify(ticket_id: str) -> str:
    key = f"classify:{ticket_id}"
    if already_processed(key):
        return ticket_id
    ticket = load_ticket(ticket_id)
    label = str(classifier()(ticket["body"])).strip().lower()
    save_classification(ticket_id, label)
    mark_processed(key)
    return ticket_id


@app.task(name="tickets.draft", acks_late=True, reject_on_worker_lost=True)
def draft(ticket_id: str) -> str:
    ticket = load_ticket(ticket_id)
    reply = drafter(
        f"Ticket {ticket_id} from {ticket['customer_email']}:\n\n{ticket['body']}"
    )
    save_draft(ticket_id, str(reply))
    return ticket_id


def process(ticket_id: str):
    return chain(ingest.s(ticket_id), classify.s(), draft.s()).apply_async()


if __name__ == "__main__":
    import sys

    for tid in sys.argv[1:]:
        print(process(tid).id)
