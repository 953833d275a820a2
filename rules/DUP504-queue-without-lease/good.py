import json
import os
import queue
import threading

import boto3
import dramatiq
from celery import Celery, shared_task
from llama_index.core.agent import ReActAgent
from openai import OpenAI
from smolagents import InferenceClientModel, ToolCallingAgent

from dupguard.runtime import LeaseLost, RedisBackend, turn_lease

from .db import already_processed, mark_processed
from .jobs import JobQueue
from .tools import lookup_order, support_tools

celery_app = Celery("helpdesk", broker=os.environ["BROKER_URL"])
sqs = boto3.client("sqs")
leases = RedisBackend(os.environ["REDIS_URL"])
jobs = JobQueue(os.environ["JOBS_URL"])
client = OpenAI()
QUEUE_URL = os.environ["QUEUE_URL"]


def build_agent() -> ReActAgent:
    return ReActAgent.from_tools(tools=support_tools)


# the fix: a lease per chat turn, renewed while the agent runs
def handle(message: dict) -> None:
    turn = json.loads(message["Body"])
    try:
        with turn_lease(leases, f"turn:{turn['id']}", ttl=120, heartbeat=True):
            build_agent().chat(turn["text"])
    except LeaseLost:
        return
    sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])


def poll_sqs() -> None:
    while True:
        resp = sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=1, WaitTimeSeconds=20)
        for message in resp.get("Messages", []):
            handle(message)


# the broker's own lease
def consume_with_lease() -> None:
    while True:
        job = jobs.reserve_with_lease()
        try:
            build_agent().chat(job.prompt)
        finally:
            jobs.ack(job.id)


# an in-process queue: nothing is ever delivered twice
work: queue.Queue = queue.Queue()


def thread_worker() -> None:
    while True:
        job = work.get()
        build_agent().chat(job)
        work.task_done()


threading.Thread(target=thread_worker, daemon=True).start()


# acks_late with an idempotency check: the redelivery is skipped
@shared_task(acks_late=True)
def weekly_report(region: str, event_id: str) -> str | None:
    if already_processed(event_id):
        return None
    agent = ToolCallingAgent(tools=[lookup_order], model=InferenceClientModel(), max_steps=8)
    result = agent.run(f"Build the weekly sales report for {region}.")
    mark_processed(event_id)
    return result


# Celery's default (early ack, no autoretry) delivers the task at most once
@celery_app.task(name="newsletter.draft", soft_time_limit=300)
def draft_issue(feed: str) -> str:
    return str(build_agent().chat(f"Summarize {feed}"))


# Dramatiq with retries switched off
@dramatiq.actor(max_retries=0)
def continue_conversation(prompt: str) -> None:
    build_agent().chat(prompt)


# a redelivering task that only calls the model: no tool runs twice
@celery_app.task(acks_late=True)
def summarize(text: str) -> str:
    return client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}]).choices[0].message.content
