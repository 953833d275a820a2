import asyncio

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient
from fastapi import FastAPI
from pydantic import BaseModel

from .tools import fetch_filing, summarize_table

model_client = OpenAIChatCompletionClient(model="gpt-4o")
app = FastAPI()


class Batch(BaseModel):
    tickers: list[str]


@app.post("/filings/summaries")
async def summaries(batch: Batch):
    analyst = AssistantAgent("analyst", model_client=model_client, tools=[fetch_filing, summarize_table])
    out = {}
    for finished in asyncio.as_completed([analyst.run(task=f"Summarize {t} 10-K") for t in batch.tickers]):
        result = await finished
        out[len(out)] = result.messages[-1].content
    return out


@app.post("/filings/review")
async def review(ticker: str):
    writer = AssistantAgent("writer", model_client=model_client, tools=[fetch_filing])
    critic = AssistantAgent("critic", model_client=model_client, system_message="Reply APPROVE when good.")
    team = RoundRobinGroupChat(
        [writer, critic],
        termination_condition=TextMentionTermination("APPROVE") | MaxMessageTermination(12),
    )
    for attempt in range(3):
        try:
            result = await team.run(task=f"Review the risk factors of {ticker}")
            return {"stop_reason": result.stop_reason, "text": result.messages[-1].content}
        except TimeoutError:
            await asyncio.sleep(1 + attempt)
    return {"error": "timed out"}
