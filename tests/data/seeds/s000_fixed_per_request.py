# seed 000, FIXED: create isolated state per request (verbatim), plus the session-scoped lookup
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
app = FastAPI()
@app.post("/chat")
async def chat(payload: dict):
    memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
    agent = ReActAgent.from_tools(tools=my_tools, memory=memory)
    return await agent.achat(payload["message"])
# Better: session-scoped memory lookup
session_memory_store = {}
def get_memory(session_id: str):
    if session_id not in session_memory_store:
        session_memory_store[session_id] = ChatMemoryBuffer.from_defaults(token_limit=4000)
    return session_memory_store[session_id]
