"""DUP402 fix (safe): delete the repeated registration, keep the first.

The rule reports a second registration of the same handler on the same target in the same
straight-line code, so the second call can only add the handler again; deleting that
statement is safe when its value is not used. Comment lines above it are kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal
from ._command import RuleCodemod
from ._common import remove_statement, statement_expression

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.model import Call


def fix(ctx: FixContext, call: Call, handler: str) -> FixProposal:
    small = statement_expression(call.statement, call.node)
    if small is None or call.outer or not isinstance(call.statement, cst.SimpleStatementLine):
        return FixProposal.refuse(f"the `{call.func}(...)` result is used, so the call cannot be removed")
    removal = remove_statement(ctx, call.statement, small)
    if isinstance(removal, str):
        return FixProposal.refuse(removal)
    return FixProposal(f"Remove the repeated `{call.method}({handler})`", removal)


class FixHandlerRegisteredTwice(RuleCodemod):
    DESCRIPTION = "remove the repeated registration of one handler on one target."
