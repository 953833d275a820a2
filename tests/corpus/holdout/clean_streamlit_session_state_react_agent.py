"""Streamlit app: one legacy LlamaIndex ReActAgent per browser session (st.session_state)."""
import streamlit as st
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.anthropic import Anthropic

from hiking.trails import trail_search, trail_conditions


@st.cache_resource
def get_llm() -> Anthropic:
    return Anthropic(model="claude-3-5-haiku-latest")


def new_agent() -> ReActAgent:
    tools = [FunctionTool.from_defaults(fn=trail_search), FunctionTool.from_defaults(fn=trail_conditions)]
    return ReActAgent.from_tools(tools, llm=get_llm(), max_iterations=6)


if "agent" not in st.session_state:
    st.session_state.agent = new_agent()
    st.session_state.transcript = []

st.title("Trail finder")
for role, text in st.session_state.transcript:
    st.chat_message(role).write(text)

if prompt := st.chat_input("Where do you want to hike?"):
    st.chat_message("user").write(prompt)
    reply = str(st.session_state.agent.chat(prompt))
    st.chat_message("assistant").write(reply)
    st.session_state.transcript += [("user", prompt), ("assistant", reply)]

if st.sidebar.button("Start over"):
    st.session_state.agent.reset()
    st.session_state.transcript = []
