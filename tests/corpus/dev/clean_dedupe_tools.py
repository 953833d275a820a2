"""Tool assembly for the plugin system: plugins may contribute the same tool twice."""
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from dupguard.runtime import dedupe_tools

from .plugins import discover_plugin_tools
from .search import search_code, search_docs

search_docs_tool = FunctionTool.from_defaults(fn=search_docs, name="search_docs")
search_code_tool = FunctionTool.from_defaults(fn=search_code, name="search_code")


def collect_tools() -> list[FunctionTool]:
    tools = [search_docs_tool, search_code_tool, *discover_plugin_tools()]
    unique = {t.metadata.name: t for t in tools}
    return list(unique.values())


def make_agent() -> FunctionAgent:
    return FunctionAgent(
        tools=collect_tools(),
        llm=OpenAI(model="gpt-4o-mini"),
        system_prompt="Answer questions about our codebase.",
    )


def make_agent_v2(extra: list[FunctionTool]) -> FunctionAgent:
    return FunctionAgent(
        tools=dedupe_tools([search_docs_tool, search_code_tool, *extra]),
        llm=OpenAI(model="gpt-4o-mini"),
    )
