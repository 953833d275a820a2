"""Starlette app: legacy LlamaIndex ReActAgent over the product docs."""
from functools import lru_cache

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from llama_index.core import StorageContext, load_index_from_storage
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import QueryEngineTool
from llama_index.llms.openai import OpenAI


@lru_cache(maxsize=1)
def docs_index():
    storage = StorageContext.from_defaults(persist_dir="./storage/docs")
    return load_index_from_storage(storage)


@lru_cache(maxsize=1)
def docs_agent():
    tool = QueryEngineTool.from_defaults(
        query_engine=docs_index().as_query_engine(similarity_top_k=4),
        name="product_docs",
        description="Search the product documentation.",
    )
    return ReActAgent.from_tools([tool], llm=OpenAI(model="gpt-4o-mini"), max_iterations=8)


async def ask(request: Request) -> JSONResponse:
    data = await request.json()
    response = await docs_agent().achat(data["question"])
    return JSONResponse({"answer": str(response), "sources": [s.node.node_id for s in response.source_nodes]})


async def search(request: Request) -> JSONResponse:
    q = request.query_params.get("q", "")
    nodes = docs_index().as_retriever(similarity_top_k=5).retrieve(q)
    return JSONResponse({"hits": [n.node.get_content()[:200] for n in nodes]})


app = Starlette(routes=[Route("/ask", ask, methods=["POST"]), Route("/search", search)])
