from contextlib import asynccontextmanager

from fastapi import FastAPI
from strands import Agent

from .plugins import plugin_tools
from .tools import make_account_tool, search_arxiv, search_news, workspace_tool

BASE_TOOLS = [search_arxiv, search_news]
BASE_TOOLS.extend(plugin_tools())  # module level: once per process
RECENT_TOPICS: list[str] = []


@asynccontextmanager
async def lifespan(app: FastAPI):
    BASE_TOOLS.append(make_account_tool("system"))  # startup: once
    yield


api = FastAPI(lifespan=lifespan)


# a fresh list per request
@api.post("/research")
async def research(topic: str, workspace: str):
    tools = [*BASE_TOOLS, workspace_tool(workspace)]
    return str(await Agent(tools=tools).invoke_async(topic))


# a local copy, then extended
@api.post("/research/v2")
async def research_v2(topic: str, workspace: str):
    tools = list(BASE_TOOLS)
    tools.append(workspace_tool(workspace))
    RECENT_TOPICS.append(topic)  # not a tool list
    return str(await Agent(tools=tools).invoke_async(topic))


# guarded: each plugin tool is added at most once
@api.post("/plugins/{name}")
async def enable_plugin(name: str):
    for extra in plugin_tools(name):
        if extra not in BASE_TOOLS:
            BASE_TOOLS.append(extra)
    return {"tools": len(BASE_TOOLS)}


class Toolbox:
    def __init__(self) -> None:
        self.tools = [search_news]

    def add(self, tool) -> None:
        self.tools.append(tool)  # per-instance list, and the class is built per use


def build_agent(account_id: str) -> Agent:
    box = Toolbox()
    box.add(make_account_tool(account_id))
    return Agent(tools=box.tools)


if __name__ == "__main__":
    BASE_TOOLS.append(make_account_tool("cli"))
    print(Agent(tools=BASE_TOOLS)("hello"))


# a registration decorator fills the list at import time
PLUGIN_TOOLS: list = []
tool_calls_seen: list = []


def register(fn):
    PLUGIN_TOOLS.append(fn)
    return fn


@register
def lookup(order_id: str) -> str:
    return order_id


@api.post("/plugins/run")
async def run_plugins(topic: str):
    tool_calls_seen.append(topic)  # a log of calls, not a tool list
    return str(await Agent(tools=[*PLUGIN_TOOLS]).invoke_async(topic))
