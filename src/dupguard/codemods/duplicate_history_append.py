"""DUP503 fix (safe): remove the second append of the same message to the same history.

The rule only reports a repeat in straight-line code of one suite with neither the message
nor the history rebound in between, so the second call only ever re-adds the same object;
removing that statement is safe when its value is not used (``x = h.append(m)`` is left).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._command import RuleCodemod
from ._common import Replacement, module_of, remove_statement, statement_expression

if TYPE_CHECKING:
    from ..rules import RuleContext
    from ..semantic.model import Call


def fix(ctx: RuleContext, second: Call) -> tuple[Replacement | None, str]:
    small = statement_expression(second.statement, second.node)
    if small is None or second.outer:
        return None, f"the `{second.func}(...)` result is used, so the call cannot be removed"
    replacement, reason = remove_statement(module_of(ctx), second.statement, small)  # type: ignore[arg-type]
    message = f"Remove the repeated `{second.func}({second.args[0].dotted})`"
    return replacement, message if replacement is not None else reason


class FixDuplicateHistoryAppend(RuleCodemod):
    DESCRIPTION = "remove the repeated append of one message to one history."
