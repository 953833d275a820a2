# seed 000, BAD: same tool included twice via composition bug
from llama_index.core.agent import ReActAgent
tools = [search_tool, search_tool]  # error: DUP301
agent = ReActAgent.from_tools(tools=tools)
