from contextlib import asynccontextmanager

from fastapi import FastAPI
from llama_index.core import Settings
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.callbacks import CallbackManager, TokenCountingHandler
from llama_index.llms.openai import OpenAI

from .observability import OTelHandler
from .tools import lookup_sku, check_inventory

token_counter = TokenCountingHandler()


@asynccontextmanager
async def lifespan(app: FastAPI):
    Settings.callback_manager = CallbackManager([])
    Settings.callback_manager.add_handler(token_counter)
    Settings.callback_manager.add_handler(OTelHandler(service="inventory-bot"))
    Settings.llm = OpenAI(model="gpt-4o-mini")
    yield
    Settings.callback_manager.remove_handler(token_counter)


app = FastAPI(lifespan=lifespan)
inventory_agent = FunctionAgent(tools=[lookup_sku, check_inventory], system_prompt="Inventory helper.")


@app.post("/inventory/ask")
async def ask(question: str):
    before = token_counter.total_llm_token_count
    answer = await inventory_agent.run(question)
    return {"answer": str(answer), "tokens": token_counter.total_llm_token_count - before}
