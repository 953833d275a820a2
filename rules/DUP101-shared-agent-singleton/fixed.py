from autogen import AssistantAgent, UserProxyAgent
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from strands import Agent

app = FastAPI()


def make_agent():
    return ReActAgent.from_tools(tools=[])


def make_assistant():
    return AssistantAgent(name="assistant", llm_config={"model": "gpt-4o-mini"})


def make_user_proxy():
    return UserProxyAgent(name="user_proxy", human_input_mode="NEVER")


@app.post("/chat")
async def chat(payload: dict):
    agent = make_agent()
    return await agent.achat(payload["message"])


def handle_request(prompt: str):
    user_proxy = make_user_proxy()
    assistant = make_assistant()
    user_proxy.initiate_chat(assistant, message=prompt)


@app.post("/autogen")
def autogen_route(payload: dict):
    handle_request(payload["prompt"])


def get_strands_agent():
    return Agent(system_prompt="You are a support bot.")


@app.post("/strands")
def strands_route(payload: dict):
    bot = get_strands_agent()
    return {"reply": str(bot(payload["message"]))}
