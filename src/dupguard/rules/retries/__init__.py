"""Retries-and-replays family (DUP5xx): work that runs again when a turn is retried.

One module per rule, named after it; each module's docstring names its rule, and
``docs/rules/index.md`` maps every code to its module. What makes a call run tools, and the
guards around it, is shared by the family: ``dupguard.semantic.runs``; the phrase that names
such a run in a message is ``where`` below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...semantic.runs import Run
    from ..registry import RuleContext


def where(ctx: RuleContext, run: Run) -> str:
    """``the agent run `agent.achat(...)` at line 12`` (the line of the call that runs the tools)."""
    return f"the {run.what} at line {ctx.line(run.node if run.node is not None else run.inner.node)}"
