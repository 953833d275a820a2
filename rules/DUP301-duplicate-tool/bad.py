from agents import Agent, function_tool
from llama_index.core.agent import ReActAgent
from strands import Agent as StrandsAgent


def search(query: str) -> str:
    return query


search_tool = function_tool(search)
lookup_tool = function_tool(search)

tools = [search_tool, search_tool]  # error: DUP301
agent = ReActAgent.from_tools(tools=tools)

support = Agent(name="support", tools=[search_tool, lookup_tool, search_tool])  # error: DUP301

base = [search_tool]
strands_agent = StrandsAgent(tools=base + [lookup_tool, search_tool])  # error: DUP301


def build():
    toolbox = [search_tool, lookup_tool]
    toolbox.append(lookup_tool)  # error: DUP301
    return StrandsAgent(tools=toolbox)
