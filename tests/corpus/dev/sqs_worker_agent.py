"""ECS worker: pulls research jobs from SQS and runs the research agent on each."""
import json
import logging
import os
import signal

import boto3
from pydantic_ai import Agent

from .tools import register_tools

log = logging.getLogger("worker")
QUEUE_URL = os.environ["JOBS_QUEUE_URL"]
sqs = boto3.client("sqs")

research_agent = Agent("openai:gpt-4o", system_prompt="You research companies and file a CRM note.")
register_tools(research_agent)

running = True


def _stop(*_):
    global running
    running = False


signal.signal(signal.SIGTERM, _stop)


def main() -> None:
    while running:
        resp = sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=5, WaitTimeSeconds=20)
        for m in resp.get("Messages", []):
            job = json.loads(m["Body"])
            log.info("job %s", job["id"])
            result = research_agent.run_sync(job["prompt"])
            log.info("job %s done: %s", job["id"], result.output[:80])
            sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=m["ReceiptHandle"])


if __name__ == "__main__":
    main()
