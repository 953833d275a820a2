"""Streamlit app: cached clients and a pydantic-ai agent shared across sessions (all stateless)."""
import streamlit as st
from openai import OpenAI
from pydantic_ai import Agent

from contracts.search import ClauseIndex


@st.cache_resource
def get_client() -> OpenAI:
    return OpenAI()


@st.cache_resource
def get_agent() -> Agent:
    return Agent(
        "openai:gpt-4o-mini",
        system_prompt="Explain contract clauses in plain English. Quote the clause first.",
    )


@st.cache_resource
def get_index() -> ClauseIndex:
    return ClauseIndex.load("./indexes/clauses")


st.title("Clause explainer")
query = st.text_input("Which clause?")
if query:
    clause = get_index().best_match(query)
    st.code(clause.text)
    if "history" not in st.session_state:
        st.session_state.history = []
    result = get_agent().run_sync(clause.text, message_history=st.session_state.history)
    st.session_state.history = result.all_messages()
    st.write(result.output)
    if st.button("Shorter"):
        short = get_client().chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": f"One sentence: {result.output}"}],
        )
        st.write(short.choices[0].message.content)
