import itertools
import json

from agents import Runner, add_trace_processor
from autogen import Agent as AG2Agent
from autogen import AssistantAgent, UserProxyAgent, register_function
from celery import shared_task
from dupguard.runtime import register_once
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
        register_once(Settings.callback_manager, LlamaDebugHandler(print_trace_on_end=True), method="add_handler")
    return {"ok": True}


_ask_set_global_handler_once = itertools.count()  # dupguard: register once


# LlamaIndex: the global handler re-installed (and re-instrumented) per request
@web.post("/ask")
def ask():
    if request.json.get("trace") and next(_ask_set_global_handler_once) == 0:
        set_global_handler("arize_phoenix")
    return {"ok": True}


_plan_register_function_once = itertools.count()  # dupguard: register once


# AG2: tools registered on module-level agents inside a Flask route
@web.post("/plan/<warehouse>")
def plan(warehouse: str):
    if next(_plan_register_function_once) == 0:
        register_function(check_stock, caller=planner, executor=runner, description="stock level")
    return runner.initiate_chat(planner, message=request.json["goal"]).summary


_send_outreach_add_callback_once = itertools.count()  # dupguard: register once


# Strands: an audit hook added to the shared agent on every request
@api.post("/outreach")
async def send_outreach(lead_id: str):
    if next(_send_outreach_add_callback_once) == 0:
        outreach.hooks.add_callback(AfterToolCallEvent, audit_tool_call)
    return str(await outreach.invoke_async(f"Write to lead {lead_id}"))


_nightly_report_add_trace_processor_once = itertools.count()  # dupguard: register once


# OpenAI Agents SDK: a trace processor appended to the global provider per Celery job
@shared_task
def nightly_report(day: str) -> str:
    if next(_nightly_report_add_trace_processor_once) == 0:
        add_trace_processor(JsonlSpanExporter(f"traces/{day}.jsonl"))
    return Runner.run_sync(support_agent, f"Summarise the orders of {day}").final_output


_evaluate_register_reply_once = itertools.count()  # dupguard: register once


# AG2: a reply logger per evaluation case, inside the loop that runs the chat
def evaluate(cases: list[dict]) -> None:
    for case in cases:
        if next(_evaluate_register_reply_once) == 0:
            planner.register_reply([AG2Agent, None], make_case_logger(case["id"]), position=0)
        runner.initiate_chat(planner, message=case["prompt"], clear_history=True)


# LlamaIndex: a per-turn helper (it runs the agent) adding a token counter each time
def answer(agent, question: str) -> str:
    register_once(Settings.callback_manager, TokenCountingHandler(), method="add_handler")
    return str(agent.chat(question))


def reserve(sku: str) -> str:
    return json.dumps(reserve_stock(sku))
