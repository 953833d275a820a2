import json

import backoff
import httpx
from flask import Flask, jsonify, request
from openai import OpenAI

from .schemas import PAYMENT_TOOLS

app = Flask(__name__)
client = OpenAI()
payments = httpx.Client(base_url="https://payments.internal", timeout=10)


@backoff.on_exception(backoff.expo, httpx.HTTPError, max_tries=4)
def execute_tool_call(call) -> dict:
    args = json.loads(call.function.arguments)
    if call.function.name == "issue_refund":
        r = payments.post("/refunds", json={"charge_id": args["charge_id"], "amount": args["amount"]})
    elif call.function.name == "get_charge":
        r = payments.get(f"/charges/{args['charge_id']}")
    else:
        return {"error": f"unknown tool {call.function.name}"}
    r.raise_for_status()
    return r.json()


@app.post("/billing/assist")
def assist():
    messages = request.json["messages"]
    for _ in range(5):
        resp = client.chat.completions.create(model="gpt-4o", messages=messages, tools=PAYMENT_TOOLS)
        msg = resp.choices[0].message
        if not msg.tool_calls:
            return jsonify(reply=msg.content)
        messages.append(msg.model_dump(exclude_none=True))
        for call in msg.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(execute_tool_call(call))})
    return jsonify(reply="Sorry, I could not finish that."), 504
