import functools

from autogen import AssistantAgent, UserProxyAgent
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from strands import Agent

app = FastAPI()
agent = ReActAgent.from_tools(tools=[])  # error: DUP101
assistant = AssistantAgent(name="assistant", llm_config={"model": "gpt-4o-mini"})  # error: DUP101
user_proxy = UserProxyAgent(name="user_proxy", human_input_mode="NEVER")  # error: DUP101


@app.post("/chat")
async def chat(payload: dict):
    return await agent.achat(payload["message"])


def handle_request(prompt: str):
    user_proxy.initiate_chat(assistant, message=prompt)


@app.post("/autogen")
def autogen_route(payload: dict):
    handle_request(payload["prompt"])


@functools.lru_cache(maxsize=1)
def get_strands_agent():
    return Agent(system_prompt="You are a support bot.")  # error: DUP101


@app.post("/strands")
def strands_route(payload: dict):
    bot = get_strands_agent()
    return {"reply": str(bot(payload["message"]))}
