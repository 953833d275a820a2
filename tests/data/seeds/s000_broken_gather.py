# seed 000, BAD: asyncio.gather against one shared agent
import asyncio
from llama_index.core.agent import ReActAgent
agent = ReActAgent.from_tools(tools=my_tools)
async def main():
    results = await asyncio.gather(  # error: DUP201
        agent.achat("query 1"),
        agent.achat("query 2"),
    )
    return results
