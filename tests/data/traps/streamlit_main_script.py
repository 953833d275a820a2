# trap: a Streamlit main script is re-run for every interaction, so its module-level agent
# is not shared between sessions (only st.cache_resource objects are)
import streamlit as st
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer

if "memory" not in st.session_state:
    st.session_state.memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
agent = ReActAgent.from_tools(tools=[], memory=st.session_state.memory)

prompt = st.chat_input("Ask me")
if prompt:
    st.write(agent.chat(prompt).response)
