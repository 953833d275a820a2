"""Retries-and-replays family (DUP5xx): work that runs again when a turn is retried."""

from __future__ import annotations

from typing import Iterable

from ..semantic.history import repeated_appends
from ..semantic.model import Model
from . import Finding, RuleContext, rule


@rule("DUP503")
def duplicate_history_append(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for first, second in repeated_appends(model):
        message = second.args[0].dotted
        from ..codemods.duplicate_history_append import fix  # libcst.codemod: only when needed

        replacement, fix_message = fix(ctx, second)
        yield Finding(
            second.node,
            f"`{message}` is appended to `{second.receiver}` again (first at line {ctx.line(first.node)}): "
            "a message with tool_calls in the history twice makes the next turn execute them twice; "
            "append it once",
            replacement=replacement, fix_message=fix_message,
        )
