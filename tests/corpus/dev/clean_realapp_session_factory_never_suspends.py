# Case from a public repository, rewritten in our own words (no code copied):
# krinya/gen_ai_demo_rag_bot, app/server.py:161-171 and packages/chatbot/main.py:673 at
# 06ddfa104b7fc3afe2c5ed41b470bec1f011316b (bench/real-apps/labels-e.toml). A FastAPI route finds a
# session's chatbot missing and stores `await make_chatbot(...)`, but the factory is an async def
# with no await inside: awaiting it never hands the event loop to another request between the check
# and the store, so two first requests cannot both create one. Quiet.
import uuid

from fastapi import FastAPI
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.prebuilt import create_react_agent

api = FastAPI()
chatbots: dict[str, "RoutingChatbot"] = {}


class RoutingChatbot:
    def __init__(self, session_id: str):
        self.session_id = session_id
        self.graph = create_react_agent(ChatOpenAI(model="gpt-4o-mini"), [], checkpointer=MemorySaver())

    async def reply(self, text: str) -> str:
        config = {"configurable": {"thread_id": self.session_id}}
        state = await self.graph.ainvoke({"messages": [("user", text)]}, config)
        return state["messages"][-1].content


async def make_chatbot(session_id: str) -> RoutingChatbot:
    return RoutingChatbot(session_id)


async def chatbot_for(session_id: str) -> RoutingChatbot:
    if session_id not in chatbots:
        chatbots[session_id] = await make_chatbot(session_id)
    return chatbots[session_id]


@api.post("/chat")
async def chat(message: str, session_id: str | None = None) -> dict:
    session_id = session_id or str(uuid.uuid4())
    bot = await chatbot_for(session_id)
    return {"session_id": session_id, "reply": await bot.reply(message)}
