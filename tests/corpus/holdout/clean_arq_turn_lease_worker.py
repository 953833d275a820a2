"""arq worker: one chat turn per job, guarded by a lease on the turn."""
import os

from arq.connections import RedisSettings
from pydantic_ai import Agent

from dupguard.runtime import RedisBackend, aturn_lease
from support.tools import SupportDeps, lookup_order, refund_order
from support.store import save_answer

backend = RedisBackend(os.environ["REDIS_URL"])

support_agent = Agent(
    "anthropic:claude-3-5-sonnet-latest",
    deps_type=SupportDeps,
    tools=[lookup_order, refund_order],
    system_prompt="Resolve the customer's issue. Refund at most once per order.",
)


async def answer_turn(ctx, conversation_id: str, turn: int, text: str) -> None:
    async with aturn_lease(backend, f"turn:{conversation_id}:{turn}", ttl=60, heartbeat=20):
        result = await support_agent.run(text, deps=SupportDeps.for_conversation(conversation_id))
        await save_answer(conversation_id, turn, result.output)


async def startup(ctx) -> None:
    ctx["started"] = True


class WorkerSettings:
    functions = [answer_turn]
    on_startup = startup
    redis_settings = RedisSettings.from_dsn(os.environ["REDIS_URL"])
    max_jobs = 10
