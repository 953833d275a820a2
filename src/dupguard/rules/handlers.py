"""Handlers family (DUP4xx): callbacks, hooks and reply functions registered too often, and
tool calls executed from two callbacks of one stream."""

from __future__ import annotations

from typing import Iterable

from ..semantic.callbacks import double_executions
from ..semantic.model import Model
from ..semantic.registrations import per_call_registrations, repeated_registrations
from . import Finding, RuleContext, rule

_LIFETIMES = {
    "global": "framework-global state",
    "module": "a module-level object",
    "class": "a class attribute shared by every instance",
    "singleton": "an attribute of the single module-level instance",
    "cached": "an object returned by a cached factory",
    "loop-invariant": "an object built before the loop",
}


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _register_once_hint(site, target: str) -> str:
    """``register_once(target, handler)`` fits one-argument registrations on an object."""
    args = site.call.args
    if target and len(args) == 1 and args[0].keyword is None and not args[0].star:
        return f"`dupguard.runtime.register_once({target}, {_short(site.handler, 40)}, method=\"{site.method}\")`"
    return "a register-once flag checked before the call"


@rule("DUP401")
def handler_registered_per_call(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for found in per_call_registrations(model):
        site, why = found.site, found.why
        target = f"`{found.target}` ({_LIFETIMES[found.lifetime]})" if found.target else _LIFETIMES["global"]
        loop_line = ctx.line(why.loop.node) if why.loop is not None else None
        replacement, fix_message = ctx.fix("handler_registered_per_call", model, ctx, found)
        yield Finding(
            site.call.node,
            f"`{site.method}({_short(site.handler)})` registers on {target} inside {why.describe(loop_line)}: "
            "every call registers again on an object all calls share, so handlers pile up (each event "
            "or tool call handled once more per call) or one call's handler replaces another's; "
            f"register once at startup, or use {_register_once_hint(site, found.target)}",
            replacement=replacement, fix_message=fix_message,
        )


@rule("DUP402")
def handler_registered_twice(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for first, second in repeated_registrations(model):
        target = f"`{second.targets[0]}`" if second.targets[0] else "framework-global state"
        replacement, fix_message = ctx.fix("handler_registered_twice", ctx, second.call, _short(second.handler, 40))
        yield Finding(
            second.call.node,
            f"`{second.method}({_short(second.handler)})` on {target} repeats the registration at "
            f"line {ctx.line(first.call.node)}: the handler now runs twice for every event; delete this "
            "one (or use `dupguard.runtime.register_once`)",
            replacement=replacement, fix_message=fix_message,
        )


@rule("DUP403")
def tool_calls_in_two_callbacks(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for earlier, later in double_executions(model):
        owner = f" of `{later.function.class_name}`" if later.function.class_name else ""
        yield Finding(
            later.execution.node,
            f"`{later.function.name}` executes tool calls, and so does `{earlier.function.name}` "
            f"(line {ctx.line(earlier.execution.node)}){owner}: both events carry the same tool call, "
            "so each tool runs twice; execute tools from one canonical event (the final assembled "
            "message) or skip ids already run (`dupguard.runtime.ToolCallLedger`)",
        )
