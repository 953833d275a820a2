"""DUP402 fix (safe): delete the repeated registration, keep the first.

The rule reports a second registration of the same handler on the same target in the same
straight-line code, so the second call can only add the handler again; deleting that
statement is safe when its value is not used. Comment lines above it are kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._command import RuleCodemod
from ._common import Replacement, module_of, remove_statement, statement_expression

if TYPE_CHECKING:
    from ..rules import RuleContext
    from ..semantic.model import Call


def fix(ctx: RuleContext, call: Call, handler: str) -> tuple[Replacement | None, str]:
    small = statement_expression(call.statement, call.node)
    if small is None or call.outer:
        return None, f"the `{call.func}(...)` result is used, so the call cannot be removed"
    replacement, reason = remove_statement(module_of(ctx), call.statement, small)  # type: ignore[arg-type]
    return replacement, f"Remove the repeated `{call.method}({handler})`" if replacement is not None else reason


class FixHandlerRegisteredTwice(RuleCodemod):
    DESCRIPTION = "remove the repeated registration of one handler on one target."
