"""Starlette app: LlamaIndex tracing and token counting registered once, at startup."""
import contextlib

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.callbacks import CallbackManager, LlamaDebugHandler, TokenCountingHandler
from llama_index.llms.openai import OpenAI

from dupguard.runtime import register_once
from kb.loader import load_documents

token_counter = TokenCountingHandler()
debug_handler = LlamaDebugHandler(print_trace_on_end=False)


def install_tracing() -> None:
    """Idempotent: safe to call from tests and from the lifespan."""
    if Settings.callback_manager is None:
        Settings.callback_manager = CallbackManager([])
    register_once(Settings.callback_manager, token_counter)
    register_once(Settings.callback_manager, debug_handler)


@contextlib.asynccontextmanager
async def lifespan(app):
    install_tracing()
    Settings.llm = OpenAI(model="gpt-4o-mini")
    app.state.index = VectorStoreIndex.from_documents(load_documents())
    yield


async def query(request):
    q = (await request.json())["q"]
    engine = request.app.state.index.as_query_engine()
    response = await engine.aquery(q)
    return JSONResponse({"answer": str(response), "tokens": token_counter.total_llm_token_count})


async def reset_counters(request):
    token_counter.reset_counts()
    return JSONResponse({"ok": True})


app = Starlette(routes=[Route("/query", query, methods=["POST"]), Route("/reset", reset_counters, methods=["POST"])], lifespan=lifespan)
