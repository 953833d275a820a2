# trap: per-session stores keyed by the session id
from autogen import AssistantAgent, UserProxyAgent
from fastapi import FastAPI
from llama_index.core.memory import ChatMemoryBuffer
from strands import Agent

app = FastAPI()
agents: dict[str, Agent] = {}
memories = {}


def get_agent(session_id: str) -> Agent:
    if session_id not in agents:
        agents[session_id] = Agent(system_prompt="support")
    return agents[session_id]


@app.post("/chat/{session_id}")
def chat(session_id: str, payload: dict):
    agent = get_agent(session_id)
    memory = memories.setdefault(session_id, ChatMemoryBuffer.from_defaults(token_limit=4000))
    return {"reply": str(agent(payload["message"])), "history": memory.get()}
