import json
import logging

from autogen import AssistantAgent, UserProxyAgent
from openai import OpenAI

from dupguard.runtime import ToolCallLedger

from .calendar_api import CalendarError
from .tools import TOOL_MAP, run_tool

log = logging.getLogger(__name__)
client = OpenAI()
ledger = ToolCallLedger(scope="scheduler")


def process_tool_call(call: dict) -> str:
    fn = TOOL_MAP[call["function"]["name"]]
    return str(fn(**json.loads(call["function"]["arguments"])))


# the fix: skip call ids that already ran, even when the message is processed twice
def run_pipeline(prompt: str, llm_config: dict, seen_call_ids: set[str]) -> list[str]:
    assistant = AssistantAgent("planner", llm_config=llm_config)
    proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config=False)
    last_message = proxy.initiate_chat(assistant, message=prompt, max_turns=1).chat_history[-1]
    out = []
    for call in last_message.get("tool_calls", []):
        if call["id"] in seen_call_ids:
            continue
        seen_call_ids.add(call["id"])
        out.append(process_tool_call(call))
    for call in last_message.get("tool_calls", []):
        if call["id"] in seen_call_ids:
            continue
        seen_call_ids.add(call["id"])
        out.append(process_tool_call(call))
    return out


def execute_tool_calls(tool_calls) -> list[dict]:
    out = []
    for call in tool_calls:
        out.append({"role": "tool", "tool_call_id": call.id,
                    "content": json.dumps(run_tool(call.function.name, json.loads(call.function.arguments)))})
    return out


# on failure, report an error result to the model instead of re-running the calls
def schedule(messages: list[dict], tools: list[dict]) -> list[dict]:
    msg = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools).choices[0].message
    try:
        return execute_tool_calls(msg.tool_calls)
    except CalendarError as exc:
        return [{"role": "tool", "tool_call_id": c.id, "content": json.dumps({"error": str(exc)})} for c in msg.tool_calls]


# two arms of an if/else: only one of them runs
def route(messages: list[dict], tools: list[dict], dry_run: bool) -> list[dict]:
    msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    if dry_run:
        log.info("dry run")
        results = execute_tool_calls(msg.tool_calls)
    else:
        results = execute_tool_calls(msg.tool_calls)
    return results


# the payload is a new response the second time
def two_rounds(messages: list[dict], tools: list[dict]) -> None:
    msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    messages.extend(execute_tool_calls(msg.tool_calls))
    msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    messages.extend(execute_tool_calls(msg.tool_calls))


# ToolCallLedger: each tool-call id executes once, however often the batch is seen
def settle(messages: list[dict], tools: list[dict]) -> None:
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    try:
        for tool_call in reply.tool_calls:
            decision = ledger.begin(tool_call.id, tool_call.function.name, tool_call.function.arguments)
            if decision.execute:
                run_tool(tool_call.function.name, json.loads(tool_call.function.arguments))
    finally:
        for tool_call in reply.tool_calls:
            decision = ledger.begin(tool_call.id, tool_call.function.name, tool_call.function.arguments)
            if decision.execute:
                run_tool(tool_call.function.name, json.loads(tool_call.function.arguments))


# the first execution returns: the second one is another path
def fast_path(messages: list[dict], tools: list[dict], urgent: bool) -> list[dict]:
    msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    if urgent:
        results = execute_tool_calls(msg.tool_calls)
        return results
    log.info("queued")
    return execute_tool_calls(msg.tool_calls)


# read-only calls first, writes second: each call runs in exactly one of the passes
def partitioned(messages: list[dict], tools: list[dict], read_only: set[str]) -> list:
    msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools).choices[0].message
    out = []
    for call in msg.tool_calls:
        if call.function.name in read_only:
            out.append(run_tool(call.function.name, json.loads(call.function.arguments)))
    for call in msg.tool_calls:
        if call.function.name not in read_only:
            out.append(run_tool(call.function.name, json.loads(call.function.arguments)))
    return out
