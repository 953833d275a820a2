# seed 000, FIX: dedupe by name before passing tools in
from llama_index.core.agent import ReActAgent
tools = [search_tool, lookup_tool]
unique_tools = {tool.metadata.name: tool for tool in tools}.values()
agent = ReActAgent.from_tools(tools=list(unique_tools))
