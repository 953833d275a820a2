# seed 001, Fix: store an idempotency key per tool call and skip already-processed IDs
from autogen import AssistantAgent
def process(last_message, process_tool_call):
    seen_call_ids = set()
    for call in last_message.get("tool_calls", []):
        if call["id"] in seen_call_ids:
            continue
        seen_call_ids.add(call["id"])
        process_tool_call(call)
