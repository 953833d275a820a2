import asyncio

from autogen_agentchat.agents import AssistantAgent
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from strands import Agent

app = FastAPI()
agent = ReActAgent.from_tools(tools=[])
strands_agent = Agent(system_prompt="researcher")


async def fan_out_literal():
    return await asyncio.gather(  # error: DUP201
        agent.achat("query 1"),
        agent.achat("query 2"),
    )


async def fan_out_generator(queries: list[str]):
    return await asyncio.gather(*(agent.achat(q) for q in queries))  # error: DUP201


async def run_query(q: str):
    return await strands_agent.invoke_async(q)


async def through_helper(queries: list[str]):
    return await asyncio.gather(*[run_query(q) for q in queries])  # error: DUP201


async def tasks_in_a_loop(topics: list[str], model_client):
    writer = AssistantAgent("writer", model_client=model_client)
    tasks = []
    for topic in topics:
        tasks.append(asyncio.create_task(writer.run(task=topic)))  # error: DUP201
    return await asyncio.gather(*tasks)


async def task_group(questions: list[str]):
    async with asyncio.TaskGroup() as tg:
        for question in questions:
            tg.create_task(strands_agent.invoke_async(question))  # error: DUP201


@app.post("/compare")
async def compare(payload: dict):
    done, _ = await asyncio.wait(  # error: DUP201
        [asyncio.ensure_future(agent.achat(payload["a"])), asyncio.ensure_future(agent.achat(payload["b"]))]
    )
    return [t.result() for t in done]
