"""Near-miss from a public application, rewritten in our own words (no code copied).

Ihtishammehmood/Agentic-AI, Mem0/app.py at 06884dc0a41bcbacb207184d17c2c9b17452b453: a Streamlit
finance assistant caches one agno agent across sessions, and its Mem0 toolkit is pinned to one
fixed department id. The pinned id is the design: the app is the finance department's shared
notebook (budgets, variance limits), the page knows no user, and every visitor is meant to read
and update the same memories. DUP105 stays quiet: no handler serves an identified user, so
nobody acts with another user's account.
"""

import os

import streamlit as st
from agno.agent import Agent
from agno.models.google import Gemini
from agno.tools.mem0 import Mem0Tools

MEMORY_BACKEND = {
    "embedder": {"provider": "gemini", "config": {"model": "models/text-embedding-004"}},
    "vector_store": {"provider": "chroma", "config": {"collection_name": "finance", "path": "db"}},
}


@st.cache_resource
def finance_agent() -> Agent:
    return Agent(
        model=Gemini(id="gemini-flash-latest", api_key=os.getenv("GOOGLE_API_KEY")),
        tools=[Mem0Tools(user_id="finance-team", config=MEMORY_BACKEND)],
        instructions=[
            "You keep the finance team's shared notes: budgets, limits and decisions.",
            "Store what the team tells you and recall it when asked.",
        ],
    )


st.title("Finance notebook")
if "turns" not in st.session_state:
    st.session_state.turns = []

for role, text in st.session_state.turns:
    with st.chat_message(role):
        st.markdown(text)

if question := st.chat_input("Ask the finance notebook"):
    st.session_state.turns.append(("user", question))
    reply = finance_agent().run(question).content
    st.session_state.turns.append(("assistant", reply))
    st.markdown(reply)
