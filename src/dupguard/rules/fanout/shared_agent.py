"""DUP201 gather-shared-agent and DUP202 threads-shared-agent: one stateful agent run by many
tasks (``asyncio.gather``, task groups) or threads (executors, ``Thread``) at once. The
fan-outs are found by ``dupguard.semantic.fanout``; the fix is
``dupguard.codemods.fanout_shared_agent``."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.fanout import FanOut, async_fanouts, thread_fanouts
from ...semantic.model import Model
from ..registry import Finding, RuleContext, rule

ADVICE = (
    "give each task its own agent from a factory, or serialise the runs with "
    '`dupguard.runtime.InvocationGuard(mode="wait")`'
)


def _finding(model: Model, fan: FanOut, ctx: RuleContext, how: str, harm: str) -> Finding:
    runs = ", ".join(str(ctx.line(r.node)) for r in fan.runs[:3])
    return Finding(
        fan.call.node,
        f"`{fan.call.func}` runs {fan.what} (bound at line {ctx.line(fan.agent.statement)}) {how} "
        f"(line {runs}): {harm}; {ADVICE}",
        fix=ctx.fix(fan),
    )


@rule("DUP201", name="gather-shared-agent", fix="fanout_shared_agent", safety="unsafe")
def gather_shared_agent(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for fan in async_fanouts(model):
        yield _finding(
            model,
            fan,
            ctx,
            "in several concurrent tasks",
            "the runs interleave on one history and repeat each other's tool calls",
        )


@rule("DUP202", name="threads-shared-agent", fix="fanout_shared_agent", safety="unsafe")
def threads_shared_agent(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for fan in thread_fanouts(model):
        yield _finding(
            model, fan, ctx, "in several threads at once", "its history is mutated concurrently and tool calls repeat"
        )
