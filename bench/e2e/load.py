"""Load generator and scorer: users × requests × concurrency against one app, then the table row.

Each user holds one conversation: the first message plants the user's secret (``secret=<word>``),
the next ones ask for refunds of the user's own orders, the last asks "what is my secret?". Users
run in parallel (at most ``concurrency`` requests in flight); one user's requests are sequential,
as a person's are. A request that fails (HTTP error or client timeout) is re-sent with the same
request id, as real clients and proxies do: the app must not refund twice because of it.

Scoring reads the shop's refund rows and the answers:

* duplicate refunds: extra executions of the same (request, order);
* cross-user refunds: a refund of an order that is not the requesting user's;
* leaks: answers that name another user's secret;
* conversations kept: users whose last answer names their own secret.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from dataclasses import dataclass, field

import httpx


@dataclass
class Load:
    users: int = 20
    requests_per_user: int = 5
    concurrency: int = 16
    timeout: float = 20.0
    resends: int = 3
    seed: int = 1


@dataclass
class Outcome:
    answers: dict[str, list[str]] = field(default_factory=dict)  # user → answers in order
    failed: int = 0
    sent: int = 0
    seconds: float = 0.0


def conversation(user: str, n: int, rng: random.Random) -> tuple[str, list[str]]:
    secret = f"{user}x{rng.randrange(10**6):06d}"
    messages = [f"Hello, my secret={secret}. Please remember it."]
    messages += [f"Please refund order {user}-{k}" for k in range(1, max(1, n - 1))]
    messages.append("What is my secret?")
    return secret, messages[:n] if n >= 2 else messages[-1:]


async def run_load(base_url: str, load: Load) -> tuple[Outcome, dict[str, str]]:
    rng = random.Random(load.seed)
    users = [f"u{i:02d}" for i in range(load.users)]
    plans = {user: conversation(user, load.requests_per_user, rng) for user in users}
    outcome = Outcome(answers={user: [] for user in users})
    gate = asyncio.Semaphore(load.concurrency)
    started = time.perf_counter()

    async def user_session(client: httpx.AsyncClient, user: str) -> None:
        for index, message in enumerate(plans[user][1]):
            request_id = f"{user}-r{index}"
            body = {"user_id": user, "request_id": request_id, "message": message}
            answer = None
            for _ in range(1 + load.resends):
                outcome.sent += 1
                try:
                    async with gate:
                        response = await client.post(
                            "/chat", json=body, headers={"Idempotency-Key": request_id, "X-Request-ID": request_id}
                        )
                    if response.status_code == 200:
                        answer = str(response.json().get("answer"))
                        break
                except httpx.HTTPError:
                    pass
            if answer is None:
                outcome.failed += 1
            outcome.answers[user].append(answer or "")

    async with httpx.AsyncClient(base_url=base_url, timeout=load.timeout) as client:
        await asyncio.gather(*(user_session(client, user) for user in users))
    outcome.seconds = time.perf_counter() - started
    return outcome, {user: plan[0] for user, plan in plans.items()}


def score(shop_db: str, outcome: Outcome, secrets: dict[str, str]) -> dict[str, float]:
    with sqlite3.connect(shop_db) as connection:
        try:
            rows = connection.execute("SELECT request_id, user_id, order_id FROM refunds").fetchall()
        except sqlite3.OperationalError:  # no refund ran at all (every request failed): none to count
            rows = []
    seen: dict[tuple[str, str], int] = {}
    cross = 0
    for request_id, user_id, order_id in rows:
        seen[(request_id, order_id)] = seen.get((request_id, order_id), 0) + 1
        if not order_id.startswith(f"{user_id}-"):
            cross += 1
    duplicates = sum(count - 1 for count in seen.values())
    leaks = 0
    kept = 0
    for user, answers in outcome.answers.items():
        others = [s for u, s in secrets.items() if u != user]
        leaks += sum(1 for a in answers for s in others if s in a)
        if answers and secrets[user] in answers[-1]:
            kept += 1
    return {
        "refunds": len(rows),
        "duplicate_refunds": duplicates,
        "cross_user_refunds": cross,
        "leaks": leaks,
        "kept_pct": 100.0 * kept / max(1, len(outcome.answers)),
        "failed_requests": outcome.failed,
        "rps": outcome.sent / outcome.seconds if outcome.seconds else 0.0,
    }
