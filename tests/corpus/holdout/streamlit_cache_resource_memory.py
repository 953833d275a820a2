"""Streamlit app: LlamaIndex workflow agent with a cached chat memory."""
import asyncio

import streamlit as st
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import Memory
from llama_index.llms.openai import OpenAI

from travel.tools import visa_rules, flight_prices


@st.cache_resource
def get_llm() -> OpenAI:
    return OpenAI(model="gpt-4o-mini")


@st.cache_resource
def get_memory() -> Memory:
    return Memory.from_defaults(token_limit=8000)


st.title("Visa & flights helper")

agent = FunctionAgent(tools=[visa_rules, flight_prices], llm=get_llm(), system_prompt="Be precise.")

if question := st.chat_input("Where are you travelling?"):
    st.chat_message("user").write(question)
    answer = asyncio.run(agent.run(user_msg=question, memory=get_memory()))
    st.chat_message("assistant").write(str(answer))

with st.sidebar:
    st.caption("Answers come from the visa-rules and flight-price tools.")
    if st.button("Clear chat"):
        get_memory().reset()
        st.rerun()
