import os

from flask import Flask, jsonify, request
from llama_index.core import set_global_handler
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.openai import OpenAI
from llama_index.storage.chat_store.redis import RedisChatStore

from .tools import build_tools

app = Flask(__name__)
chat_store = RedisChatStore(redis_url=os.environ["REDIS_URL"], ttl=3600)
llm = OpenAI(model="gpt-4o-mini")


@app.post("/api/chat")
def chat():
    data = request.get_json()
    if data.get("trace"):
        set_global_handler("arize_phoenix")
    memory = ChatMemoryBuffer.from_defaults(
        token_limit=3000,
        chat_store=chat_store,
        chat_store_key="chat_history",
    )
    agent = ReActAgent.from_tools(build_tools(), llm=llm, memory=memory)
    reply = agent.chat(data["message"])
    return jsonify(reply=str(reply), sources=[s.tool_name for s in reply.sources])


@app.get("/api/health")
def health():
    return jsonify(ok=True, store=chat_store.__class__.__name__)
