"""arq worker: long-running document Q&A jobs, deduplicated by job id."""
from arq import create_pool
from arq.connections import RedisSettings
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import QueryEngineTool
from llama_index.llms.openai import OpenAI

from .indexes import load_index

LLM = OpenAI(model="gpt-4o-mini")
REDIS = RedisSettings(host="redis")


def build_agent(collection: str) -> ReActAgent:
    engine = load_index(collection).as_query_engine(similarity_top_k=5)
    tool = QueryEngineTool.from_defaults(engine, name="docs", description=f"Documents in {collection}")
    return ReActAgent.from_tools([tool], llm=LLM, max_iterations=6)


async def answer_question(ctx, job_key: str, collection: str, question: str) -> str:
    redis = ctx["redis"]
    if not await redis.set(f"done:{job_key}", 1, nx=True, ex=86400):
        return await redis.get(f"answer:{job_key}") or ""
    agent = build_agent(collection)
    answer = str(await agent.achat(question))
    await redis.set(f"answer:{job_key}", answer, ex=86400)
    return answer


async def enqueue(collection: str, question: str, job_key: str) -> None:
    pool = await create_pool(REDIS)
    await pool.enqueue_job("answer_question", job_key, collection, question, _job_id=job_key)


class WorkerSettings:
    functions = [answer_question]
    redis_settings = REDIS
    max_jobs = 4
    job_timeout = 600
