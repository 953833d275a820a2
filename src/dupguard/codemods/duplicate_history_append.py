"""DUP503 fix (safe): remove the second append of the same message to the same history.

The rule only reports a repeat in straight-line code of one suite with neither the message
nor the history rebound in between, so the second call only ever re-adds the same object;
removing that statement is safe when its value is not used (``x = h.append(m)`` is left).
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


def fix(ctx: FixContext, second: Call) -> FixProposal:
    small = statement_expression(second.statement, second.node)
    if small is None or second.outer or not isinstance(second.statement, cst.SimpleStatementLine):
        return FixProposal.refuse(f"the `{second.func}(...)` result is used, so the call cannot be removed")
    removal = remove_statement(ctx, second.statement, small)
    if isinstance(removal, str):
        return FixProposal.refuse(removal)
    return FixProposal(f"Remove the repeated `{second.func}({second.args[0].dotted})`", removal)


class FixDuplicateHistoryAppend(RuleCodemod):
    DESCRIPTION = "remove the repeated append of one message to one history."
