"""Two llama-index ``FunctionTool``s whose side effects are recorded in :data:`calls`, so a
docs example can assert how many refunds really happened."""

from __future__ import annotations

import threading

from llama_index.core.tools import FunctionTool

#: every real execution, in order: ``("refund", "order-42")``
calls: list[tuple[str, str]] = []
_lock = threading.Lock()


def search(query: str) -> str:
    """Search the knowledge base."""
    with _lock:
        calls.append(("search", query))
    return f"3 articles about {query}"


def refund(order_id: str) -> str:
    """Refund an order (a side effect that must happen once)."""
    with _lock:
        calls.append(("refund", order_id))
        n = sum(1 for name, _ in calls if name == "refund")
    return f"refund #{n} issued for {order_id}"


search_tool = FunctionTool.from_defaults(fn=search)
refund_tool = FunctionTool.from_defaults(fn=refund)
my_tools = [search_tool, refund_tool]
