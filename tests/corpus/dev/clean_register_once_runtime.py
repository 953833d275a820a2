from flask import Flask, jsonify, request
from llama_index.core import Settings
from llama_index.core.agent import ReActAgent
from llama_index.core.callbacks import LlamaDebugHandler
from llama_index.llms.openai import OpenAI

from dupguard.runtime import register_once

from .tools import tools

app = Flask(__name__)
debug_handler = LlamaDebugHandler(print_trace_on_end=False)
llm = OpenAI(model="gpt-4o-mini")


@app.post("/ask")
def ask():
    data = request.get_json()
    if data.get("debug"):
        # idempotent: the same handler object is only ever added once
        register_once(Settings.callback_manager, debug_handler)
    agent = ReActAgent.from_tools(tools, llm=llm)
    answer = agent.chat(data["question"])
    return jsonify(answer=str(answer))


@app.get("/debug/events")
def events():
    return jsonify(count=len(debug_handler.get_events()))


if __name__ == "__main__":
    app.run()
