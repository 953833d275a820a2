"""Message histories: lists of chat messages that a turn appends to.

DUP503 asks whether the same message object is appended twice to one history in straight
-line code. A list counts as a history by its name (``messages``, ``chat_history``…) or by
being a catalog memory.
"""

from __future__ import annotations

from typing import Iterator

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


def repeated_appends(model: Model) -> Iterator[tuple[Call, Call]]:
    """(first, second) appends of the same message name to the same history in one suite,
    with neither the message nor the history rebound in between."""
    by_suite: dict[tuple[int, str, str], Call] = {}
    rebinds = {(b.block[0], b.target): [] for b in model.bindings}
    for b in model.bindings:
        rebinds[(b.block[0], b.target)].append(b.block[1])
    for call in model.calls:
        if call.method not in APPEND_METHODS or not call.receiver or len(call.args) != 1:
            continue
        message = call.args[0].dotted
        if not message or "(" in message or call.outer or not looks_like_history(model, call.receiver, call):
            continue
        key = (call.block[0], call.receiver, message)
        first = by_suite.get(key)
        if first is not None and first.block[1] < call.block[1]:
            lo, hi = first.block[1], call.block[1]
            rebound = any(
                lo < i < hi
                for name in (message, call.receiver)
                for i in rebinds.get((call.block[0], name), ())
            )
            if not rebound and not _loop_between(first, call):
                yield first, call
                continue
        by_suite[key] = call


def _loop_between(first: Call, second: Call) -> bool:
    return first.loops != second.loops
