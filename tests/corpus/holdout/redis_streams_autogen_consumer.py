"""Long-running consumer: answers inbound emails with an AgentChat assistant.

Jobs arrive on a Redis stream; several replicas run this script in the same group.
"""
import asyncio
import json
import os

import redis.asyncio as redis
from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient

from mailer import send_reply, lookup_customer

STREAM = "inbound-email"
GROUP = "responders"
CONSUMER = os.environ.get("HOSTNAME", "responder-1")

model_client = OpenAIChatCompletionClient(model="gpt-4o-mini")


def make_agent() -> AssistantAgent:
    return AssistantAgent(
        name="responder",
        model_client=model_client,
        tools=[lookup_customer, send_reply],
        system_message="Answer the customer's email and send the reply with send_reply.",
    )


async def handle(fields: dict) -> None:
    agent = make_agent()
    email = json.loads(fields[b"payload"])
    await agent.run(task=f"From {email['from']}:\n{email['body']}")


async def main() -> None:
    r = redis.from_url(os.environ["REDIS_URL"])
    try:
        await r.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    except redis.ResponseError:
        pass
    while True:
        batches = await r.xreadgroup(GROUP, CONSUMER, {STREAM: ">"}, count=1, block=5000)
        for _stream, entries in batches or []:
            for entry_id, fields in entries:
                await handle(fields)
                await r.xack(STREAM, GROUP, entry_id)


if __name__ == "__main__":
    asyncio.run(main())
