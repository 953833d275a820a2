"""DUP301 duplicate-tool: the same tool given twice to one agent or tool list. The tool lists
come from ``dupguard.semantic.toolsets``; the fix is ``dupguard.codemods.duplicate_tool``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...semantic.model import Model
from ...semantic.toolsets import tool_sets
from ..registry import Finding, RuleContext, rule

if TYPE_CHECKING:
    import libcst as cst


@rule("DUP301", name="duplicate-tool", fix="duplicate_tool", safety="safe")
def duplicate_tool(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for tool_set in tool_sets(model):
        seen: dict[str, cst.CSTNode] = {}
        consumer = tool_set.consumer.func or "the agent"
        for text, node in tool_set.elements:
            if text is None:
                continue
            if text in seen:
                yield Finding(
                    node,
                    f"`{text}` is given to `{consumer}` twice (first at line {ctx.line(seen[text])}): "
                    "the model sees the tool twice and can call it twice; keep one "
                    "(`dupguard.runtime.dedupe_tools`)",
                    fix=ctx.fix(node, text),
                )
            else:
                seen[text] = node
