"""Retries-and-replays family (DUP5xx): work that runs again when a turn is retried.

- ``naive_agent_retry.py``: DUP501 naive-agent-retry (detection in ``dupguard.semantic.retries``);
- ``tool_calls_replayed.py``: DUP502 tool-calls-replayed (``dupguard.semantic.toolcalls``);
- ``duplicate_history_append.py``: DUP503 duplicate-history-append, with its detection;
- ``queue_without_lease.py``: DUP504 queue-without-lease, with its detection;
- ``unbounded_tool_loop.py``: DUP505 unbounded-tool-loop (``dupguard.semantic.toolcalls``).

What makes a call run tools, and the guards around it, is shared: ``dupguard.semantic.runs``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...semantic.runs import Run
    from .. import RuleContext


def where(ctx: RuleContext, run: Run) -> str:
    """``the agent run `agent.achat(...)` at line 12`` (the line of the call that runs the tools)."""
    return f"the {run.what} at line {ctx.line(run.node if run.node is not None else run.inner.node)}"
