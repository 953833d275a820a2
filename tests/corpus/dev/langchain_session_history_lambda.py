from fastapi import FastAPI
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.tools import Tool
from langchain.agents import AgentExecutor, create_openai_tools_agent
from langchain_openai import ChatOpenAI

from .search import bing_search, internal_search

tools = [
    Tool(name="search", func=internal_search, description="Search the intranet"),
    Tool(name="search", func=bing_search, description="Search the public web"),
]
prompt = ChatPromptTemplate.from_messages([
    ("system", "You are a helpful research assistant."),
    MessagesPlaceholder("history"),
    ("human", "{input}"),
    MessagesPlaceholder("agent_scratchpad"),
])
executor = AgentExecutor(agent=create_openai_tools_agent(ChatOpenAI(model="gpt-4o"), tools, prompt), tools=tools)

chat_history = InMemoryChatMessageHistory()
with_history = RunnableWithMessageHistory(
    executor,
    lambda session_id: chat_history,
    input_messages_key="input",
    history_messages_key="history",
)

app = FastAPI()


@app.post("/research/{session_id}")
async def research(session_id: str, question: str):
    out = await with_history.ainvoke(
        {"input": question}, config={"configurable": {"session_id": session_id}}
    )
    return {"answer": out["output"]}
