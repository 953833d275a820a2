# Case from a public application, rewritten in our own words (no code copied):
# RaoulLetschka/strategist-agent, streamlit_app.py (commit 0a1a3da8282dafb9a9b13c831f8f05320f32ef41):
# the Streamlit page lets each visitor edit the system prompt in the sidebar and writes it to an
# OpenAI Agents SDK agent that another module builds once per process, then streams a run of it:
# a visitor running at the same time gets the other visitor's instructions.
import asyncio

import streamlit as st
from agents import Runner

from market.agents import rivals_agent

DEFAULT_PROMPT = "List the company's closest competitors and compare them."


def sidebar() -> None:
    st.session_state.setdefault("system_prompt", DEFAULT_PROMPT)
    st.sidebar.text_area("System prompt", key="system_prompt", height=200)
    if st.sidebar.button("Reset prompt"):
        st.session_state.system_prompt = DEFAULT_PROMPT


async def page() -> None:
    sidebar()
    st.title("Competitor analysis")
    rivals_agent.instructions = st.session_state.system_prompt
    st.session_state.setdefault("history", [])
    if question := st.chat_input("Company or ticker"):
        st.session_state.history.append({"role": "user", "content": question})
        streamed = Runner.run_streamed(rivals_agent, st.session_state.history)
        answer = ""
        async for event in streamed.stream_events():
            if event.type == "raw_response_event" and hasattr(event.data, "delta"):
                answer += event.data.delta
        st.session_state.history.append({"role": "assistant", "content": answer})
        st.markdown(answer)


if __name__ == "__main__":
    asyncio.run(page())
