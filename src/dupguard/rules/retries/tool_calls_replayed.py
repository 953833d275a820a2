"""DUP502 tool-calls-replayed: one ``tool_calls`` payload executed twice with no seen-id check
(a second loop over the same calls, a re-execution in an ``except``). The replays come from
``dupguard.semantic.toolcalls``, which DUP505 shares."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.model import Model
from ...semantic.toolcalls import replays
from ..registry import Finding, RuleContext, rule


@rule("DUP502", name="tool-calls-replayed")
def tool_calls_replayed(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for replay in replays(model):
        first, second = replay.first, replay.second
        payload = second.payload.split("\0")[0]
        yield Finding(
            second.report,
            f"`{payload}` is executed again here (`{second.what}`, first executed at line "
            f"{ctx.line(first.report)}) with no seen-id check: every tool call of that payload runs twice; "
            "record each call id and skip the ones already run with `dupguard.runtime.ToolCallLedger` "
            "(`ledger.begin(call.id, name, args)`), or answer a failure with an error result instead of "
            "re-executing",
        )
