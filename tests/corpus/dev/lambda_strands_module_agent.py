"""AWS Lambda entry point for the travel assistant (API Gateway proxy integration)."""
import json
import logging
import os

from strands import Agent
from strands.models import BedrockModel
from strands_tools import current_time, http_request

from travel.tools import book_hotel, search_flights

logger = logging.getLogger()
logger.setLevel(os.environ.get("LOG_LEVEL", "INFO"))

SYSTEM_PROMPT = """You are a travel assistant. Search flights, book hotels, and always
confirm prices with the user before booking."""

model = BedrockModel(model_id=os.environ.get("MODEL_ID", "us.anthropic.claude-3-7-sonnet-20250219-v1:0"))

travel_agent = Agent(
    model=model,
    system_prompt=SYSTEM_PROMPT,
    tools=[
        search_flights,
        book_hotel,
        http_request,
        current_time,
        http_request,
    ],
)


def handler(event, context):
    body = json.loads(event.get("body") or "{}")
    prompt = body.get("prompt")
    if not prompt:
        return {"statusCode": 400, "body": json.dumps({"error": "prompt is required"})}
    logger.info("request %s", context.aws_request_id)
    result = travel_agent(prompt)
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"answer": str(result)}),
    }
