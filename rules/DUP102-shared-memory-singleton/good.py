from fastapi import FastAPI
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_openai import ChatOpenAI
from llama_index.core.agent import ReActAgent
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.workflow import Context

app = FastAPI()
session_memory_store = {}
workflow_agent = FunctionAgent(tools=[], llm=None)
histories: dict[str, InMemoryChatMessageHistory] = {}


def get_memory(session_id: str):
    # session-scoped memory lookup
    if session_id not in session_memory_store:
        session_memory_store[session_id] = ChatMemoryBuffer.from_defaults(token_limit=4000)
    return session_memory_store[session_id]


@app.post("/chat/{session_id}")
async def chat(session_id: str, payload: dict):
    agent = ReActAgent.from_tools(tools=[], memory=get_memory(session_id))
    return await agent.achat(payload["message"])


@app.post("/fresh")
async def fresh(payload: dict):
    memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
    agent = ReActAgent.from_tools(tools=[], memory=memory)
    return await agent.achat(payload["message"])


@app.post("/workflow")
async def workflow(payload: dict):
    ctx = Context(workflow_agent)  # a context per request
    return await workflow_agent.run(user_msg=payload["message"], ctx=ctx)


def get_history(session_id: str) -> InMemoryChatMessageHistory:
    return histories.setdefault(session_id, InMemoryChatMessageHistory())


# the history getter looks the history up by the session id: one per conversation
assistant = RunnableWithMessageHistory(ChatOpenAI(model="gpt-4o"), lambda session_id: get_history(session_id))
demo_history = InMemoryChatMessageHistory()
# a getter that ignores the session, but only the command-line demo below runs this wrapper
demo = RunnableWithMessageHistory(ChatOpenAI(model="gpt-4o"), lambda session_id: demo_history)


@app.post("/assistant/{session_id}")
async def ask(session_id: str, question: str):
    return await assistant.ainvoke(question, config={"configurable": {"session_id": session_id}})


if __name__ == "__main__":
    demo.invoke("hello", config={"configurable": {"session_id": "cli"}})
    cli_memory = ChatMemoryBuffer.from_defaults(token_limit=1000)
    ReActAgent.from_tools(tools=[], memory=cli_memory).chat("hello")
