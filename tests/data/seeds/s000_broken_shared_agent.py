# seed 000, BROKEN: shared mutable agent state across requests (verbatim)
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
app = FastAPI()
memory = ChatMemoryBuffer.from_defaults(token_limit=4000)  # error: DUP102
agent = ReActAgent.from_tools(tools=my_tools, memory=memory)  # error: DUP101
@app.post("/chat")
async def chat(payload: dict):
    # Under load, multiple requests hit the same agent + memory.
    return await agent.achat(payload["message"])
