"""Nightly batch: answer the FAQ backlog with the docs agent and write a CSV."""
import csv
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from llama_index.core import StorageContext, load_index_from_storage
from llama_index.core.agent import ReActAgent as RA
from llama_index.core.tools import QueryEngineTool, ToolMetadata
from llama_index.llms.openai import OpenAI


def build_docs_agent(persist_dir: str) -> RA:
    index = load_index_from_storage(StorageContext.from_defaults(persist_dir=persist_dir))
    docs_tool = QueryEngineTool(
        query_engine=index.as_query_engine(similarity_top_k=4),
        metadata=ToolMetadata(name="docs", description="Product documentation"),
    )
    return RA.from_tools([docs_tool], llm=OpenAI(model="gpt-4o-mini"), max_iterations=6)


def answer_backlog(questions: list[str], persist_dir: str, workers: int = 8) -> list[tuple[str, str]]:
    agent = build_docs_agent(persist_dir)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        answers = list(pool.map(agent.chat, questions))
    return [(q, str(a)) for q, a in zip(questions, answers)]


def main(src: str, dst: str) -> None:
    questions = [line.strip() for line in Path(src).read_text().splitlines() if line.strip()]
    rows = answer_backlog(questions, persist_dir="./storage")
    with open(dst, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "answer"])
        writer.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
