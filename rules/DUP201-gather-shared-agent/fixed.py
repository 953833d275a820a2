import asyncio

from autogen_agentchat.agents import AssistantAgent
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from strands import Agent

app = FastAPI()


def make_agent():
    return ReActAgent.from_tools(tools=[])


def make_strands_agent():
    return Agent(system_prompt="researcher")


async def fan_out_literal():
    return await asyncio.gather(
        make_agent().achat("query 1"),
        make_agent().achat("query 2"),
    )


async def fan_out_generator(queries: list[str]):
    return await asyncio.gather(*(make_agent().achat(q) for q in queries))


async def run_query(q: str):
    return await make_strands_agent().invoke_async(q)


async def through_helper(queries: list[str]):
    return await asyncio.gather(*[run_query(q) for q in queries])


async def tasks_in_a_loop(topics: list[str], model_client):
    def make_writer():
        return AssistantAgent("writer", model_client=model_client)
    tasks = []
    for topic in topics:
        tasks.append(asyncio.create_task(make_writer().run(task=topic)))
    return await asyncio.gather(*tasks)


async def task_group(questions: list[str]):
    async with asyncio.TaskGroup() as tg:
        for question in questions:
            tg.create_task(make_strands_agent().invoke_async(question))


@app.post("/compare")
async def compare(payload: dict):
    done, _ = await asyncio.wait(
        [asyncio.ensure_future(make_agent().achat(payload["a"])), asyncio.ensure_future(make_agent().achat(payload["b"]))]
    )
    return [t.result() for t in done]
