import streamlit as st
from smolagents import CodeAgent, DuckDuckGoSearchTool, LiteLLMModel, VisitWebpageTool

st.set_page_config(page_title="Research assistant", page_icon="🔎")
st.title("Research assistant")


@st.cache_resource
def load_agent() -> CodeAgent:
    model = LiteLLMModel(model_id="gpt-4o-mini")
    return CodeAgent(
        tools=[DuckDuckGoSearchTool(), VisitWebpageTool()],
        model=model,
        max_steps=6,
        additional_authorized_imports=["pandas"],
    )


agent = load_agent()

if "history" not in st.session_state:
    st.session_state.history = []

for role, text in st.session_state.history:
    with st.chat_message(role):
        st.markdown(text)

if prompt := st.chat_input("What should I look up?"):
    st.session_state.history.append(("user", prompt))
    with st.chat_message("user"):
        st.markdown(prompt)
    with st.spinner("Researching..."):
        answer = agent.run(prompt, reset=False)
    st.session_state.history.append(("assistant", str(answer)))
    with st.chat_message("assistant"):
        st.markdown(str(answer))
