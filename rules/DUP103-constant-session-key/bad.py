from agents import Agent, Runner, SQLiteSession
from fastapi import FastAPI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.prebuilt import create_react_agent
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.storage.chat_store import SimpleChatStore

app = FastAPI()
graph = create_react_agent("openai:gpt-4o-mini", tools=[], checkpointer=MemorySaver())
assistant = Agent(name="assistant", instructions="Help the user.")
chat_store = SimpleChatStore()
CONFIG = {"configurable": {"thread_id": "default"}}  # error: DUP103


@app.post("/chat")
async def chat(payload: dict):
    config = {"configurable": {"thread_id": "1"}}  # error: DUP103
    return await graph.ainvoke({"messages": [("user", payload["message"])]}, config)


@app.post("/chat-module-config")
async def chat_module_config(payload: dict):
    return await graph.ainvoke({"messages": [("user", payload["message"])]}, CONFIG)


@app.post("/sdk")
async def sdk(payload: dict):
    session = SQLiteSession(session_id="global", db_path="chats.db")  # error: DUP103
    return await Runner.run(assistant, payload["message"], session=session)


@app.post("/llama")
async def llama(payload: dict):
    memory = ChatMemoryBuffer.from_defaults(chat_store=chat_store, chat_store_key="user1")  # error: DUP103
    return memory.get()


@app.post("/stream")
async def stream(payload: dict):
    async for chunk in graph.astream({"messages": [("user", payload["message"])]},
                                     {"configurable": {"thread_id": "main", "user_id": payload["user"]}}):  # error: DUP103
        yield chunk


@app.post("/whatsapp")
async def whatsapp(payload: dict):
    session = SQLiteSession("whatsapp", "conversations.db")  # error: DUP103
    return await Runner.run(assistant, payload["text"], session=session)


@app.post("/llama-sql")
async def llama_sql(payload: dict):
    memory = Memory.from_defaults(session_id="support", async_database_uri="sqlite+aiosqlite:///memory.db")  # error: DUP103
    return await memory.aget()
