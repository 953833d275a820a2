"""DUP301 duplicate-tool: the same tool given twice to one agent or tool list. The tool lists
come from ``dupguard.semantic.toolsets``; the fix is ``dupguard.codemods.duplicate_tool``."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.model import Model
from ...semantic.toolsets import tool_sets
from .. import Finding, RuleContext, rule


@rule("DUP301", name="duplicate-tool", fix="duplicate_tool", safety="safe")
def duplicate_tool(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for tool_set in tool_sets(model):
        seen: dict[str, object] = {}
        consumer = tool_set.consumer.func or "the agent"
        for text, node in tool_set.elements:
            if text is None:
                continue
            if text in seen:
                replacement, fix_message = ctx.fix(model, ctx, node, text)
                yield Finding(
                    node,
                    f"`{text}` is given to `{consumer}` twice (first at line {ctx.line(seen[text])}): "
                    "the model sees the tool twice and can call it twice; keep one "
                    "(`dupguard.runtime.dedupe_tools`)",
                    replacement=replacement,
                    fix_message=fix_message,
                )
            else:
                seen[text] = node
