from contextlib import asynccontextmanager

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.utils import new_agent_text_message
from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from mcp.server.fastmcp import FastMCP
from smolagents import CodeAgent, GradioUI, InferenceClientModel
from strands import Agent
from strands import Agent as StrandsAgent


class ResearchExecutor(AgentExecutor):
    """One executor per A2A server: DefaultRequestHandler runs execute() in a task per message."""

    def __init__(self):
        self.agent = Agent(system_prompt="Research the question.")  # error: DUP107

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        result = await self.agent.invoke_async(context.get_user_input())
        await event_queue.enqueue_event(new_agent_text_message(str(result)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class HandedAgentExecutor(AgentExecutor):
    """Keeps whichever Strands agent the server hands it at start-up (the early Strands executor's
    shape, copied into applications): one conversation for every client."""

    def __init__(self, agent: StrandsAgent):
        self.agent = agent  # error: DUP107

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        result = self.agent(context.get_user_input())
        await event_queue.enqueue_event(new_agent_text_message(str(result)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class Coordinator:
    """A wrapper the executor below builds once (the labelled strands-a2a-demo shape)."""

    def __init__(self):
        self.agent = CodeAgent(tools=[], model=InferenceClientModel())  # error: DUP107

    def ask(self, query: str) -> str:
        return str(self.agent.run(query, reset=False))


class CoordinatorExecutor:
    def __init__(self):
        self.coordinator = Coordinator()

    async def execute(self, context, event_queue) -> None:
        await event_queue.enqueue_event(new_agent_text_message(self.coordinator.ask(context.get_user_input())))


def main() -> None:
    handler = DefaultRequestHandler(agent_executor=CoordinatorExecutor(), task_store=InMemoryTaskStore())
    A2AStarletteApplication(agent_card=None, http_handler=handler).build()


# an agent registry exposed as MCP tools (the kyegomez/swarms#2047 AOP shape)
mcp = FastMCP("agents")
REGISTRY = {  # error: DUP107
    "analyst": ReActAgent.from_tools([], verbose=False),
    "writer": ReActAgent.from_tools([], verbose=False),
}


@mcp.tool()
async def ask_agent(name: str, task: str) -> str:
    return str(await REGISTRY[name].achat(task))


AGENTS = {}


@asynccontextmanager
async def lifespan(app: FastAPI):
    for name in ("planner", "critic"):
        AGENTS[name] = AssistantAgent(name, model_client=OpenAIChatCompletionClient(model="gpt-4o-mini"))  # error: DUP107
    yield


app = FastAPI(lifespan=lifespan)


@app.post("/agents/{name}")
async def run_agent(name: str, payload: dict):
    agent = AGENTS.get(name)
    return await agent.run(task=payload["task"])


# smolagents' GradioUI keeps the agent it is given and runs that object for every visitor without
# resetting its memory (huggingface/smolagents#703)
assistant = CodeAgent(tools=[], model=InferenceClientModel())  # error: DUP107
ui = GradioUI(assistant)
