# seed 001, BROKEN: shared state reused across concurrent/scaled requests
# (verbatim; the comment "called by multiple workers / requests" made concrete with a route)
from autogen import AssistantAgent, UserProxyAgent
from flask import Flask
app = Flask(__name__)
assistant = AssistantAgent(  # error: DUP101
    name="assistant",
    llm_config={"config_list": [{"model": "gpt-4o-mini"}]},
)
user_proxy = UserProxyAgent(  # error: DUP101
    name="user_proxy",
    human_input_mode="NEVER",
    code_execution_config=False,
)
# This gets called by multiple workers / requests
def handle_request(prompt: str):
    # Same agents, same chat history, same tool-call context reused
    user_proxy.initiate_chat(assistant, message=prompt)
@app.post("/chat")
def chat():
    handle_request("hello")
    return "ok"
