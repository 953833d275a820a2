import json

from fastapi import FastAPI, HTTPException
from openai import OpenAI

from dupguard.runtime import Idempotency, ToolCallLedger, idempotent

from .payments import payments
from .store import backend

app = FastAPI()
client = OpenAI()
idem = Idempotency()
PENDING_APPROVALS: dict[str, dict] = {}


# the id correlates a result with its call: that is what it is for
def tool_messages(message) -> list[dict]:
    return [
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(payments.execute(call.function.name))}
        for call in message.tool_calls
    ]


# a seen-set that lives for one turn: drops the same response processed twice, claims nothing more
def run_tools_once(message) -> dict[str, str]:
    done: dict[str, str] = {}
    for call in message.tool_calls:
        if call.id in done:
            continue
        done[call.id] = json.dumps(payments.execute(call.function.name, json.loads(call.function.arguments)))
    return done


# the ledger given a stored message (a redelivered job carries the same ids)
def replay_job(conversation_id: str, stored_message: dict) -> None:
    ledger = ToolCallLedger(backend, scope=conversation_id)
    for call in stored_message["tool_calls"]:
        decision = ledger.begin(call["id"], call["function"]["name"], call["function"]["arguments"])
        if decision.execute:
            result = payments.execute(call["function"]["name"], json.loads(call["function"]["arguments"]))
            ledger.complete(call["id"], result, fence=decision.fence)


# keyed by the user's action: the request id, the tool and its arguments
@app.post("/refunds/{request_id}")
async def refund(request_id: str, order_id: str, amount: int) -> dict:
    key = f"{request_id}:refund:{order_id}:{amount}"
    return await idem.arun(key, lambda: payments.refund(order_id, amount))


@idempotent(key=lambda request_id, order_id: f"{request_id}:cancel:{order_id}")
def cancel_order(request_id: str, order_id: str) -> dict:
    return payments.cancel(order_id)


# a pending approval looked up by the call's id: correlation, not a dedupe
@app.post("/approve/{call_id}")
def approve(call_id: str) -> dict:
    if call_id not in PENDING_APPROVALS:
        raise HTTPException(404)
    call = PENDING_APPROVALS.pop(call_id)
    return payments.execute(call["name"], call["args"])


# an Idempotency-Key from the client's request, passed through
def forward_charge(body: dict, request_key: str) -> dict:
    return payments.post("/charges", json=body, headers={"Idempotency-Key": request_key}).json()
