"""A FastAPI chat service on llama-index-core 0.14 with two of the bugs dupguard finds: one chat
memory shared by every request (DUP102: the users' conversations mix, and the model repeats
tool calls it sees half-answered) and the same tool given to the agent twice (DUP301)."""

from fastapi import FastAPI
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool


def search_orders(query: str) -> str:
    """Look up orders matching the query."""
    return f"results for {query}"


search_tool = FunctionTool.from_defaults(fn=search_orders)

app = FastAPI()
agent = FunctionAgent(tools=[search_tool, search_tool], llm=MockFunctionCallingLLM())
memory = ChatMemoryBuffer.from_defaults(token_limit=4000)


@app.post("/chat")
async def chat(payload: dict):
    # Under load, concurrent requests write into the same memory.
    return {"answer": str(await agent.run(payload["message"], memory=memory))}
