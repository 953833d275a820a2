# trap: a compiled LangGraph graph is shared safely; the checkpointer is keyed by thread_id
from fastapi import FastAPI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent

app = FastAPI()
react = create_react_agent("openai:gpt-4o-mini", tools=[], checkpointer=MemorySaver())


def respond(state: MessagesState):
    return {"messages": []}


builder = StateGraph(MessagesState)
builder.add_node("respond", respond)
builder.add_edge(START, "respond")
builder.add_edge("respond", END)
graph = builder.compile()


@app.post("/chat/{thread_id}")
async def chat(thread_id: str, payload: dict):
    config = {"configurable": {"thread_id": thread_id}}
    return await react.ainvoke({"messages": [("user", payload["message"])]}, config)


@app.post("/plain")
async def plain(payload: dict):
    return await graph.ainvoke({"messages": [("user", payload["message"])]})
