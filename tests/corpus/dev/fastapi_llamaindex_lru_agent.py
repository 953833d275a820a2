from functools import lru_cache
import asyncio
import os

from fastapi import Depends, FastAPI, HTTPException
from llama_index.agent.openai import OpenAIAgent
from llama_index.core.callbacks import CallbackManager, TokenCountingHandler
from llama_index.core.tools import QueryEngineTool
from llama_index.llms.openai import OpenAI

from app.indexes import load_policy_index, load_pricing_index

token_counter = TokenCountingHandler()
callback_manager = CallbackManager([])
callback_manager.add_handler(token_counter)
if os.getenv("LLAMA_DEBUG"):
    from llama_index.core.callbacks import LlamaDebugHandler

    callback_manager.add_handler(LlamaDebugHandler())
callback_manager.add_handler(token_counter)

app = FastAPI()


@lru_cache(maxsize=1)
def get_agent() -> OpenAIAgent:
    tools = [
        QueryEngineTool.from_defaults(load_policy_index().as_query_engine(), name="policies",
                                      description="Company policies"),
        QueryEngineTool.from_defaults(load_pricing_index().as_query_engine(), name="pricing",
                                      description="Price lists"),
    ]
    llm = OpenAI(model="gpt-4o", callback_manager=callback_manager)
    return OpenAIAgent.from_tools(tools, llm=llm, callback_manager=callback_manager)


@app.post("/ask")
async def ask(question: str, agent: OpenAIAgent = Depends(get_agent)):
    last_error = None
    for attempt in range(3):
        try:
            answer = await agent.achat(question)
            return {"answer": str(answer), "tokens": token_counter.total_llm_token_count}
        except Exception as exc:  # timeouts from the provider are common at peak
            last_error = exc
            await asyncio.sleep(2 ** attempt)
    raise HTTPException(status_code=502, detail=str(last_error))
