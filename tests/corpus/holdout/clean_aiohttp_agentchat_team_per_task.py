"""aiohttp endpoint: debate a proposal with several AgentChat teams, one team per task."""
import asyncio

from aiohttp import web
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient

model_client = OpenAIChatCompletionClient(model="gpt-4o-mini")


def make_team(stance: str) -> RoundRobinGroupChat:
    advocate = AssistantAgent("advocate", model_client=model_client, system_message=f"Argue {stance}.")
    critic = AssistantAgent("critic", model_client=model_client, system_message="Find the weakest point.")
    return RoundRobinGroupChat([advocate, critic], termination_condition=MaxMessageTermination(6))


async def debate(stance: str, proposal: str) -> str:
    team = make_team(stance)
    result = await team.run(task=proposal)
    return result.messages[-1].content


async def review(request: web.Request) -> web.Response:
    proposal = (await request.json())["proposal"]
    stances = ["for the proposal", "against the proposal", "for a cheaper alternative"]
    outcomes = await asyncio.gather(*(debate(s, proposal) for s in stances))
    return web.json_response(dict(zip(stances, outcomes)))


app = web.Application()
app.router.add_post("/review", review)
