from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .tools import make_tools

llm = OpenAI(model="gpt-4o-mini")
session_memory_store: dict[str, ChatMemoryBuffer] = {}


def get_memory(session_id: str) -> ChatMemoryBuffer:
    if session_id not in session_memory_store:
        session_memory_store[session_id] = ChatMemoryBuffer.from_defaults(token_limit=4000)
    return session_memory_store[session_id]


app = FastAPI()


class ChatIn(BaseModel):
    session_id: str
    message: str


@app.post("/chat")
async def chat(payload: ChatIn):
    memory = get_memory(payload.session_id)
    agent = ReActAgent.from_tools(tools=make_tools(), llm=llm, memory=memory)
    response = await agent.achat(payload.message)
    return {"reply": str(response)}


@app.delete("/chat/{session_id}")
async def end_session(session_id: str):
    session_memory_store.pop(session_id, None)
    return {"ended": session_id}
