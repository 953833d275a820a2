"""Custom AG2 orchestration used by the scheduling worker.

The assistant proposes function calls; this module executes them itself so it can
write an audit trail, then feeds the results back.
"""
import json
import logging

from autogen import ConversableAgent

from scheduling.calendar import book_slot, cancel_slot, CalendarUnavailable

log = logging.getLogger(__name__)
FUNCTIONS = {"book_slot": book_slot, "cancel_slot": cancel_slot}


def process_tool_calls(message: dict) -> list[dict]:
    results = []
    for call in message.get("tool_calls", []):
        fn = FUNCTIONS[call["function"]["name"]]
        output = fn(**json.loads(call["function"]["arguments"]))
        results.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(output)})
    return results


def run_scheduling_turn(planner: ConversableAgent, history: list[dict], request_text: str) -> str:
    history.append({"role": "user", "content": request_text})
    reply = planner.generate_reply(messages=history)
    if not isinstance(reply, dict) or "tool_calls" not in reply:
        history.append({"role": "assistant", "content": str(reply)})
        return str(reply)
    assistant_msg = {"role": "assistant", "content": reply.get("content"), "tool_calls": reply["tool_calls"]}
    history.append(assistant_msg)
    try:
        tool_messages = process_tool_calls(assistant_msg)
    except CalendarUnavailable:
        log.warning("calendar flaked; retrying the whole batch")
        history.append(assistant_msg)
        tool_messages = process_tool_calls(assistant_msg)
    history.extend(tool_messages)
    final = planner.generate_reply(messages=history)
    history.append({"role": "assistant", "content": str(final)})
    return str(final)
