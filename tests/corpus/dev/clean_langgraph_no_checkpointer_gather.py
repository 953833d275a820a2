"""Classify a batch of support emails with a small LangGraph pipeline (no memory needed)."""
import asyncio
from typing import TypedDict

from langchain_anthropic import ChatAnthropic
from langgraph.graph import END, START, StateGraph


class EmailState(TypedDict):
    body: str
    category: str
    priority: str


llm = ChatAnthropic(model="claude-3-5-haiku-latest", temperature=0)


async def categorize(state: EmailState) -> dict:
    msg = await llm.ainvoke(f"Category (billing/bug/other) for:\n{state['body']}\nOne word.")
    return {"category": msg.content.strip().lower()}


async def prioritize(state: EmailState) -> dict:
    msg = await llm.ainvoke(f"Priority (low/high) for a {state['category']} email:\n{state['body']}")
    return {"priority": msg.content.strip().lower()}


builder = StateGraph(EmailState)
builder.add_node("categorize", categorize)
builder.add_node("prioritize", prioritize)
builder.add_edge(START, "categorize")
builder.add_edge("categorize", "prioritize")
builder.add_edge("prioritize", END)
triage_graph = builder.compile()


async def triage_batch(bodies: list[str], concurrency: int = 8) -> list[EmailState]:
    sem = asyncio.Semaphore(concurrency)

    async def one(body: str) -> EmailState:
        async with sem:
            return await triage_graph.ainvoke({"body": body, "category": "", "priority": ""})

    return await asyncio.gather(*(one(b) for b in bodies))


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(asyncio.run(triage_batch(json.load(open(sys.argv[1])))), indent=2))
