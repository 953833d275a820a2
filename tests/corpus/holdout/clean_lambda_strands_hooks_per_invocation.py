"""AWS Lambda: Strands agent built per invocation, with its audit hook registered on it."""
import json
import logging

from strands import Agent
from strands.hooks import AfterToolCallEvent

from hr.tools import lookup_policy, file_request

log = logging.getLogger()
log.setLevel(logging.INFO)


def audit(event: AfterToolCallEvent) -> None:
    log.info("tool %s -> %s", event.tool_use["name"], event.result.get("status"))


def build_agent(employee_id: str) -> Agent:
    agent = Agent(
        tools=[lookup_policy, file_request],
        system_prompt=f"You help employee {employee_id} with HR requests.",
        callback_handler=None,
    )
    agent.hooks.add_callback(AfterToolCallEvent, audit)
    return agent


def handler(event, context):
    body = json.loads(event["body"])
    agent = build_agent(body["employee_id"])
    result = agent(body["message"])
    return {"statusCode": 200, "body": json.dumps({"reply": str(result)})}
