import asyncio

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.utils import new_agent_text_message
from agents import Agent as SdkAgent
from agents import Runner
from dupguard.runtime import InvocationGuard
from fastapi import FastAPI
from mcp.server.fastmcp import FastMCP
from pydantic_ai import Agent as PydanticAgent
from smolagents import CodeAgent, GradioUI, InferenceClientModel
from strands import Agent


class PerRequestExecutor(AgentExecutor):
    """Builds the stateful agent for each execution."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        agent = Agent(system_prompt="Research the question.")
        result = await agent.invoke_async(context.get_user_input())
        await event_queue.enqueue_event(new_agent_text_message(str(result)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class LockedExecutor(AgentExecutor):
    """Deliberately one conversation (a single-operator console), one run at a time."""

    def __init__(self):
        self.agent = Agent(system_prompt="Operate the console.")
        self.lock = asyncio.Lock()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        async with self.lock:
            result = await self.agent.invoke_async(context.get_user_input())
        await event_queue.enqueue_event(new_agent_text_message(str(result)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class StatelessExecutor(AgentExecutor):
    """An OpenAI Agents SDK agent is configuration only; Runner.run keeps the run's state."""

    def __init__(self):
        self.agent = SdkAgent(name="triage", instructions="Route the question.")

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        result = await Runner.run(self.agent, context.get_user_input())
        await event_queue.enqueue_event(new_agent_text_message(result.final_output))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class HandedConfigExecutor(AgentExecutor):
    """Handed an OpenAI Agents SDK agent (configuration only), or a value whose annotation says
    nothing about what it is: nothing known to keep a conversation is held."""

    def __init__(self, agent: SdkAgent, helper=None):
        self.agent = agent
        self.helper = helper

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        result = await Runner.run(self.agent, context.get_user_input())
        await event_queue.enqueue_event(new_agent_text_message(result.final_output))
        if self.helper is not None:
            self.helper.run(context.get_user_input())

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class TemplateHolder:
    """Holds an agent as a template and runs a fresh copy per request (the labelled
    strands-a2a-demo worker agents)."""

    def __init__(self):
        self.agent = Agent(system_prompt="Answer.")

    def ask(self, query: str) -> str:
        isolated = Agent(system_prompt=self.agent.system_prompt, tools=list(self.agent.tool_names))
        return str(isolated(query))


class TemplateExecutor:
    def __init__(self):
        self.holder = TemplateHolder()

    async def execute(self, context, event_queue) -> None:
        await event_queue.enqueue_event(new_agent_text_message(self.holder.ask(context.get_user_input())))


def main() -> None:
    DefaultRequestHandler(agent_executor=TemplateExecutor(), task_store=InMemoryTaskStore())


mcp = FastMCP("agents")
WRITERS = {"short": PydanticAgent("openai:gpt-4o-mini"), "long": PydanticAgent("openai:gpt-4o")}
FACTORIES = {"research": lambda: Agent(system_prompt="Research.")}
guard = InvocationGuard()


@mcp.tool()
async def write(style: str, text: str) -> str:
    # stateless agents: the registry shares configuration only
    return (await WRITERS[style].run(text)).output


@mcp.tool()
async def research(kind: str, question: str) -> str:
    # a registry of factories: every call builds its own agent
    agent = FACTORIES[kind]()
    return str(await agent.invoke_async(question))


app = FastAPI()
CONSOLE = {"operator": Agent(system_prompt="Operate.")}


@app.post("/console")
async def console(payload: dict):
    # one run at a time on the single operator's agent
    async with guard.ahold("operator"):
        return str(await CONSOLE["operator"].invoke_async(payload["command"]))


# told to reset the agent's memory at every run: no visitor inherits another's conversation
fresh_ui = GradioUI(CodeAgent(tools=[], model=InferenceClientModel()), reset_agent_memory=True)
