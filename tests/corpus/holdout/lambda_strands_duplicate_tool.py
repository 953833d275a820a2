"""AWS Lambda: IT helpdesk agent (Strands), built for each invocation."""
import json

from strands import Agent, tool
from strands_tools import http_request

from it.directory import reset_password as _reset, lock_account as _lock


@tool
def reset_password(username: str) -> str:
    """Send a password-reset link to the user."""
    return _reset(username)


@tool
def lock_account(username: str) -> str:
    """Lock an account that may be compromised."""
    return _lock(username)


def handler(event, context):
    body = json.loads(event["body"])
    agent = Agent(
        tools=[
            reset_password,
            lock_account,
            http_request,
            reset_password,
        ],
        system_prompt="You are the IT helpdesk. Confirm the username before acting.",
        callback_handler=None,
    )
    result = agent(body["message"])
    return {"statusCode": 200, "body": json.dumps({"reply": str(result)})}
