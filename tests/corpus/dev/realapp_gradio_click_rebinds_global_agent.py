# Case from a public application, rewritten in our own words (no code copied):
# hoannc0506/Youtube-Chatbot, ui.py (commit 0288d0a32bc59822b10091834f3bd6d136ac535e): a Gradio
# click handler builds an agent for the video the visitor entered and stores it in a module
# global; the message handler chats with that global, so every visitor talks to whichever
# video was analysed last and shares its memory.
import gradio as gr

from video_agents import agent_for_video

session_agent = None


def start_session(video_link: str):
    global session_agent
    session_agent = agent_for_video(video_link)
    return gr.update(visible=False), gr.update(visible=True)


def ask(question: str, turns: list):
    answer = session_agent.chat(question)
    turns.append((question, answer.response))
    return "", turns


with gr.Blocks() as ui:
    with gr.Row(visible=True) as intro:
        link = gr.Textbox(label="Video link")
        go = gr.Button("Analyse")
    with gr.Row(visible=False) as conversation:
        transcript = gr.Chatbot()
        box = gr.Textbox(placeholder="Ask about the video")
        box.submit(ask, inputs=[box, transcript], outputs=[box, transcript])
    go.click(start_session, inputs=[link], outputs=[intro, conversation])

ui.launch()
