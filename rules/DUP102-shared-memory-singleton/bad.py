import asyncio

from agents import Agent, Runner, SQLiteSession
from fastapi import FastAPI
from langchain.memory import ConversationBufferMemory
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_openai import ChatOpenAI
from llama_index.core.agent import ReActAgent
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.workflow import Context
from celery import Celery
from pydantic import BaseModel

app = FastAPI()
celery_app = Celery("jobs")
memory = ChatMemoryBuffer.from_defaults(token_limit=4000)  # error: DUP102
agent = ReActAgent.from_tools(tools=[], memory=memory)
history = ChatMemoryBuffer.from_defaults(token_limit=2000)  # error: DUP102
lc_memory = ConversationBufferMemory(memory_key="chat_history", return_messages=True)  # error: DUP102
workflow_agent = FunctionAgent(tools=[], llm=None)
shared_ctx = Context(workflow_agent)  # error: DUP102
# the wrapper is shared by design, but its history getter ignores the session id
lc_history = InMemoryChatMessageHistory()  # error: DUP102
assistant = RunnableWithMessageHistory(ChatOpenAI(model="gpt-4o"), lambda session_id: lc_history)
support_history = InMemoryChatMessageHistory()  # error: DUP102
desk = Agent(name="desk", instructions="Refund orders.")
conversations = SQLiteSession("support", "conversations.db")  # error: DUP102
helper_memory = ChatMemoryBuffer.from_defaults(token_limit=3000)  # error: DUP102


def support_history_for(session_id: str):
    return support_history


support = RunnableWithMessageHistory(ChatOpenAI(model="gpt-4o"), get_session_history=support_history_for)


@app.post("/chat")
async def chat(payload: dict):
    return await agent.achat(payload["message"])


@app.post("/fresh-agent")
async def fresh_agent(payload: dict):
    # a new agent per request, but every request writes to the same memory
    per_request = ReActAgent.from_tools(tools=[], memory=history)
    return await per_request.achat(payload["message"])


@celery_app.task
def summarize(text: str):
    lc_memory.save_context({"input": text}, {"output": "ok"})


@app.post("/workflow")
async def workflow(payload: dict):
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
    result = await Runner.run(desk, turn.message, session=conversations)
    return result.final_output


# a fan-out: each task gets a session of its own
@app.post("/desk/batch")
async def desk_batch(turn: Turn, messages: list[str]):
    results = await asyncio.gather(*(Runner.run(desk, m, session=conversations) for m in messages))
    return [r.final_output for r in results]


# per user across workers: LlamaIndex's Memory on a SQL store replaces the in-process buffer
@app.post("/helper/{user_id}")
async def helper(user_id: str, message: str):
    return str(await workflow_agent.run(user_msg=message, memory=helper_memory))
