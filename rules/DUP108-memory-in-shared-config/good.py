import copy

from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import ListMemory
from autogen_ext.models.openai import OpenAIChatCompletionClient
from fastapi import FastAPI

app = FastAPI()
model_client = OpenAIChatCompletionClient(model="gpt-4o-mini")

# configuration only: a shared model client is stateless
BASE_CONFIG = {"name": "assistant", "model_client": model_client, "system_message": "Help."}
WITH_MEMORY = {"name": "assistant", "model_client": model_client, "memory": [ListMemory()]}
LLM_CONFIG = {"config_list": [{"model": "gpt-4o-mini"}], "temperature": 0}


@app.post("/chat/{session_id}")
async def chat(session_id: str, payload: dict):
    # a memory built for this request
    agent = AssistantAgent(**BASE_CONFIG, memory=[ListMemory()])
    return await agent.run(task=payload["message"])


@app.post("/deep/{session_id}")
async def deep(session_id: str, payload: dict):
    # a deep copy gives this agent its own memory
    agent = AssistantAgent(**copy.deepcopy(WITH_MEMORY))
    return await agent.run(task=payload["message"])


def make_agent() -> AssistantAgent:
    # built once at start-up by the caller (no session, no request)
    return AssistantAgent(**WITH_MEMORY)


if __name__ == "__main__":
    import asyncio

    asyncio.run(make_agent().run(task="hello"))
