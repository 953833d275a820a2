from fastapi import FastAPI
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.prebuilt import create_react_agent
from pydantic import BaseModel

from .tools import get_balance, list_transactions

llm = ChatOpenAI(model="gpt-4o", temperature=0)
checkpointer = MemorySaver()
bank_graph = create_react_agent(llm, [get_balance, list_transactions], checkpointer=checkpointer)

app = FastAPI()


class ChatTurn(BaseModel):
    thread_id: str
    customer_id: str
    text: str


@app.post("/bank/chat")
async def bank_chat(turn: ChatTurn):
    config = {"configurable": {"thread_id": turn.thread_id, "customer_id": turn.customer_id}}
    state = await bank_graph.ainvoke({"messages": [HumanMessage(turn.text)]}, config=config)
    return {"reply": state["messages"][-1].content}


@app.get("/bank/chat/{thread_id}")
async def history(thread_id: str):
    snapshot = await bank_graph.aget_state({"configurable": {"thread_id": thread_id}})
    return {"messages": [m.content for m in snapshot.values.get("messages", [])]}
