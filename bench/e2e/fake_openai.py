"""A scripted, OpenAI-compatible Chat Completions server that behaves like a real model.

What a real model does that a test double usually does not, and this one does:

* **fresh tool-call ids on every response**, even for the same conversation: a retried turn
  gets new ids, so a guard keyed by the model's id lets the retry through;
* **latency** (seeded, uniform between ``--min-latency`` and ``--max-latency``) and **faults**:
  HTTP 500 with probability ``--error-rate``, and a stall longer than any sane client timeout
  with probability ``--stall-rate`` (the client times out and retries); ``--after-tool-error-rate``
  adds HTTP 500s on the calls that follow a tool result only: the failure that makes a retried
  run execute its tools again (the short CI run uses it to hit that path on every few requests);
* **parallel tool calls** in one response, **streaming** (``"stream": true``, SSE chunks with the
  tool-call arguments split across deltas) and non-streaming.

The script (deterministic given the conversation, except ids, latency and faults):

* the last user message says ``refund order <id>`` and no tool result for it follows → one
  ``refund_order`` tool call per order mentioned (several orders: parallel calls);
* the last message is a tool result → a final answer quoting the results;
* every final answer ends with ``known secrets: ...``: every ``secret=<word>`` seen anywhere in the
  conversation. The load generator plants one secret per user, so an answer that names another
  user's secret is a cross-user leak, and an answer to "what is my secret" that names the user's
  own secret proves the conversation was kept.

Run: ``python bench/e2e/fake_openai.py --port 8900 --seed 1``. Standard library + Starlette/uvicorn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import time
import uuid

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

ORDER = re.compile(r"refund order ([\w-]+(?:\s*(?:,|\band\b)\s*[\w-]+)*)", re.IGNORECASE)
SECRET = re.compile(r"secret=(\w+)")


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def plan(messages: list[dict], tool_names: set[str]) -> dict:
    """The assistant message the script answers with: ``{"content": ...}`` or ``{"tool_calls": [...]}``."""
    secrets: list[str] = []
    for message in messages:
        for secret in SECRET.findall(_text(message)):
            if secret not in secrets:
                secrets.append(secret)
    known = f"known secrets: {', '.join(secrets) if secrets else 'none'}"
    last = messages[-1] if messages else {"role": "user", "content": ""}
    if last.get("role") == "tool":
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            results.append(_text(message))
        return {"content": f"Done: {'; '.join(reversed(results))}. {known}"}
    match = ORDER.search(_text(last)) if last.get("role") == "user" else None
    if match and "refund_order" in tool_names:
        orders = re.split(r"\s*(?:,|\band\b)\s*", match.group(1))
        return {
            "tool_calls": [
                {
                    "id": f"call_{uuid.uuid4().hex[:24]}",  # fresh on every response, as real APIs do
                    "type": "function",
                    "function": {"name": "refund_order", "arguments": json.dumps({"order_id": order})},
                }
                for order in orders
                if order
            ]
        }
    return {"content": f"OK. {known}"}


class Faults:
    """Seeded latency and faults, shared by all requests of one server process."""

    def __init__(
        self,
        seed: int,
        min_latency: float,
        max_latency: float,
        error_rate: float,
        stall_rate: float,
        stall: float,
        after_tool_error_rate: float = 0.0,
    ) -> None:
        self.random = random.Random(seed)
        self.min_latency, self.max_latency = min_latency, max_latency
        self.error_rate, self.stall_rate, self.stall = error_rate, stall_rate, stall
        self.after_tool_error_rate = after_tool_error_rate
        self.counts = {"requests": 0, "errors": 0, "stalls": 0}

    def draw(self, after_tool: bool = False) -> tuple[float, str]:
        self.counts["requests"] += 1
        latency = self.random.uniform(self.min_latency, self.max_latency)
        if after_tool and self.random.random() < self.after_tool_error_rate:
            self.counts["errors"] += 1
            return latency, "error"
        roll = self.random.random()
        if roll < self.error_rate:
            self.counts["errors"] += 1
            return latency, "error"
        if roll < self.error_rate + self.stall_rate:
            self.counts["stalls"] += 1
            return self.stall, "stall"
        return latency, "ok"


def _completion(model: str, message: dict) -> dict:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": None, **message}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def _chunks(model: str, message: dict):
    """SSE chunks: content in pieces, or each tool call's arguments split over two deltas."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict, finish: str | None = None) -> str:
        return (
            "data: " + json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
        )

    yield chunk({"role": "assistant", "content": ""})
    if message.get("tool_calls"):
        for index, call in enumerate(message["tool_calls"]):
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": arguments[:half]},
                        }
                    ]
                }
            )
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
        yield chunk({}, "tool_calls")
    else:
        words = message["content"].split(" ")
        for i, word in enumerate(words):
            yield chunk({"content": word if i == 0 else " " + word})
        yield chunk({}, "stop")
    yield "data: [DONE]\n\n"


def build_app(faults: Faults) -> Starlette:
    async def completions(request: Request) -> Response:
        body = await request.json()
        messages = body.get("messages") or []
        delay, outcome = faults.draw(after_tool=bool(messages) and messages[-1].get("role") == "tool")
        await asyncio.sleep(delay)
        if outcome == "error":
            return JSONResponse({"error": {"message": "scripted server error", "type": "server_error"}}, 500)
        tool_names = {t.get("function", {}).get("name") for t in body.get("tools") or []}
        message = plan(messages, tool_names)
        model = body.get("model", "fake-model")
        if body.get("stream"):
            return StreamingResponse(_chunks(model, message), media_type="text/event-stream")
        return JSONResponse(_completion(model, message))

    async def stats(request: Request) -> Response:
        return JSONResponse(faults.counts)

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "e2e"}]})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models),
            Route("/stats", stats),
        ]
    )


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8900)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--min-latency", type=float, default=0.05)
    parser.add_argument("--max-latency", type=float, default=0.3)
    parser.add_argument("--error-rate", type=float, default=0.05)
    parser.add_argument("--stall-rate", type=float, default=0.0)
    parser.add_argument("--stall", type=float, default=20.0, help="seconds a stalled response waits")
    parser.add_argument(
        "--after-tool-error-rate",
        type=float,
        default=0.0,
        help="extra HTTP 500s on the calls right after a tool result",
    )
    args = parser.parse_args()
    faults = Faults(
        args.seed,
        args.min_latency,
        args.max_latency,
        args.error_rate,
        args.stall_rate,
        args.stall,
        args.after_tool_error_rate,
    )
    uvicorn.run(build_app(faults), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
