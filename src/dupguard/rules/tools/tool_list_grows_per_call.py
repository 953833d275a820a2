"""DUP303 tool-list-grows-per-call: a tool list that outlives the request, extended inside
per-call code. The growths come from ``dupguard.semantic.toolnames`` (lifetimes from
``dupguard.semantic.lifetimes``); the fix is ``dupguard.codemods.tool_list_grows_per_call``."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.model import Model
from ...semantic.toolnames import growing_tool_lists
from ..registry import Finding, RuleContext, rule


@rule("DUP303", name="tool-list-grows-per-call", fix="tool_list_grows_per_call", safety="unsafe")
def tool_list_grows_per_call(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for growth in growing_tool_lists(model):
        why = growth.why
        loop_line = ctx.line(why.loop.node) if why.loop is not None else None
        yield Finding(
            growth.call.node,
            f"`{_mutation(growth)}` grows a tool list that outlives the "
            f"request (bound at line {ctx.line(growth.tool_list.binding.statement)}) inside "
            f"{why.describe(loop_line)}: every call adds tools again, so agents see duplicates and "
            "one request's tools leak into another's; build a fresh list per call "
            "(`tools = [*BASE_TOOLS, extra]`, or `dupguard.runtime.dedupe_tools`)",
            fix=ctx.fix(growth.call),
        )


def _mutation(growth) -> str:
    if growth.call.method == "__iadd__":
        return f"{growth.call.receiver} += ..."
    return f"{growth.call.receiver}.{growth.call.method}(...)"
