import asyncio
from contextlib import asynccontextmanager

from a2a.client import A2AClient
from agents import Agent, Runner, SQLiteSession
from dupguard.runtime import SessionRegistry
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent

sessions: dict[str, SQLiteSession] = {}
histories: dict[str, list] = {}
pending: dict[str, asyncio.Task] = {}
agent_clients: dict[str, A2AClient] = {}
agents: dict[str, ReActAgent] = {}
sessions_lock = asyncio.Lock()
assistant = Agent(name="assistant", instructions="Help the user.")
registry = SessionRegistry(lambda session_id: ReActAgent.from_tools([]))


@asynccontextmanager
async def lifespan(app: FastAPI):
    # start-up: runs once
    if sessions.get("system") is None:
        sessions["system"] = await open_session("system")
    yield


app = FastAPI(lifespan=lifespan)


async def open_session(session_id: str) -> SQLiteSession:
    session = SQLiteSession(session_id, "chats.db")
    await session.get_items(limit=1)
    return session


@app.post("/locked/{session_id}")
async def locked(session_id: str, payload: dict):
    async with sessions_lock:
        if sessions.get(session_id) is None:
            sessions[session_id] = await open_session(session_id)
    return await Runner.run(assistant, payload["message"], session=sessions[session_id])


@app.post("/history/{session_id}")
async def history(session_id: str, payload: dict):
    # no await between the check and the store: nothing can interleave on the event loop
    if session_id not in histories:
        histories[session_id] = []
    histories[session_id].append(payload["message"])
    return await Runner.run(assistant, histories[session_id])


@app.post("/task/{session_id}")
async def task(session_id: str, payload: dict):
    # the pending task is stored before any await: the second request awaits the same one
    if session_id not in pending:
        pending[session_id] = asyncio.create_task(open_session(session_id))
    session = await pending[session_id]
    return await Runner.run(assistant, payload["message"], session=session)


async def delegate(agent_name: str, url: str, query: str) -> str:
    # a stateless HTTP client per worker: a second copy is just dropped
    if agent_name not in agent_clients:
        agent_clients[agent_name] = await A2AClient.get_client_from_agent_card_url(url)
    return await agent_clients[agent_name].send(query)


@app.post("/registry/{session_id}")
async def via_registry(session_id: str, payload: dict):
    async with registry.ause(session_id) as agent:
        return await agent.achat(payload["message"])


@app.post("/local")
async def local(payload: dict):
    cache: dict[str, SQLiteSession] = {}
    if cache.get("x") is None:
        cache["x"] = await open_session("x")
    return cache["x"]


async def new_agent(user_id: str) -> ReActAgent:
    # a coroutine function that never awaits runs to its return without giving the loop away
    return ReActAgent.from_tools([], context=f"user {user_id}")


@app.post("/agents/{user_id}")
async def agent_chat(user_id: str, payload: dict):
    if user_id not in agents:
        agents[user_id] = await new_agent(user_id)
    return await agents[user_id].achat(payload["message"])
