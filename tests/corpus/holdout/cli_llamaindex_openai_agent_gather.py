"""CLI: answer a list of due-diligence questions about a company, concurrently."""
import argparse
import asyncio
import json

from llama_index.agent.openai import OpenAIAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from dd.sources import filings_search, news_search


def build_agent() -> OpenAIAgent:
    tools = [
        FunctionTool.from_defaults(fn=filings_search),
        FunctionTool.from_defaults(fn=news_search),
    ]
    return OpenAIAgent.from_tools(tools, llm=OpenAI(model="gpt-4o"), verbose=False)


async def answer_all(questions: list[str]) -> dict[str, str]:
    agent = build_agent()
    replies = await asyncio.gather(*(agent.achat(q) for q in questions))
    return {q: str(r) for q, r in zip(questions, replies)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("questions", help="JSON file with a list of questions")
    args = parser.parse_args()
    with open(args.questions) as fh:
        questions = json.load(fh)
    for q, a in asyncio.run(answer_all(questions)).items():
        print(f"## {q}\n{a}\n")


if __name__ == "__main__":
    main()
