"""AWS Lambda: Slack slash-command bot that can restart services via tools."""
import json
import os

import anthropic

from ops import restart_service, service_status

client = anthropic.Anthropic()
MODEL = os.environ.get("MODEL", "claude-3-5-sonnet-latest")

TOOLS = [
    {
        "name": "service_status",
        "description": "Get the health of a service.",
        "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
    {
        "name": "restart_service",
        "description": "Restart a service. Use only when it is unhealthy.",
        "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
]
DISPATCH = {"service_status": service_status, "restart_service": restart_service}


def run_tool(name: str, args: dict) -> str:
    try:
        return json.dumps(DISPATCH[name](**args))
    except Exception as exc:  # the model gets the error text back
        return f"error: {exc}"


def lambda_handler(event, context):
    text = json.loads(event["body"])["text"]
    messages = [{"role": "user", "content": text}]
    while True:
        response = client.messages.create(
            model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            break
        results = []
        for block in response.content:
            if block.type == "tool_use":
                results.append(
                    {"type": "tool_result", "tool_use_id": block.id, "content": run_tool(block.name, block.input)}
                )
        messages.append({"role": "user", "content": results})
    reply = "".join(b.text for b in response.content if b.type == "text")
    return {"statusCode": 200, "body": json.dumps({"response_type": "in_channel", "text": reply})}
