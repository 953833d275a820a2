import asyncio
from contextlib import asynccontextmanager
from functools import lru_cache

from agents import Agent, Runner
from agents.mcp import MCPServerStreamableHttp
from fastapi import FastAPI, Request
from llama_index.core import Settings, VectorStoreIndex
from llama_index.llms.openai import OpenAI as LlamaOpenAI
from pydantic_ai import Agent as PydanticAgent
from smolagents import CodeAgent, InferenceClientModel

analyst = Agent(name="analyst", instructions="Answer questions about the data.")
writer = PydanticAgent("openai:gpt-4o-mini", instructions="Write short answers.")
lock = asyncio.Lock()
index = VectorStoreIndex([])

# configured once, at import
Settings.llm = LlamaOpenAI(model="gpt-4o-mini")
analyst.model = "gpt-4o-mini"


@asynccontextmanager
async def lifespan(app: FastAPI):
    # start-up: runs once, before any request
    app.state.agent = Agent(name="support", instructions="Help.")
    app.state.agent.instructions = load_prompt()
    yield


app = FastAPI(lifespan=lifespan)


def load_prompt() -> str:
    return "Help the customer."


@app.post("/ask")
async def ask(payload: dict):
    async with MCPServerStreamableHttp(params={"url": "http://tools"}) as server:
        # a per-request copy that owns its list of servers
        agent = analyst.clone(mcp_servers=[server])
        return (await Runner.run(agent, payload["question"])).final_output


@app.post("/clone-tools")
async def clone_tools(payload: dict):
    # the clone gets a list of its own
    agent = analyst.clone(tools=[*analyst.tools])
    agent.tools.append(payload["tool"])
    return (await Runner.run(agent, payload["question"])).final_output


@app.post("/persona")
async def persona(payload: dict):
    # built for this request: nobody else sees it
    agent = Agent(name="persona", instructions="Help.")
    agent.instructions = f"You are talking to {payload['name']}."
    return (await Runner.run(agent, payload["question"])).final_output


@app.post("/write")
async def write(payload: dict):
    # pydantic-ai takes per-run instructions; nothing on the shared agent changes
    return (await writer.run(payload["question"], instructions=f"Answer {payload['name']}.")).output


@app.post("/query")
async def query(payload: dict):
    # the same constant on every request (the labelled Youtube-Chatbot get_agent() shape)
    Settings.llm = LlamaOpenAI(model="gpt-4o-mini")
    engine = index.as_query_engine(llm=LlamaOpenAI(model=payload["model"]))
    return str(engine.query(payload["question"]))


@app.post("/locked")
async def locked(payload: dict):
    # deliberate: one request at a time changes and runs the shared agent
    async with lock:
        analyst.instructions = f"Answer {payload['name']}."
        return (await Runner.run(analyst, payload["question"])).final_output


@app.post("/smol")
async def smol(payload: dict):
    agent = CodeAgent(tools=[], model=InferenceClientModel())
    agent.prompt_templates["system_prompt"] = payload["prompt"]
    return agent.run(payload["question"])


@lru_cache
def get_config() -> dict:
    return {"instructions": "Help."}


@app.post("/config")
async def config(request: Request, payload: dict):
    # a per-request dict, not an agent's configuration
    options = dict(get_config())
    options["instructions"] = payload["instructions"]
    return options


class Wrapper:
    """Holds an agent given to it, and passes the instructions with the run."""

    def __init__(self, agent):
        self.agent = agent

    async def run(self, messages, instructions: str):
        async for update in self.agent.run_stream(messages, options={"instructions": instructions}):
            yield update
