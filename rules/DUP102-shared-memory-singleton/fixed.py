from fastapi import FastAPI
from langchain.memory import ConversationBufferMemory
from llama_index.core.agent import ReActAgent
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.workflow import Context
from celery import Celery

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
