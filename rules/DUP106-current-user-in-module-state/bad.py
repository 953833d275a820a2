import contextlib
import io
import os
import sys

import chainlit as cl
import gradio as gr
from crewai import Agent, Crew, Task
from fastapi import FastAPI
from flask import Flask, request
from langchain_core.tools import tool
from llama_index.core.agent import ReActAgent
from mcp.server.fastmcp import FastMCP

from .videos import build_video_agent

app = FastAPI()
web = Flask(__name__)
mcp = FastMCP("billing")

active_user = None
video_agent = None
current_session = {"user_id": None}


@tool
def lookup_orders() -> str:
    """Orders of the current user."""
    # the tool trusts the module global: whoever wrote it last
    return f"orders of {active_user}"


@app.post("/chat")
async def chat(payload: dict):
    global active_user
    active_user = payload["user_id"]  # error: DUP106
    agent = ReActAgent.from_tools([lookup_orders])
    return await agent.achat(payload["message"])


@app.post("/research")
async def research(payload: dict):
    # the visitor's own key, written where every request's client reads it
    os.environ["OPENAI_API_KEY"] = payload["api_key"]  # error: DUP106
    crew = Crew(agents=[Agent(role="r", goal="g", backstory="b")], tasks=[Task(description=payload["topic"])])
    return crew.kickoff()


@app.post("/login")
async def login(payload: dict):
    current_session["user_id"] = payload["user_id"]  # error: DUP106
    return {"ok": True}


@web.post("/run")
def run_verbose():
    capture = io.StringIO()
    sys.stdout = capture  # error: DUP106
    try:
        agent = ReActAgent.from_tools([lookup_orders], verbose=True)
        agent.chat(request.json["message"])
    finally:
        sys.stdout = sys.__stdout__
    return capture.getvalue()


@web.post("/run-redirect")
def run_redirect():
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):  # error: DUP106
        ReActAgent.from_tools([lookup_orders], verbose=True).chat(request.json["message"])
    return buffer.getvalue()


@cl.on_message
async def on_message(message: cl.Message):
    global active_user
    active_user = message.author  # error: DUP106
    await cl.Message(content=lookup_orders.invoke({})).send()


@mcp.tool()
async def charge(customer_id: str, amount: int) -> str:
    os.environ.update({"BILLING_CUSTOMER": customer_id})  # error: DUP106
    return f"charged {amount}"


def analyse(url: str):
    # a Gradio listener (below): every visitor's click replaces the one agent all visitors chat with
    global video_agent
    video_agent = build_video_agent(url)  # error: DUP106
    return gr.update(visible=True)


def reply(message: str, history: list):
    return "", history + [(message, str(video_agent.chat(message)))]


with gr.Blocks() as demo:
    url_box = gr.Textbox()
    gr.Button("Analyse").click(analyse, inputs=[url_box], outputs=[url_box])
    chat_box = gr.Textbox()
    history_box = gr.Chatbot()
    chat_box.submit(reply, inputs=[chat_box, history_box], outputs=[chat_box, history_box])
