import contextvars
import os
import threading

import gradio as gr
from fastapi import FastAPI
from langchain_core.tools import tool
from llama_index.core.agent import ReActAgent
from openai import OpenAI

app = FastAPI()
current_user: contextvars.ContextVar[str] = contextvars.ContextVar("current_user")
local = threading.local()
sessions: dict[str, ReActAgent] = {}
settings = {"model": "gpt-4o-mini"}
_client = None
request_count = 0

# configured once at import, a constant
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ.setdefault("OPENAI_BASE_URL", "https://api.openai.com/v1")


@tool
def lookup_orders() -> str:
    """Orders of the current user."""
    return f"orders of {current_user.get()}"


@app.post("/chat")
async def chat(payload: dict):
    # a ContextVar is per task: concurrent requests each see their own user
    current_user.set(payload["user_id"])
    agent = sessions.setdefault(payload["session_id"], ReActAgent.from_tools([lookup_orders]))
    sessions[payload["session_id"]] = agent
    return await agent.achat(payload["message"])


@app.post("/thread-local")
def thread_local(payload: dict):
    local.user_id = payload["user_id"]
    return lookup_orders.invoke({})


@app.post("/key")
async def byo_key(payload: dict):
    # the key goes to this request's client only
    client = OpenAI(api_key=payload["api_key"])
    return client.models.list()


@app.post("/settings")
async def update_settings(payload: dict):
    # an admin setting with a constant value; no user's data
    settings["model"] = "gpt-4o"
    return settings


def get_client():
    # filled once, then reused: a cache, not the current request's value
    global _client
    if _client is None:
        _client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])
    return _client


@app.post("/count")
async def count(payload: dict):
    global request_count
    request_count += 1
    return {"count": request_count}


@app.post("/scratch")
async def scratch(payload: dict):
    # a local rebinding, no `global`
    active_user = payload["user_id"]
    return {"user": active_user}


def analyse(url: str, state: dict):
    # per visitor: the agent lives in this visitor's gr.State
    state = {"agent": ReActAgent.from_tools([lookup_orders], context=url)}
    return state


def reply(message: str, state: dict):
    return str(state["agent"].chat(message))


with gr.Blocks() as demo:
    agent_state = gr.State({})
    url_box = gr.Textbox()
    gr.Button("Analyse").click(analyse, inputs=[url_box, agent_state], outputs=[agent_state])
