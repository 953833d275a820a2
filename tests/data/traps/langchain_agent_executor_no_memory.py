# trap: AgentExecutor without memory keeps no state between invocations
from fastapi import FastAPI
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_openai import ChatOpenAI

app = FastAPI()
llm = ChatOpenAI(model="gpt-4o-mini")
agent = create_tool_calling_agent(llm, tools=[], prompt=PROMPT)
executor = AgentExecutor(agent=agent, tools=[])


@app.post("/chat")
async def chat(payload: dict):
    return await executor.ainvoke({"input": payload["message"], "chat_history": payload.get("history", [])})
