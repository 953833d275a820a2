"""Message histories: lists of chat messages that a turn appends to.

A list counts as a history by its name (``messages``, ``chat_history``…) or by being a catalog
memory. Shared by DUP203 (results appended in completion order,
``dupguard.rules.fanout.unordered_tool_results``) and DUP503 (one message appended twice,
``dupguard.rules.retries.duplicate_history_append``).
"""

from __future__ import annotations

from .catalog import Kind
from .model import Call, Model

HISTORY_WORDS = ("messages", "history", "conversation", "transcript", "msgs", "chat_log", "memory")
APPEND_METHODS = {"append", "put", "add_message", "add_messages", "aput", "aadd_messages"}


def looks_like_history(model: Model, receiver: str, call: Call) -> bool:
    last = receiver.rsplit(".", 1)[-1].lower()
    if any(word in last for word in HISTORY_WORDS):
        return True
    binding = model.local_binding(receiver, call.function) if "." not in receiver else None
    if binding is not None and binding.value_call is not None:
        kind, _ = model.kind_of_expr_call(binding.value_call)
        return kind is Kind.MEMORY
    return False
