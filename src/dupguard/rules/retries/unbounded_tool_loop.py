"""DUP505 unbounded-tool-loop: a ``while`` loop that calls the model and executes its tool calls
with no iteration cap and no per-turn dedup. The loops come from ``dupguard.semantic.toolcalls``,
which DUP502 shares."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.model import Model
from ...semantic.toolcalls import unbounded_tool_loops
from ..registry import Finding, RuleContext, rule


@rule("DUP505", name="unbounded-tool-loop")
def unbounded_tool_loop(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for found in unbounded_tool_loops(model):
        yield Finding(
            found.loop.node,
            f"this loop calls the model (line {ctx.line(found.model_call.node)}) and executes its tool calls "
            f"({found.what}, line {ctx.line(found.execution.node)}) with no iteration cap and no per-turn "
            "dedup: a model that keeps asking for the same tool gets it executed again and again; cap the "
            "rounds (`for step in range(MAX_STEPS)`) and gate each call with "
            "`dupguard.runtime.TurnToolGuard` (`guard.reserve(name, args)`)",
        )
