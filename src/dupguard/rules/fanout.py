"""Fan-out family (DUP2xx): one stateful agent run by many tasks or threads at once, and
parallel tool results applied in completion order."""

from __future__ import annotations

from typing import Iterable

from ..semantic.fanout import FanOut, async_fanouts, thread_fanouts
from ..semantic.model import Model
from ..semantic.ordering import unordered_writes
from . import Finding, RuleContext, rule

ADVICE = (
    "give each task its own agent from a factory, or serialise the runs with "
    "`dupguard.runtime.InvocationGuard(mode=\"wait\")`"
)


def _finding(model: Model, fan: FanOut, ctx: RuleContext, how: str, harm: str) -> Finding:
    runs = ", ".join(str(ctx.line(r.node)) for r in fan.runs[:3])
    replacement, fix_message = ctx.fix("fanout_shared_agent", model, ctx, fan)
    return Finding(
        fan.call.node,
        f"`{fan.call.func}` runs {fan.what} (bound at line {ctx.line(fan.agent.statement)}) {how} "
        f"(line {runs}): {harm}; {ADVICE}",
        replacement=replacement, fix_message=fix_message,
    )


@rule("DUP201")
def gather_shared_agent(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for fan in async_fanouts(model):
        yield _finding(model, fan, ctx, "in several concurrent tasks",
                       "the runs interleave on one history and repeat each other's tool calls")


@rule("DUP202")
def threads_shared_agent(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for fan in thread_fanouts(model):
        yield _finding(model, fan, ctx, "in several threads at once",
                       "its history is mutated concurrently and tool calls repeat")


@rule("DUP203")
def unordered_tool_results(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for call, why in unordered_writes(model):
        yield Finding(
            call.node,
            f"`{call.receiver}.{call.method}(...)` writes parallel results {why}: the history's order "
            "depends on timing and a late result can be injected into the next turn; collect the batch "
            "with `dupguard.runtime.run_batch` (results in request order, late ones to the orphan buffer)",
        )
