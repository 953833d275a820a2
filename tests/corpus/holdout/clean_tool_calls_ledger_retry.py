"""Worker helper: executes a model turn's tool calls once each, even across a retry."""
import json
import logging

from dupguard.runtime import SQLiteBackend, ToolCallLedger
from billing.tools import HANDLERS, TransientBillingError

log = logging.getLogger(__name__)
backend = SQLiteBackend("/var/lib/billing/ledger.sqlite3")


def execute_once(ledger: ToolCallLedger, call) -> dict:
    decision = ledger.begin(call.id, call.function.name, call.function.arguments)
    if decision.replay:
        result = decision.result
    elif not decision.execute:
        raise RuntimeError(f"tool call {call.id} is running in another worker")
    else:
        result = HANDLERS[call.function.name](**json.loads(call.function.arguments))
        ledger.complete(call.id, result, fence=decision.fence)
    return {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}


def execute_turn(conversation_id: str, msg) -> list[dict]:
    ledger = ToolCallLedger(backend, scope=conversation_id)
    try:
        return [execute_once(ledger, c) for c in msg.tool_calls]
    except TransientBillingError:
        log.warning("transient billing error; finishing the calls that did not run")
        return [execute_once(ledger, c) for c in msg.tool_calls]
