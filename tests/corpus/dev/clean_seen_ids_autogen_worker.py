import json

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from redis import Redis

from .agents import build_agents
from .tools import TOOL_MAP

redis = Redis.from_url("redis://localhost:6379/1")
dramatiq.set_broker(RedisBroker(client=redis))


def execute_once(call: dict, conversation_id: str) -> str | None:
    key = f"toolcall:{conversation_id}:{call['id']}"
    if not redis.set(key, "running", nx=True, ex=86400):
        return redis.get(f"{key}:result")
    fn = TOOL_MAP[call["function"]["name"]]
    out = str(fn(**json.loads(call["function"]["arguments"])))
    redis.set(f"{key}:result", out, ex=86400)
    return out


@dramatiq.actor(max_retries=0, time_limit=300_000)
def continue_conversation(conversation_id: str, prompt: str) -> None:
    assistant, proxy = build_agents()
    result = proxy.initiate_chat(assistant, message=prompt, max_turns=1)
    last = result.chat_history[-1]
    seen_ids = set()
    for call in last.get("tool_calls", []):
        if call["id"] in seen_ids:
            continue
        seen_ids.add(call["id"])
        execute_once(call, conversation_id)
