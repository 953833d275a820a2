# trap: LlamaIndex workflow agents run with .run() and no shared ctx/memory
import asyncio

from fastapi import FastAPI
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.llms.openai import OpenAI

app = FastAPI()
llm = OpenAI(model="gpt-4o-mini")
function_agent = FunctionAgent(tools=[], llm=llm, system_prompt="Help.")
react_agent = ReActAgent(tools=[], llm=llm)
workflow = AgentWorkflow(agents=[function_agent], root_agent="Agent")


@app.post("/chat")
async def chat(payload: dict):
    return str(await function_agent.run(user_msg=payload["message"]))


@app.post("/react")
async def react(payload: dict):
    return str(await react_agent.run(user_msg=payload["message"]))


@app.post("/fanout")
async def fanout(payload: dict):
    results = await asyncio.gather(*(workflow.run(user_msg=m) for m in payload["messages"]))
    return [str(r) for r in results]
