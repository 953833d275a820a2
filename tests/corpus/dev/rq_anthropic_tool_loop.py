import time

import anthropic
from redis import Redis
from rq.decorators import job

from billing.tools import TOOLS, run_tool

redis_conn = Redis.from_url("redis://redis:6379/0")
client = anthropic.Anthropic()
MODEL = "claude-3-5-sonnet-latest"


@job("billing", connection=redis_conn, timeout=600)
def reconcile_account(account_id: str, instructions: str) -> str:
    messages = [{"role": "user", "content": f"Account {account_id}: {instructions}"}]
    response = client.messages.create(model=MODEL, max_tokens=2048, tools=TOOLS, messages=messages)
    while response.stop_reason == "tool_use":
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        try:
            results = [run_tool(b.name, b.input) for b in tool_uses]
        except anthropic.RateLimitError:
            time.sleep(5)
            results = [run_tool(b.name, b.input) for b in tool_uses]
        messages.append({"role": "assistant", "content": response.content})
        messages.append({
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": b.id, "content": str(r)}
                for b, r in zip(tool_uses, results)
            ],
        })
        response = client.messages.create(model=MODEL, max_tokens=2048, tools=TOOLS, messages=messages)
    return "".join(b.text for b in response.content if b.type == "text")
