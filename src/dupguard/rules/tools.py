"""Tools family (DUP3xx): tools given twice, names reused, tool lists that grow per call."""

from __future__ import annotations

from typing import Iterable

from ..semantic.model import Model
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
                yield Finding(
                    node,
                    f"`{text}` is given to `{consumer}` twice (first at line {ctx.line(seen[text])}): "
                    "the model sees the tool twice and can call it twice; keep one "
                    "(`dupguard.runtime.dedupe_tools`)",
                )
            else:
                seen[text] = node
