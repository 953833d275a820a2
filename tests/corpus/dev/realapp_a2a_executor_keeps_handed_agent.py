# Case from a public application, rewritten in our own words (no code copied):
# zjaco13/ai-on-eks, blueprints/agentic/multi-agent-strands-bedrock/weather/multiagent/a2a/executor.py
# (commit 620254d02d73028e9c89fb66b02ab88438aa54f5): a copy of Strands' early A2A executor keeps the
# Strands agent its constructor is given and calls it for every A2A message; the server builds one
# executor around one agent at start-up, so every client continues one conversation.
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.utils import new_agent_text_message
from strands import Agent as StrandsAgent


class ForecastExecutor(AgentExecutor):
    def __init__(self, agent: StrandsAgent):
        self.agent = agent

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        reply = self.agent(context.get_user_input())
        for block in reply.message.get("content", []):
            if "text" in block:
                await event_queue.enqueue_event(new_agent_text_message(block["text"]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def serve() -> None:
    forecaster = StrandsAgent(system_prompt="Give three-day forecasts and weather alerts for US cities.")
    handler = DefaultRequestHandler(agent_executor=ForecastExecutor(forecaster), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=None, http_handler=handler)
    uvicorn.run(app.build(), host="0.0.0.0", port=9000)


if __name__ == "__main__":
    serve()
