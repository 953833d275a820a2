"""A FastAPI chat service with the bugs seed 000 describes: one LlamaIndex agent and one
chat memory shared by every request, a naive retry, and the same tool given twice."""

from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool


def search_orders(query: str) -> str:
    """Look up orders matching the query."""
    return f"results for {query}"


search_tool = FunctionTool.from_defaults(fn=search_orders)

app = FastAPI()
memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
agent = ReActAgent.from_tools(tools=[search_tool, search_tool], memory=memory)


@app.post("/chat")
async def chat(payload: dict):
    # Under load, multiple requests hit the same agent + memory.
    return await agent.achat(payload["message"])
