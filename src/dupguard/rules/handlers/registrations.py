"""DUP401 handler-registered-per-call and DUP402 handler-registered-twice: callbacks, hooks
and reply functions registered on a shared object by code that runs per call, or twice. The
registrations come from ``dupguard.semantic.registrations``; the fixes are
``dupguard.codemods.handler_registered_per_call`` and ``handler_registered_twice``."""

from __future__ import annotations

from collections.abc import Iterable

from ...semantic.model import Model
from ...semantic.registrations import per_call_registrations, repeated_registrations
from ..registry import Finding, RuleContext, rule

_LIFETIMES = {
    "global": "framework-global state",
    "module": "a module-level object",
    "class": "a class attribute shared by every instance",
    "singleton": "an attribute of the single module-level instance",
    "cached": "an object returned by a cached factory",
    "loop-invariant": "an object built before the loop",
    "settings": "by default LlamaIndex's process-wide `Settings.callback_manager`: the object was built without "
    "`callback_manager=`",
}


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _register_once_hint(site, target: str) -> str:
    """``register_once(target, handler)`` fits one-argument registrations on an object (not a
    decorator factory such as ``@bot.listen("on_message")``, whose argument is not the handler)."""
    args = site.call.args
    if target and not site.decorator and len(args) == 1 and args[0].keyword is None and not args[0].star:
        return f'`dupguard.runtime.register_once({target}, {_short(site.handler, 40)}, method="{site.method}")`'
    return "a register-once flag checked before the call"


@rule("DUP401", name="handler-registered-per-call", fix="handler_registered_per_call", safety="unsafe")
def handler_registered_per_call(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for found in per_call_registrations(model):
        site, why = found.site, found.why
        target = f"`{found.target}` ({_LIFETIMES[found.lifetime]})" if found.target else _LIFETIMES["global"]
        loop_line = ctx.line(why.loop.node) if why.loop is not None else None
        yield Finding(
            site.call.node,
            f"`{site.method}({_short(site.handler)})` registers on {target} inside {why.describe(loop_line)}: "
            "every call registers again on an object all calls share, so handlers pile up (each event "
            "or tool call handled once more per call) or one call's handler replaces another's; "
            f"register once at startup, or use {_register_once_hint(site, found.target)}",
            fix=ctx.fix(found),
        )


@rule("DUP402", name="handler-registered-twice", fix="handler_registered_twice", safety="safe")
def handler_registered_twice(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for first, second in repeated_registrations(model):
        target = f"`{second.targets[0]}`" if second.targets[0] else "framework-global state"
        yield Finding(
            second.call.node,
            f"`{second.method}({_short(second.handler)})` on {target} repeats the registration at "
            f"line {ctx.line(first.call.node)}: the handler now runs twice for every event; delete this "
            "one (or use `dupguard.runtime.register_once`)",
            fix=ctx.fix(second.call, _short(second.handler, 40)),
        )
