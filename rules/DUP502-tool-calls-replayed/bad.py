import json
import logging
import time

import anthropic
from autogen import AssistantAgent, UserProxyAgent
from langchain_openai import ChatOpenAI
from openai import OpenAI

from .calendar_api import CalendarError
from .tools import TOOL_MAP, TOOLS, lookup_order, refund_order, run_tool

log = logging.getLogger(__name__)
client = OpenAI()
claude = anthropic.Anthropic()


def process_tool_calls(message: dict) -> list[dict]:
    results = []
    for call in message.get("tool_calls", []):
        fn = TOOL_MAP[call["function"]["name"]]
        results.append({"tool_call_id": call["id"], "content": str(fn(**json.loads(call["function"]["arguments"])))})
    return results


# AutoGen: replaying the same response after a failure
def run_pipeline(prompt: str, llm_config: dict) -> list[dict]:
    assistant = AssistantAgent("planner", llm_config=llm_config)
    proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config=False)
    result = proxy.initiate_chat(assistant, message=prompt, max_turns=1)
    last_message = result.chat_history[-1]
    tool_messages = process_tool_calls(last_message)
    if any("error" in m["content"] for m in tool_messages):
        assistant.clear_history()
        tool_messages = process_tool_calls(last_message)  # error: DUP502
    return tool_messages


def execute_tool_calls(tool_calls) -> list[dict]:
    out = []
    for call in tool_calls:
        fn = TOOL_MAP[call.function.name]
        out.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(fn(**json.loads(call.function.arguments)))})
    return out


# raw OpenAI: the except branch re-executes the batch, including the calls that succeeded
def schedule(messages: list[dict], tools: list[dict]) -> str:
    msg = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools).choices[0].message
    messages.append(msg.model_dump(exclude_none=True))
    try:
        results = execute_tool_calls(msg.tool_calls)
    except CalendarError as exc:
        log.warning("calendar hiccup, retrying tool calls: %s", exc)
        results = execute_tool_calls(msg.tool_calls)  # error: DUP502
    messages.extend(results)
    return "booked"


# Anthropic: the rate-limit path runs every tool_use block again
def reconcile(messages: list[dict]) -> list:
    response = claude.messages.create(model="claude-3-5-sonnet-latest", max_tokens=1024, tools=TOOLS, messages=messages)
    tool_uses = [b for b in response.content if b.type == "tool_use"]
    try:
        results = [run_tool(b.name, b.input) for b in tool_uses]
    except anthropic.RateLimitError:
        time.sleep(5)
        results = [run_tool(b.name, b.input) for b in tool_uses]  # error: DUP502
    return results


# LangChain: a "verification pass" that invokes every tool again
def answer(question: str) -> list:
    tools_by_name = {"lookup_order": lookup_order, "refund_order": refund_order}
    llm = ChatOpenAI(model="gpt-4o").bind_tools(list(tools_by_name.values()))
    ai_msg = llm.invoke(question)
    outputs = []
    for call in ai_msg.tool_calls:
        outputs.append(tools_by_name[call["name"]].invoke(call["args"]))
    if not all(outputs):
        outputs = []
        for call in ai_msg.tool_calls:  # error: DUP502
            outputs.append(tools_by_name[call["name"]].invoke(call["args"]))
    return outputs


# raw OpenAI dispatch: the finally block "makes sure" the calls ran
def settle(messages: list[dict], tools: list[dict]) -> None:
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    try:
        for tool_call in reply.tool_calls:
            function_to_call = TOOL_MAP[tool_call.function.name]
            function_to_call(**json.loads(tool_call.function.arguments))
    finally:
        for tool_call in reply.tool_calls:  # error: DUP502
            function_to_call = TOOL_MAP[tool_call.function.name]
            function_to_call(**json.loads(tool_call.function.arguments))
