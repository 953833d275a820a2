from flask import Flask, g, jsonify, request
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI

from .tools import calculator, company_search, make_account_tool

PROMPT = ChatPromptTemplate.from_messages([
    ("system", "You are an account manager assistant."),
    ("human", "{input}"),
    ("placeholder", "{agent_scratchpad}"),
])


class AssistantService:
    def __init__(self) -> None:
        self.llm = ChatOpenAI(model="gpt-4o-mini", temperature=0)
        self.tools: list[StructuredTool] = [calculator, company_search]

    def answer(self, account_id: str, question: str) -> str:
        self.tools.extend([make_account_tool(account_id)])
        agent = create_tool_calling_agent(self.llm, self.tools, PROMPT)
        executor = AgentExecutor(agent=agent, tools=self.tools, max_iterations=6)
        return executor.invoke({"input": question})["output"]


app = Flask(__name__)
service = AssistantService()


@app.post("/accounts/<account_id>/ask")
def ask(account_id: str):
    question = request.get_json()["question"]
    g.account_id = account_id
    return jsonify(answer=service.answer(account_id, question))
