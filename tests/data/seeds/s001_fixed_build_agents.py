# seed 001, FIXED: isolate per-request state and avoid replaying tool calls (verbatim + route)
from autogen import AssistantAgent, UserProxyAgent
from flask import Flask
app = Flask(__name__)
def build_agents():
    assistant = AssistantAgent(
        name="assistant",
        llm_config={"config_list": [{"model": "gpt-4o-mini"}]},
    )
    user_proxy = UserProxyAgent(
        name="user_proxy",
        human_input_mode="NEVER",
        code_execution_config=False,
    )
    return assistant, user_proxy
def handle_request(prompt: str):
    assistant, user_proxy = build_agents()
    # Fresh agents per request => fresh chat history and tool-call tracking
    user_proxy.initiate_chat(assistant, message=prompt)
@app.post("/chat")
def chat():
    handle_request("hello")
    return "ok"
