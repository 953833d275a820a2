"""Agent factory shared by the Slack bot and the web app."""
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from .search import search_confluence, search_jira, search_web


def _summarize(text: str) -> str:
    """Summarize a long piece of text in five bullets."""
    return text[:2000]


summarize_tool = FunctionTool.from_defaults(fn=_summarize, name="summarize")

SEARCH_TOOLS = [
    FunctionTool.from_defaults(fn=search_confluence, name="search", description="Search the wiki"),
    FunctionTool.from_defaults(fn=search_jira, name="search", description="Search Jira tickets"),
    summarize_tool,
]


def make_agent(allow_web: bool = False) -> FunctionAgent:
    tools = list(SEARCH_TOOLS)
    if allow_web:
        tools.append(FunctionTool.from_defaults(fn=search_web, name="web_search"))
    return FunctionAgent(
        tools=tools + [summarize_tool],
        llm=OpenAI(model="gpt-4o-mini"),
        system_prompt="Answer engineering questions with citations.",
    )


async def answer(question: str, allow_web: bool = False) -> str:
    agent = make_agent(allow_web)
    result = await agent.run(question)
    return str(result)
