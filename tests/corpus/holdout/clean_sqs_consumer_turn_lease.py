"""SQS consumer: runs one LangChain agent turn per message, under a turn lease."""
import json
import os

import boto3
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_aws import ChatBedrockConverse
from langchain_core.prompts import ChatPromptTemplate

from dupguard.runtime import SQLiteBackend, turn_lease, LeaseLost
from claims.tools import get_claim, approve_claim

QUEUE_URL = os.environ["CLAIMS_QUEUE_URL"]
sqs = boto3.client("sqs")
leases = SQLiteBackend("/var/run/claims/leases.sqlite3")

prompt = ChatPromptTemplate.from_messages(
    [("system", "Approve claims that meet the policy."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
)
llm = ChatBedrockConverse(model="anthropic.claude-3-5-sonnet-20240620-v1:0")
tools = [get_claim, approve_claim]
executor = AgentExecutor(agent=create_tool_calling_agent(llm, tools, prompt), tools=tools)


def poll_once() -> int:
    resp = sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=5, WaitTimeSeconds=20)
    handled = 0
    for message in resp.get("Messages", []):
        job = json.loads(message["Body"])
        try:
            with turn_lease(leases, f"claim-turn:{job['claim_id']}:{job['turn']}", ttl=120, heartbeat=40):
                executor.invoke({"input": f"Review claim {job['claim_id']}"})
        except LeaseLost:
            continue
        sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])
        handled += 1
    return handled


if __name__ == "__main__":
    while True:
        poll_once()
