import json

from agents import Runner, add_trace_processor
from autogen import Agent as AG2Agent
from autogen import AssistantAgent, UserProxyAgent, register_function
from celery import shared_task
from fastapi import FastAPI
from flask import Flask, request
from llama_index.core import Settings, set_global_handler
from llama_index.core.callbacks import LlamaDebugHandler, TokenCountingHandler
from strands import Agent as StrandsAgent
from strands.hooks import AfterToolCallEvent

from .observability import JsonlSpanExporter, audit_tool_call, make_case_logger
from .shop import reserve_stock, support_agent
from .warehouse import check_stock

api = FastAPI()
web = Flask(__name__)
planner = AssistantAgent("planner", llm_config={"model": "gpt-4o-mini"})
runner = UserProxyAgent("runner", human_input_mode="NEVER", code_execution_config=False)
outreach = StrandsAgent(system_prompt="Draft outreach emails.", tools=[check_stock])


# LlamaIndex: a debug handler added to the global callback manager on every traced request
@api.post("/chat")
async def chat(message: str, debug: bool = False):
    if debug:
        Settings.callback_manager.add_handler(LlamaDebugHandler(print_trace_on_end=True))  # error: DUP401
    return {"ok": True}


# LlamaIndex: the global handler re-installed (and re-instrumented) per request
@web.post("/ask")
def ask():
    if request.json.get("trace"):
        set_global_handler("arize_phoenix")  # error: DUP401
    return {"ok": True}


# AG2: tools registered on module-level agents inside a Flask route
@web.post("/plan/<warehouse>")
def plan(warehouse: str):
    register_function(check_stock, caller=planner, executor=runner, description="stock level")  # error: DUP401
    return runner.initiate_chat(planner, message=request.json["goal"]).summary


# Strands: an audit hook added to the shared agent on every request
@api.post("/outreach")
async def send_outreach(lead_id: str):
    outreach.hooks.add_callback(AfterToolCallEvent, audit_tool_call)  # error: DUP401
    return str(await outreach.invoke_async(f"Write to lead {lead_id}"))


# OpenAI Agents SDK: a trace processor appended to the global provider per Celery job
@shared_task
def nightly_report(day: str) -> str:
    add_trace_processor(JsonlSpanExporter(f"traces/{day}.jsonl"))  # error: DUP401
    return Runner.run_sync(support_agent, f"Summarise the orders of {day}").final_output


# AG2: a reply logger per evaluation case, inside the loop that runs the chat
def evaluate(cases: list[dict]) -> None:
    for case in cases:
        planner.register_reply([AG2Agent, None], make_case_logger(case["id"]), position=0)  # error: DUP401
        runner.initiate_chat(planner, message=case["prompt"], clear_history=True)


# LlamaIndex: a per-turn helper (it runs the agent) adding a token counter each time
def answer(agent, question: str) -> str:
    Settings.callback_manager.add_handler(TokenCountingHandler())  # error: DUP401
    return str(agent.chat(question))


def reserve(sku: str) -> str:
    return json.dumps(reserve_stock(sku))
