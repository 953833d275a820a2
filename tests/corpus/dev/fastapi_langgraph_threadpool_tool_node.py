from concurrent.futures import ThreadPoolExecutor, as_completed

from fastapi import FastAPI
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from inventory.tools import adjust_stock, get_stock, list_orders

TOOLS = {t.name: t for t in (adjust_stock, get_stock, list_orders)}
llm = ChatOpenAI(model="gpt-4o").bind_tools(list(TOOLS.values()))
pool = ThreadPoolExecutor(max_workers=4)


def call_model(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}


def run_tools(state: MessagesState):
    last = state["messages"][-1]
    out = []
    futures = {pool.submit(TOOLS[c["name"]].invoke, c["args"]): c for c in last.tool_calls}
    for fut in as_completed(futures):
        call = futures[fut]
        out.append(ToolMessage(content=str(fut.result()), tool_call_id=call["id"]))
    return {"messages": out}


def route(state: MessagesState):
    return "tools" if state["messages"][-1].tool_calls else END


builder = StateGraph(MessagesState)
builder.add_node("model", call_model)
builder.add_node("tools", run_tools)
builder.add_edge(START, "model")
builder.add_conditional_edges("model", route, ["tools", END])
builder.add_edge("tools", "model")
graph = builder.compile(checkpointer=MemorySaver())

app = FastAPI()


@app.post("/inventory/chat")
def inventory_chat(text: str):
    config = {
        "configurable": {
            "thread_id": "inventory",
        }
    }
    result = graph.invoke({"messages": [HumanMessage(text)]}, config)
    return {"reply": result["messages"][-1].content}
