"""Tools family (DUP3xx): tools given twice, names reused, tool lists that grow per call."""

from __future__ import annotations

from typing import Iterable

from ..semantic.model import Model
from ..semantic.toolnames import growing_tool_lists, name_clashes
from ..semantic.toolsets import tool_sets
from . import Finding, RuleContext, rule


@rule("DUP301")
def duplicate_tool(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for tool_set in tool_sets(model):
        seen: dict[str, object] = {}
        consumer = tool_set.consumer.func or "the agent"
        for text, node in tool_set.elements:
            if text is None:
                continue
            if text in seen:
                replacement, fix_message = ctx.fix("duplicate_tool", model, ctx, node, text)
                yield Finding(
                    node,
                    f"`{text}` is given to `{consumer}` twice (first at line {ctx.line(seen[text])}): "
                    "the model sees the tool twice and can call it twice; keep one "
                    "(`dupguard.runtime.dedupe_tools`)",
                    replacement=replacement, fix_message=fix_message,
                )
            else:
                seen[text] = node


@rule("DUP302")
def duplicate_tool_name(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for clash in name_clashes(model):
        where = f" given to `{clash.consumer}`" if clash.consumer else ""
        second = f" (`{clash.second_text}`)" if clash.second_text else ""
        first = f"`{clash.first_text}`, " if clash.first_text else ""
        yield Finding(
            clash.second,
            f"a second tool named \"{clash.name}\"{second}{where} (the first is {first}at line {ctx.line(clash.first)}): "
            "the model cannot tell the two apart and the framework keeps one or calls both; give each "
            "tool a unique name (`dupguard.runtime.dedupe_tools` keeps the first of each name)",
        )


@rule("DUP303")
def tool_list_grows_per_call(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for growth in growing_tool_lists(model):
        why = growth.why
        loop_line = ctx.line(why.loop.node) if why.loop is not None else None
        replacement, fix_message = ctx.fix("tool_list_grows_per_call", model, ctx, growth.call)
        yield Finding(
            growth.call.node,
            f"`{_mutation(growth)}` grows a tool list that outlives the "
            f"request (bound at line {ctx.line(growth.tool_list.binding.statement)}) inside "
            f"{why.describe(loop_line)}: every call adds tools again, so agents see duplicates and "
            "one request's tools leak into another's; build a fresh list per call "
            "(`tools = [*BASE_TOOLS, extra]`, or `dupguard.runtime.dedupe_tools`)",
            replacement=replacement, fix_message=fix_message,
        )


def _mutation(growth) -> str:
    if growth.call.method == "__iadd__":
        return f"{growth.call.receiver} += ..."
    return f"{growth.call.receiver}.{growth.call.method}(...)"
