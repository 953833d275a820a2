"""Gradio chat: one Strands agent per browser session, held in gr.State."""
import gradio as gr
from strands import Agent
from strands.models.openai import OpenAIModel

from garden.tools import plant_info, watering_schedule

model = OpenAIModel(model_id="gpt-4o-mini")


def new_agent() -> Agent:
    return Agent(
        model=model,
        tools=[plant_info, watering_schedule],
        system_prompt="You are a gardening helper.",
        callback_handler=None,
    )


def chat(message: str, history: list, agent: Agent | None):
    if agent is None:
        agent = new_agent()
    reply = str(agent(message))
    history = history + [{"role": "user", "content": message}, {"role": "assistant", "content": reply}]
    return "", history, agent


def clear():
    return [], None


with gr.Blocks() as demo:
    agent_state = gr.State(None)
    chatbot = gr.Chatbot(type="messages")
    box = gr.Textbox(label="Ask the garden helper")
    box.submit(chat, [box, chatbot, agent_state], [box, chatbot, agent_state])
    gr.Button("New conversation").click(clear, None, [chatbot, agent_state])

if __name__ == "__main__":
    demo.launch()
