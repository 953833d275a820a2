"""Retries-and-replays family (DUP5xx): work that runs again when a turn is retried."""

from __future__ import annotations

from typing import Iterable

from ..semantic.history import repeated_appends
from ..semantic.model import Model
from ..semantic.queues import redeliveries
from ..semantic.retries import retries
from ..semantic.toolcalls import replays, unbounded_tool_loops
from . import Finding, RuleContext, rule


@rule("DUP503")
def duplicate_history_append(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for first, second in repeated_appends(model):
        message = second.args[0].dotted
        replacement, fix_message = ctx.fix("duplicate_history_append", ctx, second)
        yield Finding(
            second.node,
            f"`{message}` is appended to `{second.receiver}` again (first at line {ctx.line(first.node)}): "
            "a message with tool_calls in the history twice makes the next turn execute them twice; "
            "append it once",
            replacement=replacement, fix_message=fix_message,
        )


def _where(ctx: RuleContext, run) -> str:
    """``the agent run `agent.achat(...)` at line 12`` (the line of the call that runs the tools)."""
    return f"the {run.what} at line {ctx.line(run.node if run.node is not None else run.inner.node)}"


@rule("DUP501")
def naive_agent_retry(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for retry in retries(model):
        run = retry.run
        effect = "re-runs the agent and every tool it already called" if run.kind == "agent" else (
            "executes the tool again even when the failed attempt had already done its side effect"
        )
        replacement, fix_message = ctx.fix("naive_agent_retry", model, ctx, retry)
        yield Finding(
            retry.node,
            f"{retry.label} retries {_where(ctx, run)} with no idempotency key: an attempt that fails "
            f"after its tools ran (refund issued, email sent) {effect}; key the run and execute it once "
            "with `dupguard.runtime.Idempotency.arun(key, ...)` / `@idempotent(key=...)`, or check "
            "`already_processed(key)` first",
            replacement=replacement, fix_message=fix_message,
        )


@rule("DUP502")
def tool_calls_replayed(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for replay in replays(model):
        first, second = replay.first, replay.second
        payload = second.payload.split("\0")[0]
        yield Finding(
            second.report,
            f"`{payload}` is executed again here (`{second.what}`, first executed at line "
            f"{ctx.line(first.report)}) with no seen-id check: every tool call of that payload runs twice; "
            "record each call id and skip the ones already run with `dupguard.runtime.ToolCallLedger` "
            "(`ledger.begin(call.id, name, args)`), or answer a failure with an error result instead of "
            "re-executing",
        )


@rule("DUP504")
def queue_without_lease(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for item in redeliveries(model):
        if item.shape == "consumer":
            head = (
                f"{item.why} takes a job with no lease, then {_where(ctx, item.run)} runs it: a job "
                "redelivered while the agent is still running (or after the worker died) is run again "
                "by another worker, tools included"
            )
        else:
            head = (
                f"this task runs {_where(ctx, item.run)} and is delivered again by {item.why}, with no "
                "idempotency check: the second delivery re-runs every tool the first one called"
            )
        yield Finding(
            item.node,
            f"{head}; hold `dupguard.runtime.turn_lease(backend, turn_key)` around the run (one owner "
            "per chat turn, renewed while it runs), or check `already_processed(job_id)` first",
        )


@rule("DUP505")
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
