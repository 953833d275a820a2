from agents import Agent as OpenAIAgent
from agents import Runner
from celery import shared_task
from fastapi import FastAPI
from flask import Flask, request
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_openai import ChatOpenAI
from llama_index.core.agent.workflow import FunctionAgent
from smolagents import InferenceClientModel, ToolCallingAgent
from strands import Agent

from .prompts import PROMPT
from .tools import (
    calculator, company_search, fetch_returns, fetch_sales, load_optional_tools,
    make_account_tool, search_arxiv, search_news, ticket_tool, workspace_tool,
)

api = FastAPI()
web = Flask(__name__)
TOOLS = [search_arxiv, search_news]
BASE_TOOLS = [fetch_sales, fetch_returns]
model = InferenceClientModel(model_id="Qwen/Qwen2.5-Coder-32B-Instruct")


# Strands: the module-level list gets one more workspace tool per request
@api.post("/research")
async def research(topic: str, workspace: str):
    tools = [*TOOLS, workspace_tool(workspace)]
    return str(await Agent(tools=tools).invoke_async(topic))


# smolagents: a Celery task extends the shared list
@shared_task(acks_late=True)
def weekly_report(region: str, extra: list[str]) -> str:
    base_tools = [*BASE_TOOLS, *load_optional_tools(extra)]
    return ToolCallingAgent(tools=base_tools, model=model).run(f"Sales report for {region}")


# LangChain: the single service instance's tool list grows on every answer
class AssistantService:
    def __init__(self) -> None:
        self.llm = ChatOpenAI(model="gpt-4o-mini")
        self.tools = [calculator, company_search]

    def answer(self, account_id: str, question: str) -> str:
        tools = [*self.tools, make_account_tool(account_id)]
        executor = AgentExecutor(agent=create_tool_calling_agent(self.llm, tools, PROMPT), tools=tools)
        return executor.invoke({"input": question})["output"]


service = AssistantService()


@web.post("/accounts/<account_id>/ask")
def ask(account_id: str):
    return {"answer": service.answer(account_id, request.json["question"])}


# OpenAI Agents SDK: a script loop adds one ticket tool per ticket it processes
def triage(tickets: list[dict]) -> None:
    for ticket in tickets:
        tools = [ticket_tool(ticket["id"]), *TOOLS]
        Runner.run_sync(OpenAIAgent(name="triage", tools=tools), ticket["body"])


# LlamaIndex: a class-level tool list mutated in a per-request helper
class SupportBot:
    tools = [search_news]


async def answer_with_account(account_id: str, question: str) -> str:
    tools = [*SupportBot.tools, make_account_tool(account_id)]
    agent = FunctionAgent(tools=tools)
    return str(await agent.run(question))


# Strands: += on the shared list in a worker task
@shared_task
def research_job(topic: str, workspace: str) -> str:
    tools = [*TOOLS, workspace_tool(workspace)]
    return str(Agent(tools=tools)(topic))
