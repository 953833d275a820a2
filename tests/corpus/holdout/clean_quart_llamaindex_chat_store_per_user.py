"""Quart app: legacy LlamaIndex ReActAgent built per request over a per-user chat store."""
from quart import Quart, jsonify, request
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from llama_index.storage.chat_store.redis import RedisChatStore

from banking.api import balance, recent_transactions

app = Quart(__name__)
llm = OpenAI(model="gpt-4o")
chat_store = RedisChatStore(redis_url="redis://redis:6379", ttl=3600)
TOOLS = [FunctionTool.from_defaults(fn=balance), FunctionTool.from_defaults(fn=recent_transactions)]


@app.post("/banking/chat")
async def chat():
    data = await request.get_json()
    user_id = request.headers["X-User-Id"]
    memory = ChatMemoryBuffer.from_defaults(
        token_limit=3000,
        chat_store=chat_store,
        chat_store_key=f"banking-{user_id}",
    )
    agent = ReActAgent.from_tools(TOOLS, llm=llm, memory=memory, max_iterations=6)
    response = await agent.achat(data["message"])
    return jsonify({"reply": str(response)})


@app.delete("/banking/chat")
async def forget():
    user_id = request.headers["X-User-Id"]
    await chat_store.adelete_messages(f"banking-{user_id}")
    return jsonify({"ok": True})
