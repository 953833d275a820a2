"""Streamlit front end for the pricing assistant (streamlit run app.py)."""
import streamlit as st
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.openai import OpenAI

from pricing.tools import price_tools

st.set_page_config(page_title="Pricing assistant")
st.title("Pricing assistant")

if "messages" not in st.session_state:
    st.session_state.messages = []
if "memory" not in st.session_state:
    st.session_state.memory = ChatMemoryBuffer.from_defaults(token_limit=3000)

llm = OpenAI(model="gpt-4o-mini", temperature=0)
agent = ReActAgent.from_tools(price_tools(), llm=llm, memory=st.session_state.memory)

for m in st.session_state.messages:
    st.chat_message(m["role"]).write(m["content"])

if question := st.chat_input("Ask about a price"):
    st.session_state.messages.append({"role": "user", "content": question})
    st.chat_message("user").write(question)
    with st.spinner("Thinking..."):
        answer = str(agent.chat(question))
    st.session_state.messages.append({"role": "assistant", "content": answer})
    st.chat_message("assistant").write(answer)

with st.sidebar:
    if st.button("New conversation"):
        st.session_state.memory.reset()
        st.session_state.messages = []
        st.rerun()
