"""AWS Lambda: AG2 agents built for every invocation, tools registered on the fresh pair."""
import json
import os

from autogen import AssistantAgent, UserProxyAgent, register_function

from expenses.api import submit_expense, policy_limit

LLM_CONFIG = {"config_list": [{"model": "gpt-4o-mini", "api_key": os.environ.get("OPENAI_API_KEY")}]}


def build_pair() -> tuple[AssistantAgent, UserProxyAgent]:
    clerk = AssistantAgent(
        name="clerk",
        system_message="File the expense if it is within policy. Reply TERMINATE when done.",
        llm_config=LLM_CONFIG,
    )
    proxy = UserProxyAgent(
        name="proxy",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
        max_consecutive_auto_reply=5,
    )
    return clerk, proxy


def lambda_handler(event, context):
    body = json.loads(event["body"])
    clerk, proxy = build_pair()
    register_function(submit_expense, caller=clerk, executor=proxy, description="Submit an expense")
    register_function(policy_limit, caller=clerk, executor=proxy, description="Policy limit for a category")
    chat = proxy.initiate_chat(clerk, message=body["text"], summary_method="last_msg")
    return {"statusCode": 200, "body": json.dumps({"summary": chat.summary})}
