# Case from a public application, rewritten in our own words (no code copied):
# scalasm/strands-a2a-demo, coordinator_agent.py (commit deebca0af77549b1f472758029e8911df579bc6b):
# the A2A server's main() builds one executor for DefaultRequestHandler; the executor builds one
# coordinator, which keeps one Strands agent and runs it in a worker thread for every message,
# so all clients share one conversation and overlapping messages run the agent at once.
import asyncio

import uvicorn
from a2a.server.apps import A2AStarletteApplication
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.utils import new_agent_text_message
from strands import Agent, tool


@tool
def delegate(worker: str, query: str) -> str:
    """Send a query to a worker agent and return its answer."""
    return f"{worker}: {query}"


class TravelCoordinator:
    def __init__(self, profile: str):
        self.profile = profile
        self.agent = Agent(
            system_prompt=f"You coordinate the {profile} workers; delegate and merge their answers.",
            tools=[delegate],
        )

    async def answer(self, query: str) -> str:
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(None, lambda: self.agent(query))
        return str(outcome)


class TravelExecutor:
    def __init__(self, profile: str):
        self.coordinator = TravelCoordinator(profile)

    async def execute(self, context, event_queue) -> None:
        reply = await self.coordinator.answer(context.get_user_input())
        await event_queue.enqueue_event(new_agent_text_message(reply))

    async def cancel(self, context, event_queue) -> None:
        raise RuntimeError("cancel is not supported")


def serve(profile: str = "travel", port: int = 9000) -> None:
    store = InMemoryTaskStore()
    handler = DefaultRequestHandler(agent_executor=TravelExecutor(profile), task_store=store)
    app = A2AStarletteApplication(agent_card=None, http_handler=handler).build()
    uvicorn.run(app, port=port)


if __name__ == "__main__":
    serve()
