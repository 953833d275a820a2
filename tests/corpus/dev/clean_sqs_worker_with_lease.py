"""SQS worker that holds a per-turn lease so a redelivered message never runs the agent twice."""
import json
import logging
import os

import boto3

from dupguard.runtime import LeaseLost, RedisBackend, turn_lease

from .agent import build_agent

log = logging.getLogger("worker")
QUEUE_URL = os.environ["TURNS_QUEUE_URL"]
sqs = boto3.client("sqs")
leases = RedisBackend(os.environ["REDIS_URL"])


def handle(message: dict) -> None:
    turn = json.loads(message["Body"])
    key = f"turn:{turn['conversation_id']}:{turn['turn_id']}"
    try:
        with turn_lease(leases, key, ttl=120, heartbeat=True) as lease:
            agent = build_agent(turn["conversation_id"])
            answer = agent.run(turn["text"])
            lease.check()
            log.info("turn %s answered: %s", key, str(answer)[:60])
    except LeaseLost:
        log.warning("lost lease for %s, another worker owns it", key)
        return
    sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])


def main() -> None:
    while True:
        resp = sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=1, WaitTimeSeconds=20)
        for message in resp.get("Messages", []):
            handle(message)


if __name__ == "__main__":
    main()
