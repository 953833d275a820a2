"""The business side of the e2e apps: orders, a refund that must happen once, and its record.

``refund_order`` is the side effect the harness counts. Every execution appends a row to the
``refunds`` table of the SQLite file named by ``SHOP_DB`` (one transaction, WAL, so several
uvicorn workers can share it): the request and user that were being served, the order, and the
time. The apps set ``current_request`` at the start of each request, the way real apps carry a
request context; the tool reads it, so a row records whose request actually ran the refund.

Orders are named ``<user>-<n>``: a refund of an order whose prefix is not the requesting user's is a
cross-user effect (one user's conversation leaking into another's turn).
"""

from __future__ import annotations

import contextvars
import os
import sqlite3
import time

current_request: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar("current_request", default=("-", "-"))

SCHEMA = """
CREATE TABLE IF NOT EXISTS refunds (
    request_id TEXT NOT NULL, user_id TEXT NOT NULL, order_id TEXT NOT NULL, pid INTEGER, at REAL
)
"""


def _connect() -> sqlite3.Connection:
    connection = sqlite3.connect(os.environ.get("SHOP_DB", "shop.db"), timeout=30, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(SCHEMA)
    return connection


async def refund_order(order_id: str) -> str:
    """Refund an order (the side effect that must run exactly once per user request).

    Async, so it runs in the request's task and sees its ``current_request`` (a sync tool may be
    run in an executor thread, which does not carry context variables)."""
    request_id, user_id = current_request.get()
    with _connect() as connection:
        connection.execute(
            "INSERT INTO refunds VALUES (?, ?, ?, ?, ?)", (request_id, user_id, order_id, os.getpid(), time.time())
        )
    return f"refunded {order_id}"


async def lookup_order(order_id: str) -> str:
    """Look an order up (read-only)."""
    return f"order {order_id}: 1 item, paid"
