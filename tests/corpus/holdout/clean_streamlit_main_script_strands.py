"""Streamlit main script: personal finance assistant.

Streamlit re-runs this file on every interaction, so module-level objects here are
re-created per run; the conversation is kept per browser session in st.session_state.
"""
import streamlit as st
from strands import Agent
from strands.models.anthropic import AnthropicModel

from budget.tools import categorise, monthly_totals

st.set_page_config(page_title="Budget assistant")
st.title("Budget assistant")

model = AnthropicModel(model_id="claude-3-5-haiku-latest", max_tokens=1024)

if "messages" not in st.session_state:
    st.session_state.messages = []

assistant = Agent(
    model=model,
    tools=[categorise, monthly_totals],
    messages=list(st.session_state.messages),
    callback_handler=None,
)

for m in st.session_state.messages:
    with st.chat_message(m["role"]):
        for block in m["content"]:
            if "text" in block:
                st.markdown(block["text"])

if prompt := st.chat_input("Ask about your spending"):
    with st.chat_message("user"):
        st.markdown(prompt)
    reply = assistant(prompt)
    with st.chat_message("assistant"):
        st.markdown(str(reply))
    st.session_state.messages = assistant.messages
