# The shape of microsoft/autogen#6088: a per-session agent factory spreads a module-level
# configuration dict that already holds a memory object, so every session's "new" agent
# shares that one memory.
from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import ListMemory, MemoryContent, MemoryMimeType
from autogen_ext.models.openai import OpenAIChatCompletionClient
from fastapi import FastAPI

api = FastAPI()
client = OpenAIChatCompletionClient(model="gpt-4o-mini")

PERSONAS = {
    "coach": {
        "system_message": "You are a running coach.",
        "model_client": client,
        "memory": [ListMemory(name="coach_notes")],
    },
    "chef": {
        "system_message": "You are a chef.",
        "model_client": client,
    },
}


def persona_agent(persona: str, session_id: str) -> AssistantAgent:
    return AssistantAgent(name=f"{persona}_{session_id}", **PERSONAS[persona])


@api.post("/talk/{persona}/{session_id}")
async def talk(persona: str, session_id: str, payload: dict):
    agent = persona_agent(persona, session_id)
    for memory in agent._memory or []:
        await memory.add(MemoryContent(content=payload["message"], mime_type=MemoryMimeType.TEXT))
    result = await agent.run(task=payload["message"])
    return {"reply": result.messages[-1].content}
