from contextlib import asynccontextmanager

from autogen import AssistantAgent, UserProxyAgent, register_function
from fastapi import FastAPI
from flask import Flask, request
from llama_index.core import Settings, set_global_handler
from llama_index.core.callbacks import CallbackManager, LlamaDebugHandler, TokenCountingHandler
from strands import Agent as StrandsAgent
from strands.hooks import AfterToolCallEvent
from tornado.ioloop import IOLoop

from dupguard.runtime import register_once

from .observability import audit_tool_call, notify
from .warehouse import check_stock, reserve_items

token_counter = TokenCountingHandler()
debug_handler = LlamaDebugHandler(print_trace_on_end=False)

# module level: runs once per process
Settings.callback_manager = CallbackManager([token_counter])
set_global_handler("simple")


# a startup hook: runs once
@asynccontextmanager
async def lifespan(app: FastAPI):
    Settings.callback_manager.add_handler(debug_handler)
    yield


api = FastAPI(lifespan=lifespan)
web = Flask(__name__)


# register_once: the same handler is added at most once, however many requests ask
@web.post("/ask")
def ask():
    if request.json.get("debug"):
        register_once(Settings.callback_manager, debug_handler)
    return {"ok": True}


# an explicit membership guard
@api.post("/chat")
async def chat(message: str):
    if debug_handler not in Settings.callback_manager.handlers:
        Settings.callback_manager.add_handler(debug_handler)
    return {"ok": True}


# a fresh agent per request: its hooks die with it
@api.post("/outreach")
async def send_outreach(lead_id: str):
    agent = StrandsAgent(system_prompt="Draft outreach emails.", tools=[check_stock])
    agent.hooks.add_callback(AfterToolCallEvent, audit_tool_call)
    return str(await agent.invoke_async(f"Write to lead {lead_id}"))


# AG2: a factory registering each tool once on the agents it just built
def build_pair() -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("planner", llm_config={"model": "gpt-4o-mini"})
    proxy = UserProxyAgent("runner", human_input_mode="NEVER", code_execution_config=False)
    for fn in (check_stock, reserve_items):
        register_function(fn, caller=assistant, executor=proxy, description=fn.__name__)
    return assistant, proxy


# tornado's IOLoop.add_callback schedules a function once; it is not a hook registration
@api.post("/notify")
async def poke(user_id: str):
    IOLoop.current().add_callback(notify, user_id)
    return {"queued": True}


if __name__ == "__main__":
    Settings.callback_manager.add_handler(LlamaDebugHandler(print_trace_on_end=True))
    web.run()


# a module-level flag makes the install run once
_tracing = False


def enable_tracing() -> None:
    global _tracing
    if _tracing:
        return
    set_global_handler("arize_phoenix")
    _tracing = True


@api.post("/traced")
async def traced(message: str):
    enable_tracing()
    if not getattr(api.state, "hooks_installed", False):
        Settings.callback_manager.add_handler(token_counter)
        api.state.hooks_installed = True
    return {"ok": True}


# scoped to the request: removed again before it returns
@api.post("/debug")
async def debug(message: str):
    handler = LlamaDebugHandler(print_trace_on_end=True)
    Settings.callback_manager.add_handler(handler)
    try:
        return {"ok": True}
    finally:
        Settings.callback_manager.remove_handler(handler)
