from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.prebuilt import create_react_agent
from openai import AsyncOpenAI

from .tools import tools

DB_URI = "postgresql://app:app@db:5432/app"


@asynccontextmanager
async def lifespan(app: FastAPI):
    async with AsyncPostgresSaver.from_conn_string(DB_URI) as saver:
        await saver.setup()
        app.state.openai = AsyncOpenAI()
        app.state.graph = create_react_agent(ChatOpenAI(model="gpt-4o"), tools, checkpointer=saver)
        yield


app = FastAPI(lifespan=lifespan)


@app.post("/threads/{thread_id}/messages")
async def post_message(thread_id: str, request: Request):
    body = await request.json()
    config = {"configurable": {"thread_id": thread_id}}
    state = await request.app.state.graph.ainvoke({"messages": [("user", body["text"])]}, config)
    return {"reply": state["messages"][-1].content}


@app.post("/moderate")
async def moderate(request: Request):
    body = await request.json()
    result = await request.app.state.openai.moderations.create(input=body["text"])
    return {"flagged": result.results[0].flagged}
