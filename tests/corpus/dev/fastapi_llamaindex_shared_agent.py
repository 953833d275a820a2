"""Support chat API backed by a LlamaIndex ReAct agent."""
import logging

from fastapi import FastAPI
from llama_index.core import Settings
from llama_index.core.agent import ReActAgent
from llama_index.core.callbacks import LlamaDebugHandler
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from pydantic import BaseModel

from .crm import lookup_customer, open_ticket

log = logging.getLogger(__name__)

app = FastAPI(title="support-bot")
Settings.llm = OpenAI(model="gpt-4o-mini", temperature=0)

tools = [
    FunctionTool.from_defaults(fn=lookup_customer),
    FunctionTool.from_defaults(fn=open_ticket),
]
memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
agent = ReActAgent.from_tools(tools=tools, memory=memory, verbose=False)


class ChatIn(BaseModel):
    message: str
    user_id: str
    debug: bool = False


class ChatOut(BaseModel):
    reply: str


@app.post("/chat", response_model=ChatOut)
async def chat(payload: ChatIn) -> ChatOut:
    if payload.debug:
        # turn on tracing for this request so support can see the steps
        Settings.callback_manager.add_handler(LlamaDebugHandler(print_trace_on_end=True))
    log.info("chat user=%s", payload.user_id)
    response = await agent.achat(payload.message)
    return ChatOut(reply=str(response))


@app.get("/healthz")
async def healthz() -> dict:
    return {"ok": True}
