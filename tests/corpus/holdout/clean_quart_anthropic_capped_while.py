"""Quart endpoint with a raw Anthropic tool loop capped by a round counter."""
import json

from anthropic import AsyncAnthropic
from quart import Quart, jsonify, request

from library.tools import SCHEMAS, run_tool

app = Quart(__name__)
client = AsyncAnthropic()
MAX_ROUNDS = 8


@app.post("/librarian")
async def librarian():
    question = (await request.get_json())["question"]
    messages = [{"role": "user", "content": question}]
    rounds = 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        resp = await client.messages.create(
            model="claude-3-5-sonnet-latest", max_tokens=1500, tools=SCHEMAS, messages=messages
        )
        messages.append({"role": "assistant", "content": resp.content})
        if resp.stop_reason != "tool_use":
            text = "".join(b.text for b in resp.content if b.type == "text")
            return jsonify({"answer": text, "rounds": rounds})
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": json.dumps(await run_tool(b.name, b.input))}
            for b in resp.content
            if b.type == "tool_use"
        ]
        messages.append({"role": "user", "content": results})
    return jsonify({"answer": "I could not finish in time.", "rounds": rounds}), 504
