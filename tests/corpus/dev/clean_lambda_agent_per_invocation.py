"""Lambda: classify and route inbound emails. Heavy clients are reused across invocations."""
import json
import logging
import os

import boto3
from strands import Agent
from strands.models import BedrockModel

from mailroom.tools import create_ticket, forward_to_team

MODEL = BedrockModel(model_id=os.environ["MODEL_ID"], temperature=0)
TOOLS = [create_ticket, forward_to_team]
s3 = boto3.client("s3")
logger = logging.getLogger()
logger.setLevel(logging.INFO)

SYSTEM_PROMPT = "Read the email, decide which team owns it, and either forward it or open a ticket."


def lambda_handler(event, context):
    results = []
    for record in event["Records"]:
        bucket = record["s3"]["bucket"]["name"]
        key = record["s3"]["object"]["key"]
        email = s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8", "replace")
        router = Agent(model=MODEL, tools=TOOLS, system_prompt=SYSTEM_PROMPT, callback_handler=None)
        try:
            outcome = router(f"Email {key}:\n\n{email[:20000]}")
        except Exception:
            logger.exception("routing failed for %s (request %s)", key, context.aws_request_id)
            results.append({"key": key, "outcome": "error"})
            continue
        results.append({"key": key, "outcome": str(outcome)})
    return {"statusCode": 200, "body": json.dumps(results)}
