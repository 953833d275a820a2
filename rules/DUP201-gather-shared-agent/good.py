import asyncio

from agents import Agent, Runner
from llama_index.core.agent import ReActAgent
from llama_index.core.agent.workflow import FunctionAgent
from openai import AsyncOpenAI
from strands import Agent as StrandsAgent

client = AsyncOpenAI()
triage = Agent(name="triage", instructions="Route the ticket.")
researcher = StrandsAgent(system_prompt="researcher")
lock = asyncio.Lock()


async def run_query(q: str):
    # FIXED: a fresh agent per task
    local_agent = ReActAgent.from_tools(tools=[])
    return await local_agent.achat(q)


async def per_task_agents(queries: list[str]):
    return await asyncio.gather(*(run_query(q) for q in queries))


async def stateless_agents(tickets: list[str]):
    # openai-agents: Agent is configuration, each Runner.run has its own state
    return await asyncio.gather(*(Runner.run(triage, t) for t in tickets))


async def workflow_agents(questions: list[str], llm):
    agent = FunctionAgent(tools=[], llm=llm)
    # no shared ctx: every run gets a fresh Context
    return await asyncio.gather(*(agent.run(user_msg=q) for q in questions))


async def llm_calls(prompts: list[str]):
    return await asyncio.gather(
        *(client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": p}]) for p in prompts)
    )


async def serialised(q: str):
    async with lock:
        return await researcher.invoke_async(q)


async def guarded_fan_out(queries: list[str]):
    return await asyncio.gather(*(serialised(q) for q in queries))


async def two_different_agents(q: str):
    first = StrandsAgent(system_prompt="a")
    second = StrandsAgent(system_prompt="b")
    return await asyncio.gather(first.invoke_async(q), second.invoke_async(q))


async def one_background_task(q: str):
    task = asyncio.create_task(researcher.invoke_async(q))
    return await task
