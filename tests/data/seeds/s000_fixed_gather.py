# seed 000, BETTER: separate instances per task
import asyncio
from llama_index.core.agent import ReActAgent
async def run_query(q: str):
    local_agent = ReActAgent.from_tools(tools=my_tools)
    return await local_agent.achat(q)
async def main(queries):
    results = await asyncio.gather(*(run_query(q) for q in queries))
    return results
