"""Sanic API over a compiled LangGraph graph with a Postgres checkpointer."""
import asyncio

from sanic import Sanic, json
from langchain_anthropic import ChatAnthropic
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.prebuilt import create_react_agent

from tutoring.tools import lookup_lesson, grade_answer

app = Sanic("tutor")
DB_URI = "postgresql://tutor@db/checkpoints"


@app.before_server_start
async def setup(app, _loop):
    app.ctx.saver_cm = AsyncPostgresSaver.from_conn_string(DB_URI)
    saver = await app.ctx.saver_cm.__aenter__()
    await saver.setup()
    app.ctx.graph = create_react_agent(
        ChatAnthropic(model="claude-3-5-haiku-latest"),
        tools=[lookup_lesson, grade_answer],
        checkpointer=saver,
    )


@app.post("/students/<student_id>/ask")
async def ask(request, student_id: str):
    config = {"configurable": {"thread_id": f"student-{student_id}"}}
    state = await request.app.ctx.graph.ainvoke({"messages": [("user", request.json["q"])]}, config)
    return json({"reply": state["messages"][-1].content})


@app.post("/classes/<class_id>/broadcast")
async def broadcast(request, class_id: str):
    graph = request.app.ctx.graph
    students = request.json["students"]
    runs = [
        graph.ainvoke(
            {"messages": [("user", request.json["q"])]},
            {"configurable": {"thread_id": f"student-{sid}"}},
        )
        for sid in students
    ]
    states = await asyncio.gather(*runs)
    return json({sid: s["messages"][-1].content for sid, s in zip(students, states)})
