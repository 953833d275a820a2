"""What every scripted model of ``myapp`` asks for: the tool calls named in the user's message.

``"refund order-7 refund order-7"`` is two identical calls ``refund(order_id="order-7")`` in one
response (what a confused model does, and what the guards must run once); the argument is the
word after the tool's name. A message that names no tool gets a plain answer.
"""

from __future__ import annotations

#: the stand-in tools and their one parameter (the docs' tools use these names)
PARAMETERS = {"search": "query", "refund": "order_id", "send_email": "to"}


def tool_calls_for(text: str) -> list[tuple[str, dict[str, str]]]:
    words = text.split()
    return [
        (word, {PARAMETERS[word]: words[i + 1] if i + 1 < len(words) else ""})
        for i, word in enumerate(words)
        if word in PARAMETERS
    ]
