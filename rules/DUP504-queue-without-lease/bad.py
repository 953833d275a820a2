import json
import os

import boto3
import dramatiq
from agents import Agent, Runner
from autogen import AssistantAgent, UserProxyAgent
from celery import Celery, shared_task
from langchain.agents import AgentExecutor
from llama_index.core.agent import ReActAgent
from pydantic_ai import Agent as PydanticAgent
from redis import Redis
from smolagents import InferenceClientModel, ToolCallingAgent
from strands import Agent as StrandsAgent

from .jobs import JobQueue
from .tools import issue_credit, lookup_order, support_tools

celery_app = Celery("helpdesk", broker=os.environ["BROKER_URL"])
sqs = boto3.client("sqs")
redis = Redis.from_url(os.environ["REDIS_URL"])
queue = JobQueue(os.environ["JOBS_URL"])
QUEUE_URL = os.environ["QUEUE_URL"]
researcher = PydanticAgent("openai:gpt-4o", system_prompt="Research companies and file a CRM note.")
billing = Agent(name="Billing", instructions="Send invoices.", tools=support_tools)


def handle_request(prompt: str) -> None:
    assistant = AssistantAgent("assistant", llm_config={"model": "gpt-4o-mini"})
    user_proxy = UserProxyAgent("user_proxy", human_input_mode="NEVER", code_execution_config=False)
    user_proxy.initiate_chat(assistant, message=prompt)


# no lock / lease on job processing
def consume_forever() -> None:
    while True:
        job = queue.get()  # error: DUP504
        handle_request(job.prompt)
        queue.ack(job.id)


# SQS: the message reappears when its visibility timeout runs out mid-run
def poll_sqs() -> None:
    while True:
        resp = sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=5, WaitTimeSeconds=20)  # error: DUP504
        for m in resp.get("Messages", []):
            job = json.loads(m["Body"])
            researcher.run_sync(job["prompt"])
            sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=m["ReceiptHandle"])


# Redis streams: an unacknowledged entry is claimed by another consumer
def stream_worker(consumer: str) -> None:
    while True:
        entries = redis.xreadgroup("agents", consumer, {"turns": ">"}, count=1, block=5000)  # error: DUP504
        for _stream, messages in entries:
            for entry_id, fields in messages:
                agent = ReActAgent.from_tools(tools=support_tools)
                agent.chat(fields[b"text"].decode())
                redis.xack("turns", "agents", entry_id)


# Celery acks_late: a worker killed mid-task hands the task to another worker
@shared_task(acks_late=True, reject_on_worker_lost=True)  # error: DUP504
def weekly_report(region: str) -> str:
    agent = ToolCallingAgent(tools=[lookup_order], model=InferenceClientModel(), max_steps=8)
    return agent.run(f"Build the weekly sales report for {region}.")


# Celery autoretry: any exception after issue_credit ran runs the whole task again
@celery_app.task(autoretry_for=(Exception,), retry_backoff=True, max_retries=5)  # error: DUP504
def draft(ticket_id: str) -> str:
    drafter = StrandsAgent(system_prompt="Draft replies; issue credits under 20 EUR.", tools=[issue_credit])
    return str(drafter(f"Ticket {ticket_id}"))


# Celery explicit self.retry() around a LangChain agent
@celery_app.task(bind=True, max_retries=3)  # error: DUP504
def score_lead(self, executor: AgentExecutor, lead_id: str) -> str:
    try:
        return executor.invoke({"input": f"Score lead {lead_id} and save it."})["output"]
    except TimeoutError as exc:
        raise self.retry(exc=exc, countdown=10)


# Dramatiq retries failed messages (20 times by default)
@dramatiq.actor(queue_name="invoices")  # error: DUP504
def send_invoice(customer_id: str) -> None:
    Runner.run_sync(billing, f"Send the monthly invoice to {customer_id}.")


# RQ: a failed job is re-enqueued, and the agent lives in another module
from rq import Retry  # noqa: E402
from rq.decorators import job  # noqa: E402

from .agents import run_support_agent  # noqa: E402


@job("support", connection=redis, retry=Retry(max=3, interval=[10, 30, 60]))  # error: DUP504
def answer_ticket(ticket_id: str) -> str:
    return run_support_agent(f"Answer ticket {ticket_id}")
