from agents import Agent, Runner, SQLiteSession
from fastapi import FastAPI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.prebuilt import create_react_agent
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer, Memory

app = FastAPI()
graph = create_react_agent("openai:gpt-4o-mini", tools=[], checkpointer=MemorySaver())
assistant = Agent(name="assistant", instructions="Help the user.")
helper = FunctionAgent(tools=[], system_prompt="Help the user.")


@app.post("/chat/{thread_id}")
async def chat(thread_id: str, payload: dict):
    config = {"configurable": {"thread_id": thread_id}}
    return await graph.ainvoke({"messages": [("user", payload["message"])]}, config)


@app.post("/sdk")
async def sdk(payload: dict):
    session = SQLiteSession(session_id=payload["session_id"], db_path="chats.db")
    return await Runner.run(assistant, payload["message"], session=session)


@app.post("/f-string")
async def f_string(user_id: str, payload: dict):
    config = {"configurable": {"thread_id": f"user-{user_id}"}}
    return await graph.ainvoke({"messages": [("user", payload["message"])]}, config)


def run_eval():
    # an offline evaluation script: one fixed thread is intended
    return graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "eval"}})


if __name__ == "__main__":
    graph.invoke({"messages": [("user", "hello")]}, {"configurable": {"thread_id": "cli"}})


@app.post("/whatsapp/{sender}")
async def whatsapp(sender: str, payload: dict):
    session = SQLiteSession(sender, "conversations.db")
    return await Runner.run(assistant, payload["text"], session=session)


# a memory whose store is its own (LlamaIndex builds an in-memory SQLite for a Memory without
# async_database_uri=/chat_store=, a SimpleChatStore for a ChatMemoryBuffer without chat_store=;
# SQLiteSession defaults to ":memory:"): the constant key names nothing another request sees
@app.post("/private")
async def private(payload: dict):
    memory = Memory.from_defaults(session_id="support", token_limit=4000)
    await helper.run(user_msg=payload["message"], memory=memory)
    scratch = ChatMemoryBuffer.from_defaults(token_limit=1000, chat_store_key="scratch")
    session = SQLiteSession("scratch", ":memory:")
    return scratch.get(), await Runner.run(assistant, payload["message"], session=session)
