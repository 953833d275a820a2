import streamlit as st
from openai import OpenAI
from strands import Agent
from strands.models.openai import OpenAIModel

from recipes.tools import find_recipes, nutrition_facts


@st.cache_resource
def get_openai() -> OpenAI:
    return OpenAI()


def new_agent() -> Agent:
    return Agent(
        model=OpenAIModel(model_id="gpt-4o-mini"),
        system_prompt="You are a cooking assistant.",
        tools=[find_recipes, nutrition_facts],
        callback_handler=None,
    )


st.title("Cooking assistant")
if "agent" not in st.session_state:
    st.session_state.agent = new_agent()

for msg in st.session_state.agent.messages:
    text = " ".join(block.get("text", "") for block in msg["content"])
    if text:
        st.chat_message(msg["role"]).write(text)

if prompt := st.chat_input("What do you want to cook?"):
    st.chat_message("user").write(prompt)
    result = st.session_state.agent(prompt)
    st.chat_message("assistant").write(str(result))

if st.sidebar.button("Describe a photo"):
    img = st.sidebar.text_input("Image URL")
    if img:
        resp = get_openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": img}}]}],
        )
        st.sidebar.write(resp.choices[0].message.content)
