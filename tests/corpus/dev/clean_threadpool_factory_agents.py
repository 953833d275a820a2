"""Backfill job: label old support tickets with a fresh agent per ticket."""
import logging
from concurrent.futures import ThreadPoolExecutor, as_completed

from llama_index.core.agent import ReActAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from .db import iter_unlabelled_tickets, save_label
from .kb import search_kb

log = logging.getLogger(__name__)
llm = OpenAI(model="gpt-4o-mini")
kb_tool = FunctionTool.from_defaults(fn=search_kb)


def label_ticket(ticket: dict) -> tuple[int, str]:
    agent = ReActAgent.from_tools([kb_tool], llm=llm, max_iterations=4)
    label = agent.chat(f"Give one product-area label for this ticket:\n{ticket['body']}")
    return ticket["id"], str(label).strip()


def backfill(limit: int = 500, workers: int = 6) -> int:
    tickets = list(iter_unlabelled_tickets(limit))
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(label_ticket, t) for t in tickets]
        for fut in as_completed(futures):
            ticket_id, label = fut.result()
            save_label(ticket_id, label)
            done += 1
    log.info("labelled %d tickets", done)
    return done


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    backfill()
