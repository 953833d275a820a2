"""DUP501 naive-agent-retry: a retry loop or decorator around an agent run or a tool execution,
with no idempotency key. The retries come from ``dupguard.semantic.retries``; the fix is
``dupguard.codemods.naive_agent_retry``."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.model import Model
from ...semantic.retries import retries
from ..registry import Finding, RuleContext, rule
from . import where


@rule("DUP501", name="naive-agent-retry", fix="naive_agent_retry", safety="unsafe")
def naive_agent_retry(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for retry in retries(model):
        run = retry.run
        effect = (
            "re-runs the agent and every tool it already called"
            if run.kind == "agent"
            else ("executes the tool again even when the failed attempt had already done its side effect")
        )
        yield Finding(
            retry.node,
            f"{retry.label} retries {where(ctx, run)} with no idempotency key: an attempt that fails "
            f"after its tools ran (refund issued, email sent) {effect}; key the run and execute it once "
            "with `dupguard.runtime.Idempotency.arun(key, ...)` / `@idempotent(key=...)`, or check "
            "`already_processed(key)` first",
            fix=ctx.fix(retry),
        )
