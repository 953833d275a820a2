"""Nightly job: label support tickets with a fresh Strands agent per ticket."""
from concurrent.futures import ThreadPoolExecutor, as_completed

from strands import Agent

from support.db import open_tickets, save_label

LABELS = ["billing", "bug", "how-to", "account", "other"]


def label_ticket(ticket: dict) -> tuple[int, str]:
    agent = Agent(
        system_prompt=f"Answer with exactly one label from {LABELS}.",
        callback_handler=None,
    )
    return ticket["id"], str(agent(ticket["body"])).strip()


def run() -> dict[int, str]:
    labels: dict[int, str] = {}
    tickets = open_tickets(limit=500)
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(label_ticket, t) for t in tickets]
        for fut in as_completed(futures):
            ticket_id, label = fut.result()
            labels[ticket_id] = label
            save_label(ticket_id, label)
    return labels


if __name__ == "__main__":
    print(f"labelled {len(run())} tickets")
