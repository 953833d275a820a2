from agents import Agent, function_tool
from llama_index.core.agent import ReActAgent
from strands import Agent as StrandsAgent


def search(query: str) -> str:
    return query


search_tool = function_tool(search)
lookup_tool = function_tool(search)

# two different tools
agent = ReActAgent.from_tools(tools=[search_tool, lookup_tool])

# two calls build two tool objects
support = Agent(name="support", tools=[function_tool(search), function_tool(search)])


def build(extra: bool):
    toolbox = [search_tool]
    if extra:
        toolbox.append(lookup_tool)
    return StrandsAgent(tools=toolbox)


# a list that is not given to an agent
pair = [search_tool, search_tool]
