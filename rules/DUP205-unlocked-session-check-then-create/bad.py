from agents import Agent, Runner, SQLiteSession
from aiohttp import web
from fastapi import FastAPI
from langgraph.checkpoint.memory import MemorySaver
from llama_index.core.agent import ReActAgent
from openai import AsyncOpenAI

app = FastAPI()
client = AsyncOpenAI()
assistant = Agent(name="assistant", instructions="Help the user.")
sessions: dict[str, SQLiteSession] = {}
AGENTS: dict[str, ReActAgent] = {}
threads: dict[str, str] = {}
checkpointer = MemorySaver()


async def open_session(session_id: str) -> SQLiteSession:
    session = SQLiteSession(session_id, "chats.db")
    await session.get_items(limit=1)  # warm the connection
    return session


@app.post("/chat/{session_id}")
async def chat(session_id: str, payload: dict):
    if sessions.get(session_id) is None:
        sessions[session_id] = await open_session(session_id)  # error: DUP205
    return await Runner.run(assistant, payload["message"], session=sessions[session_id])


async def build_agent(user_id: str) -> ReActAgent:
    profile = await client.responses.create(model="gpt-4o-mini", input=f"Summarise user {user_id}")
    return ReActAgent.from_tools([], context=profile.output_text)


@app.post("/agent/{user_id}")
async def agent_chat(user_id: str, payload: dict):
    agent = AGENTS.get(user_id)
    if agent is None:
        agent = await build_agent(user_id)
        AGENTS[user_id] = agent  # error: DUP205
    return await agent.achat(payload["message"])


async def thread_for(request: web.Request) -> str:
    user = request.match_info["user"]
    if user in threads:
        return threads[user]
    thread = await client.beta.threads.create()
    threads[user] = thread.id  # error: DUP205
    return thread.id


class ConversationSession:
    """A lazily created server-side conversation (openai/openai-agents-python#3820's shape)."""

    def __init__(self):
        self._conversation_id: str | None = None

    async def conversation_id(self) -> str:
        if self._conversation_id is None:
            conversation = await client.conversations.create()
            self._conversation_id = conversation.id  # error: DUP205
        return self._conversation_id
