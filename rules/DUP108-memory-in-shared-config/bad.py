from autogen import ConversableAgent
from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import ListMemory
from autogen_ext.models.openai import OpenAIChatCompletionClient
from fastapi import FastAPI
from langchain.memory import ConversationBufferMemory
from langchain_classic.agents import AgentExecutor
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.agent import ReActAgent

app = FastAPI()
model_client = OpenAIChatCompletionClient(model="gpt-4o-mini")
team_notes = ListMemory()

ASSISTANT_CONFIG = {
    "name": "assistant",
    "model_client": model_client,
    "memory": [ListMemory()],  # error: DUP108
}
REVIEWER_CONFIG = dict(name="reviewer", model_client=model_client, memory=[team_notes])  # error: DUP108
EXECUTOR_DEFAULTS = {"memory": ConversationBufferMemory(), "verbose": False}  # error: DUP108
LLAMA_SETTINGS = {"memory": ChatMemoryBuffer.from_defaults(token_limit=4000)}  # error: DUP108


@app.post("/chat/{session_id}")
async def chat(session_id: str, payload: dict):
    # a new agent per request, but its memory is the one in the config
    agent = AssistantAgent(**ASSISTANT_CONFIG)
    return await agent.run(task=payload["message"])


def reviewer_for(session_id: str) -> AssistantAgent:
    return AssistantAgent(**{**REVIEWER_CONFIG, "name": f"reviewer_{session_id}"})


@app.post("/run")
async def run(payload: dict):
    options = EXECUTOR_DEFAULTS.copy()
    executor = AgentExecutor(agent=payload["agent"], tools=[], **options)
    return await executor.ainvoke({"input": payload["message"]})


def build_llama_agent(user_id: str) -> ReActAgent:
    return ReActAgent.from_tools([], **LLAMA_SETTINGS)


def reply(user_id: str, text: str) -> str:
    agent = ConversableAgent("support", llm_config=False)
    return agent.generate_reply(messages=[{"role": "user", "content": text}])
