"""DUP302 duplicate-tool-name: two different tools with one name in the same tool set. The
clashes come from ``dupguard.semantic.toolnames`` (a name counts only when it is certain), over
the tool sets of ``dupguard.semantic.toolsets``."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.model import Model
from ...semantic.toolnames import name_clashes
from ..registry import Finding, RuleContext, rule


@rule("DUP302", name="duplicate-tool-name")
def duplicate_tool_name(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for clash in name_clashes(model):
        where = f" given to `{clash.consumer}`" if clash.consumer else ""
        second = f" (`{clash.second_text}`)" if clash.second_text else ""
        first = f"`{clash.first_text}`, " if clash.first_text else ""
        yield Finding(
            clash.second,
            f'a second tool named "{clash.name}"{second}{where} (the first is {first}at line {ctx.line(clash.first)}): '
            "the model cannot tell the two apart and the framework keeps one or calls both; give each "
            "tool a unique name (`dupguard.runtime.dedupe_tools` keeps the first of each name)",
        )
