from agents import Agent, function_tool
from llama_index.core.agent import ReActAgent
from strands import Agent as StrandsAgent


def search(query: str) -> str:
    return query


search_tool = function_tool(search)
lookup_tool = function_tool(search)

tools = [search_tool]
agent = ReActAgent.from_tools(tools=tools)

support = Agent(name="support", tools=[search_tool, lookup_tool])

base = [search_tool]
strands_agent = StrandsAgent(tools=base + [lookup_tool])


def build():
    toolbox = [search_tool, lookup_tool]
    return StrandsAgent(tools=toolbox)
