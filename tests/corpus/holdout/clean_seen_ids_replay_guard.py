"""AutoGen-style custom executor: a failed batch is resumed, skipping calls that already ran."""
import json
import logging

from scheduling.calendar import book_slot, cancel_slot, CalendarUnavailable

log = logging.getLogger(__name__)
FUNCTIONS = {"book_slot": book_slot, "cancel_slot": cancel_slot}


def process_tool_calls(message: dict, seen_call_ids: set[str]) -> list[dict]:
    results = []
    for call in message.get("tool_calls", []):
        if call["id"] in seen_call_ids:
            continue
        output = FUNCTIONS[call["function"]["name"]](**json.loads(call["function"]["arguments"]))
        seen_call_ids.add(call["id"])
        results.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(output)})
    return results


def handle_assistant_message(history: list[dict], assistant_msg: dict) -> None:
    history.append(assistant_msg)
    seen_call_ids: set[str] = set()
    results: list[dict] = []
    try:
        results += process_tool_calls(assistant_msg, seen_call_ids)
    except CalendarUnavailable:
        log.warning("calendar flaked; resuming the calls that have not run")
        results += process_tool_calls(assistant_msg, seen_call_ids)
    history.extend(results)


def handle_or_skip(history: list[dict], assistant_msg: dict, dry_run: bool) -> None:
    if dry_run:
        log.info("dry run: %d calls", len(assistant_msg.get("tool_calls", [])))
        history.append({"role": "assistant", "content": "(dry run)"})
    else:
        handle_assistant_message(history, assistant_msg)
