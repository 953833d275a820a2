from agents import Agent, Runner
from agents.mcp import MCPServerStreamableHttp
from autogen import AssistantAgent
from celery import shared_task
from fastapi import FastAPI, Request
from flask import Flask, request
from llama_index.core import Settings, VectorStoreIndex
from llama_index.llms.openai import OpenAI as LlamaOpenAI
from openai import AsyncOpenAI
from pydantic_ai import Agent as PydanticAgent

app = FastAPI()
web = Flask(__name__)
client = AsyncOpenAI()
analyst = Agent(name="analyst", instructions="Answer questions about the data.")
triage = Agent(name="triage", instructions="Route the question.", handoffs=[analyst])
writer = PydanticAgent("openai:gpt-4o-mini", instructions="Write short answers.")
reviewer = AssistantAgent("reviewer", llm_config={"model": "gpt-4o-mini"})
index = VectorStoreIndex([])


async def answer(question: str, token: str):
    # runs per request (the handler below calls it) and hands this request's MCP connection
    # to the module-level agent: a concurrent request lists and calls tools through it
    async with MCPServerStreamableHttp(params={"url": "http://tools", "headers": {"auth": token}}) as server:
        triage.handoffs = [analyst]  # the same value every time: no finding
        analyst.mcp_servers = [server]  # error: DUP104
        return await Runner.run(triage, question)


@app.post("/ask")
async def ask(payload: dict):
    return (await answer(payload["question"], payload["token"])).final_output


@app.post("/persona")
async def persona(payload: dict):
    analyst.instructions = f"You are talking to {payload['name']}."  # error: DUP104
    return (await Runner.run(analyst, payload["question"])).final_output


@app.post("/byo-key")
async def byo_key(payload: dict):
    client.api_key = payload["api_key"]  # error: DUP104
    return await client.responses.create(model="gpt-4o-mini", input=payload["question"])


@app.post("/model")
async def choose_model(request: Request, payload: dict):
    request.app.state.agent.model = payload["model"]  # error: DUP104
    writer.model = payload["model"]  # error: DUP104
    return (await writer.run(payload["question"])).output


@app.post("/tools")
async def add_user_tool(payload: dict):
    tool = make_tool(payload["user_id"])
    analyst.tools.append(tool)  # error: DUP104
    return (await Runner.run(analyst, payload["question"])).final_output


@app.post("/clone")
async def clone_and_extend(payload: dict):
    agent = analyst.clone(instructions="Help this user.")
    agent.tools.append(make_tool(payload["user_id"]))  # error: DUP104
    return (await Runner.run(agent, payload["question"])).final_output


def make_tool(user_id: str):
    return user_id


@web.post("/query")
def query():
    # LlamaIndex reads the process-wide Settings whenever a call is not given its own llm
    Settings.llm = LlamaOpenAI(model=request.json["model"])  # error: DUP104
    return str(index.as_query_engine().query(request.json["question"]))


@shared_task
def review(document: str, tone: str):
    reviewer.update_system_message(f"Review in a {tone} tone.")  # error: DUP104
    return reviewer.generate_reply(messages=[{"role": "user", "content": document}])


class InstructedAgent:
    """A wrapper mounted once at an endpoint (CopilotKit/CopilotKit#5659's shape): it patches
    the agent it wraps for the length of one run and puts the old value back."""

    def __init__(self, agent):
        self.agent = agent

    async def run(self, messages, instructions: str):
        saved = self.agent.default_options["instructions"]
        self.agent.default_options["instructions"] = instructions  # error: DUP104
        try:
            async for update in self.agent.run_stream(messages):
                yield update
        finally:
            self.agent.default_options["instructions"] = saved
