"""Shared-state family (DUP1xx): agents, memories and session keys shared by every request."""

from __future__ import annotations

from typing import Iterable

from ..semantic.catalog import Kind
from ..semantic.model import Model
from ..semantic.shared import Shared, shared_objects, uses_in_concurrent_code
from . import Finding, RuleContext, rule


def _what(shared: Shared) -> str:
    noun = "agent" if shared.kind is Kind.AGENT else "memory"
    framework = f"{shared.entry.framework} " if shared.entry is not None else ""
    call = shared.binding.value_call if shared.binding is not None else None
    built = f" (`{call.func}(...)`)" if call is not None and call.func else ""
    return f"a stateful {framework}{noun}{built}"


def _where(shared: Shared) -> str:
    if shared.factory is not None:
        return f"returned by the cached factory `{shared.factory.name}()`"
    if shared.owner_class is not None:
        return f"held by the single module-level `{shared.owner_class}` instance"
    if shared.binding is not None and shared.binding.scope == "class":
        return "bound on the class"
    if shared.binding is not None and ".state." in f".{shared.binding.target}":
        return "stored on the application state"
    return "bound at module level"


def _shared_findings(model: Model, ctx: RuleContext, kind: Kind, advice: str) -> Iterable[Finding]:
    for shared in shared_objects(model):
        if shared.kind is not kind:
            continue
        uses = uses_in_concurrent_code(model, shared)
        if not uses:
            continue
        first = uses[0]
        where = first.function.name if first.function else "the Streamlit script"
        more = f" and {len(uses) - 1} more place(s)" if len(uses) > 1 else ""
        yield Finding(
            shared.report_node,
            f"`{shared.label}` is {_what(shared)} {_where(shared)} and shared by every request: "
            f"used in `{where}` (line {ctx.line(first.node)}){more}; {advice}",
        )


@rule("DUP101")
def shared_agent_singleton(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    return _shared_findings(
        model, ctx, Kind.AGENT,
        "build the agent per request, or keep one per session with "
        "`dupguard.runtime.SessionRegistry` and serialise it with `InvocationGuard`",
    )
