import asyncio
import os

from agents import Agent, Runner, SQLiteSession
from dupguard.runtime import SessionRegistry, asession_lease, store_from_env
from fastapi import FastAPI
from langchain.memory import ConversationBufferMemory
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_openai import ChatOpenAI
from llama_index.core.agent import ReActAgent
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore
from llama_index.core.workflow import Context
from celery import Celery
from pydantic import BaseModel

_store = store_from_env()
_chat_store = SQLAlchemyChatStore(
    table_name="llama_index_memory",
    async_database_uri=os.environ.get("DUPGUARD_HISTORY_URL", "sqlite+aiosqlite:///chat_history.db"),
)

app = FastAPI()
celery_app = Celery("jobs")


def make_memory():
    return ChatMemoryBuffer.from_defaults(token_limit=4000)


def make_agent():
    return ReActAgent.from_tools(tools=[], memory=make_memory())


def make_history():
    return ChatMemoryBuffer.from_defaults(token_limit=2000)


def make_lc_memory():
    return ConversationBufferMemory(memory_key="chat_history", return_messages=True)


workflow_agent = FunctionAgent(tools=[], llm=None)


def make_shared_ctx():
    return Context(workflow_agent)
# the wrapper is shared by design, but its history getter ignores the session id
lc_history_sessions = SessionRegistry(lambda _session_id: InMemoryChatMessageHistory())
assistant = RunnableWithMessageHistory(ChatOpenAI(model="gpt-4o"), lambda session_id: lc_history_sessions.get(session_id))
support_history_sessions = SessionRegistry(lambda _session_id: InMemoryChatMessageHistory())
desk = Agent(name="desk", instructions="Refund orders.")


def make_conversations(session_id):
    return SQLiteSession(session_id, "conversations.db")


def make_helper_memory(session_id):
    return Memory.from_defaults(session_id=session_id, token_limit=3000, chat_store=_chat_store)


def support_history_for(session_id: str):
    support_history = support_history_sessions.get(session_id)
    return support_history


support = RunnableWithMessageHistory(ChatOpenAI(model="gpt-4o"), get_session_history=support_history_for)


@app.post("/chat")
async def chat(payload: dict):
    agent = make_agent()
    return await agent.achat(payload["message"])


@app.post("/fresh-agent")
async def fresh_agent(payload: dict):
    history = make_history()
    # a new agent per request, but every request writes to the same memory
    per_request = ReActAgent.from_tools(tools=[], memory=history)
    return await per_request.achat(payload["message"])


@celery_app.task
def summarize(text: str):
    lc_memory = make_lc_memory()
    lc_memory.save_context({"input": text}, {"output": "ok"})


@app.post("/workflow")
async def workflow(payload: dict):
    shared_ctx = make_shared_ctx()
    return await workflow_agent.run(user_msg=payload["message"], ctx=shared_ctx)


@app.post("/assistant/{session_id}")
async def ask(session_id: str, question: str):
    config = {"configurable": {"session_id": session_id}}
    return await assistant.ainvoke(question, config=config)


@app.post("/support/{session_id}")
def support_turn(session_id: str, question: str):
    return support.invoke(question, config={"configurable": {"session_id": session_id}})


# per user: the SDK's session keyed by the body's user id, in the same database file
class Turn(BaseModel):
    user_id: str
    message: str


@app.post("/desk")
async def desk_turn(turn: Turn):
    conversations = make_conversations(turn.user_id)
    async with asession_lease(_store, turn.user_id):
        result = await Runner.run(desk, turn.message, session=conversations)
        return result.final_output


# a fan-out: each task gets a session of its own
@app.post("/desk/batch")
async def desk_batch(turn: Turn, messages: list[str]):
    results = await asyncio.gather(*(Runner.run(desk, m, session=SQLiteSession("support")) for m in messages))
    return [r.final_output for r in results]


# per user across workers: LlamaIndex's Memory on a SQL store replaces the in-process buffer
@app.post("/helper/{user_id}")
async def helper(user_id: str, message: str):
    helper_memory = make_helper_memory(user_id)
    async with asession_lease(_store, user_id):
        return str(await workflow_agent.run(user_msg=message, memory=helper_memory))
