"""Registrations: calls that attach a callback, hook, reply function or tool to a target.

Which methods register is catalog data (``Catalog.registrations``: ``add_handler``,
``register_reply``, ``add_callback``…). This module finds those calls, works out the target
each one mutates (the receiver, the ``caller=``/``executor=`` agents of AutoGen's
``register_function``, or the framework's global state for ``set_global_handler``) and the
handler it attaches, and answers the two questions behind DUP401 and DUP402: is a registration
made per call on a long-lived target, and is one registration repeated on the same target.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .catalog import Kind, Registration
from .lifetimes import PerCall, bound_outside, code_of, is_guarded, is_removal, lifetime, per_call, removed_in_scope
from .model import Call, Model

if TYPE_CHECKING:
    import libcst as cst

# Keyword arguments that carry the handler, per registration style.
HANDLER_KWARGS = (
    "handler",
    "hook",
    "reply_func",
    "callback",
    "f",
    "func",
    "function",
    "processor",
    "filter",
    "tool",
    "event_handler",
    "span_handler",
)
# ``autogen.register_function(f, caller=a, executor=b)`` registers on the agents it is given.
TARGET_KWARGS = ("caller", "executor", "agent")


@dataclass(eq=False)
class Site:
    """One registration call."""

    call: Call
    registration: Registration
    targets: tuple[str, ...]  # dotted text of what it mutates; "" for framework-global state
    handler: str  # source text of the handler argument (for messages)
    handler_node: cst.CSTNode | None
    decorator: bool = False  # ``@agent.tool`` / ``@assistant.register_for_llm(...)`` on a def

    @property
    def method(self) -> str:
        return self.registration.method


def _imported_tops(model: Model) -> set[str]:
    return {q.split(".")[0] for q in model.imports.values()}


def _framework_imported(model: Model, reg: Registration) -> bool:
    """Is the registration's framework imported here? (``add_callback`` is also tornado's
    IOLoop scheduling call: without a Strands import it is not a hook registration.)"""
    tops = _imported_tops(model)
    for token in reg.framework.replace(";", ",").split(","):
        token = token.strip()
        if not token:
            continue
        stem, tail = token.split("_")[0], token.split("_")[-1]
        if token in tops or any(top in (stem, tail) or top.split("_")[0] == stem for top in tops):
            return True
    return False


# Libraries with registration methods of the same names (add_handler, add_callback…) whose
# registrations have nothing to do with agent tool calls.
OTHER_LIBRARIES = frozenset(
    {
        "telegram",
        "aiogram",
        "discord",
        "slack_bolt",
        "tornado",
        "asyncio",
        "logging",
        "signal",
        "atexit",
        "tkinter",
        "PyQt5",
        "PyQt6",
        "PySide2",
        "PySide6",
        "kivy",
        "pygame",
        "watchdog",
    }
)


def _receiver_class(model: Model, call: Call) -> str | None:
    """Qualified class of the receiver object when a binding or import says what it is."""
    if not call.receiver:
        return None
    resolved = model.resolve(call.receiver.replace("()", "").replace("[]", ""))
    if resolved:
        return resolved
    head = call.receiver.split(".")[0]
    if "." in call.receiver or "(" in head or "[" in head:
        return None
    binding = model.local_binding(head, call.function)
    if binding is None or binding.value_call is None:
        return None
    _, entry = model.kind_of_expr_call(binding.value_call)
    if entry is not None:
        return entry.names[0]
    return binding.value_call.callee


def _matches_receivers(model: Model, call: Call, reg: Registration) -> bool:
    if not reg.receivers:
        tops = {n.split(".")[0] for n in model.catalog.by_name}
        if not call.receiver and call.callee:
            # an imported function (``from agents import add_trace_processor``): the import says
            # which framework it is
            return call.callee.split(".")[0] in tops
        cls = _receiver_class(model, call)
        if cls and cls.split(".")[0] in OTHER_LIBRARIES:
            # a known object of another library: python-telegram-bot's Application.add_handler,
            # tornado's IOLoop.add_callback (an object from the user's own package still counts)
            return False
        return _framework_imported(model, reg)
    candidates = [call.callee or ""] if not call.receiver else [_receiver_class(model, call) or ""]
    if call.receiver and call.callee:
        candidates.append(call.callee)
    return any(c == hint or c.startswith(hint + ".") for c in candidates if c for hint in reg.receivers)


def _handler(call: Call) -> tuple[str, cst.CSTNode | None]:
    for name in HANDLER_KWARGS:
        arg = call.kw(name)
        if arg is not None:
            return code_of(arg.node), arg.node
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if positional:
        node = positional[-1].node
        return code_of(node), node
    return code_of(call.node), None


def sites(model: Model) -> list[Site]:
    cached = getattr(model, "_dg_registrations", None)
    if cached is not None:
        return cached
    out: list[Site] = []
    regs = model.catalog.registrations
    for call in model.calls:
        name = call.method or (call.func or "").rsplit(".", 1)[-1]
        reg = regs.get(name) if name else None
        if reg is None or not _matches_receivers(model, call, reg):
            continue
        if call.receiver:
            targets: tuple[str, ...] = (call.receiver,)
        elif call.callee is None:
            continue  # a local function that happens to share the name
        else:
            given = tuple(a.dotted for k in TARGET_KWARGS if (a := call.kw(k)) is not None and a.dotted)
            targets = given or ("",)
        handler, node = _handler(call)
        decorated = _decorated_by(model, call)
        if decorated is not None:
            handler, node = decorated.name, None
        out.append(Site(call, reg, targets, handler, node, decorator=decorated is not None))
    out.extend(_bare_decorator_sites(model))
    model._dg_registrations = out  # type: ignore[attr-defined]
    return out


def _decorated_by(model: Model, call: Call):
    """The function a registration call decorates (``@assistant.register_for_llm(...)``)."""
    for fn in model.functions:
        if any(d.node is call.node for d in fn.decorators):
            return fn
    return None


def _bare_decorator_sites(model: Model) -> list[Site]:
    """``@agent.tool`` (pydantic-ai) without parentheses: no Call record exists, so one is
    made for the decorator expression, placed where the ``def`` runs (its parent function)."""
    regs = model.catalog.registrations
    out = []
    for fn in model.functions:
        if fn.parent is None:
            continue  # module or class level: runs once
        for dec in fn.decorators:
            if dec.call is not None or not dec.dotted or "." not in dec.dotted or dec.node is None:
                continue
            receiver, _, method = dec.dotted.rpartition(".")
            reg = regs.get(method)
            if reg is None:
                continue
            call = Call(
                node=dec.node,
                func=dec.dotted,
                callee=dec.callee,
                receiver=receiver,
                method=method,  # type: ignore[arg-type]
                args=(),
                function=fn.parent,
                loops=(),
                withs=(),
                trys=(),
                outer=(),
                statement=fn.node,
                block=(0, 0),
                branch=(),
                in_main=False,
            )
            if _matches_receivers(model, call, reg):
                out.append(Site(call, reg, (receiver,), fn.name, None, decorator=True))
    return out


# ---------------------------------------------------------------------- DUP401


@dataclass(frozen=True)
class PerCallRegistration:
    site: Site
    target: str  # "" = the framework's global state
    why: PerCall
    lifetime: str


def per_call_registrations(model: Model) -> Iterator[PerCallRegistration]:
    """Registrations on a long-lived target made by code that runs per request/job/turn."""
    for site in sites(model):
        call = site.call
        why = per_call(model, call)
        if why is None:
            continue
        for target in site.targets:
            life = "global" if target == "" else lifetime(model, target, call)
            if life == "local" and why.loop is not None and bound_outside(model, target, call, why.loop):
                life = "loop-invariant"
            if life in (None, "local"):
                continue
            if is_guarded(model, call, target, site.handler) or removed_in_scope(model, call, target):
                continue
            yield PerCallRegistration(site, target, why, life)
            break


# ---------------------------------------------------------------------- DUP402


def _same_object(model: Model, first: Call, second: Call, text: str) -> bool:
    """``text`` names the same object at both calls: no rebinding of its head in between."""
    head = text.replace("()", "").replace("[]", "").split(".")[0]
    if not head:
        return False
    lo, hi = model.calls.index(first), model.calls.index(second)
    for b in model.bindings:
        if b.target.split(".")[0] == head or b.target == text:
            if lo < b.seq <= hi:
                return False
    return True


def _on_path(first: Call, second: Call) -> bool:
    """Whenever ``second`` runs, ``first`` ran before it in the same scope: same function,
    ``first``'s block encloses ``second``'s (not an ``if``/``else`` or ``try``/``except`` sibling)."""
    if first.function is not second.function or first.in_main != second.in_main:
        return False
    n = len(first.branch)
    return second.branch[:n] == first.branch and first.node is not second.node


def _deduped_by_target(model: Model, site: Site) -> bool:
    if site.handler_node is None or "(" in site.handler:
        return False
    cls = _receiver_class(model, site.call)
    entry = model.catalog.lookup(cls) if cls else None
    if entry is None or entry.kind is not Kind.CALLBACKS:
        return False
    # catalog fact: e.g. LangChain's add_handler skips a handler it already holds
    return entry.framework in site.registration.dedupes_same_object_in


def repeated_registrations(model: Model) -> Iterator[tuple[Site, Site]]:
    """(first, second): the same registration call (same target, handler and arguments)
    made twice on one path through one scope, with the target not rebound in between."""
    all_sites = sites(model)
    all_sites = [site for site in all_sites if not site.decorator]  # each decorates another def
    for i, second in enumerate(all_sites):
        for first in all_sites[:i]:
            if first.method != second.method or not first.call.node.deep_equals(second.call.node):
                continue
            if not _on_path(first.call, second.call):
                continue
            texts = [t for t in second.targets if t] + [a.dotted for a in second.call.args if a.dotted]
            if not all(_same_object(model, first.call, second.call, t) for t in texts):
                continue
            if any(removed_in_scope_between(model, first.call, second.call, t) for t in second.targets if t):
                continue
            if _deduped_by_target(model, second):
                continue
            yield first, second
            break


def removed_in_scope_between(model: Model, first: Call, second: Call, target: str) -> bool:
    lo, hi = model.calls.index(first), model.calls.index(second)
    for call in model.calls[lo + 1 : hi]:
        if call.receiver == target and is_removal(call.method):
            return True
    return False
