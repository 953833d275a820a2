"""Registrations: calls that attach a callback, hook, reply function or tool to a target.

Which methods register is catalog data (``Catalog.registrations``: ``add_handler``,
``register_reply``, ``add_callback``…). This module finds those calls, works out the target
each one mutates (the receiver, the ``caller=``/``executor=`` agents of AutoGen's
``register_function``, or the framework's global state for ``set_global_handler``) and the
handler it attaches, and answers the two questions behind DUP401 and DUP402: is a registration
made per call on a long-lived target, and is one registration repeated on the same target.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .catalog import Kind, Registration
from .guards import once_only
from .lifetimes import PerCall, bound_outside, is_removal, lifetime, per_call, removed_in_scope
from .model import Call, Function, Model, analysis
from .nodes import code_of
from .vocabulary import HANDLER_KWARGS, OTHER_LIBRARIES, TARGET_KWARGS


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


@analysis
def _imported_tops(model: Model) -> frozenset[str]:
    return frozenset(q.split(".")[0] for q in model.imports.values())


@analysis
def _catalog_tops(model: Model) -> frozenset[str]:
    """Top-level packages of the catalog's callables (``llama_index``, ``agents``…)."""
    return frozenset(n.split(".")[0] for n in model.catalog.by_name)


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
        tops = _catalog_tops(model)
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


# LlamaIndex (llama-index-core 0.10.58 and later, core/callbacks/base.py ``CallbackManager``):
# ``handlers`` is the list add_handler appends to; a component built without
# ``callback_manager=`` takes ``Settings.callback_manager`` (core/settings.py, the engines'
# ``from_defaults``), one manager for the whole process.
_MANAGER_LIST = ".callback_manager.handlers"


@analysis
def _imports_llama_index(model: Model) -> bool:
    return any(q.startswith("llama_index") for q in model.imports.values())


def settings_manager(model: Model, target: str, call: Call) -> bool:
    """``engine.callback_manager`` of a local built by a call that passes no ``callback_manager=``,
    in a file importing LlamaIndex: by default that is the process-wide ``Settings.callback_manager``,
    even though the engine itself is made per request."""
    head, _, rest = target.partition(".")
    if rest != "callback_manager" or not _imports_llama_index(model):
        return False
    bindings = model.bindings_in(head, call.function)
    return bool(bindings) and all(
        b.value_call is not None and b.value_call.kw("callback_manager") is None for b in bindings
    )


@analysis
def sites(model: Model) -> list[Site]:
    """Every registration call of the file, in source order, then the bare decorator ones."""
    out: list[Site] = []
    regs = model.catalog.registrations
    for call in model.calls:
        name = call.method or (call.func or "").rsplit(".", 1)[-1]
        receiver = call.receiver
        if name == "append" and receiver and receiver.endswith(_MANAGER_LIST):
            # ``engine.callback_manager.handlers.append(h)``: add_handler written out by hand
            name, receiver = "add_handler", receiver[: -len(".handlers")]
        reg = regs.get(name) if name else None
        if reg is None or not _matches_receivers(model, call, reg):
            continue
        if receiver:
            targets: tuple[str, ...] = (receiver,)
        elif call.callee is None:
            continue  # a local function that happens to share the name
        else:
            given = tuple(a.dotted for k in TARGET_KWARGS if (a := call.kw(k)) is not None and a.dotted)
            targets = given or ("",)
        handler, node = _handler(call)
        applied = _applied(call)
        if applied is not None and applied.args:
            handler, node = code_of(applied.args[0].value), applied.args[0].value
        decorated = _decorated_by(model, call)
        if decorated is not None:
            handler, node = decorated.name, None
        out.append(Site(call, reg, targets, handler, node, decorator=decorated is not None))
    out.extend(_bare_decorator_sites(model))
    return out


@analysis
def _decorated_functions(model: Model) -> dict[int, Function]:
    """id(decorator expression) → the (first) function it decorates."""
    out: dict[int, Function] = {}
    for fn in model.functions:
        for d in fn.decorators:
            out.setdefault(id(d.node), fn)
    return out


def _decorated_by(model: Model, call: Call) -> Function | None:
    """The function a registration call decorates (``@assistant.register_for_llm(...)``)."""
    return _decorated_functions(model).get(id(call.node))


def _bare_decorator_sites(model: Model) -> list[Site]:
    """``@agent.tool`` (pydantic-ai) without parentheses: no Call record exists, so one is
    made for the decorator expression, placed where the ``def`` runs (its parent function)."""
    regs = model.catalog.registrations
    out = []
    for fn in model.functions:
        if fn.parent is None:
            continue  # module or class level: runs once
        for dec in fn.decorators:
            if dec.call is not None or not dec.dotted or "." not in dec.dotted:
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
                method=method,
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
            if life == "local" and settings_manager(model, target, call):
                life = "settings"
            if life in (None, "local"):
                continue
            if once_only(model, call, target, site.handler) or removed_in_scope(model, call, target):
                continue
            yield PerCallRegistration(site, target, why, life)
            break


# ---------------------------------------------------------------------- DUP402


@analysis
def _binding_seqs(model: Model) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """(head of the target → seqs, target → seqs) of every binding, ascending."""
    by_head: dict[str, list[int]] = {}
    by_target: dict[str, list[int]] = {}
    for b in model.bindings:
        by_head.setdefault(b.target.split(".")[0], []).append(b.seq)
        by_target.setdefault(b.target, []).append(b.seq)
    return by_head, by_target


def _any_between(seqs: list[int], lo: int, hi: int) -> bool:
    """Is some value of the ascending ``seqs`` in ``(lo, hi]``?"""
    at = bisect_right(seqs, lo)
    return at < len(seqs) and seqs[at] <= hi


def _same_object(model: Model, first: Call, second: Call, text: str) -> bool:
    """``text`` names the same object at both calls: no rebinding of its head in between."""
    head = text.replace("()", "").replace("[]", "").split(".")[0]
    if not head:
        return False
    lo, hi = model.order(first), model.order(second)
    by_head, by_target = _binding_seqs(model)
    return not (_any_between(by_head.get(head, []), lo, hi) or _any_between(by_target.get(text, []), lo, hi))


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


def _applied(call: Call) -> cst.Call | None:
    """``agent.register_for_execution()(fetch)``: the call that applies the decorator the
    registration call returns, when there is one."""
    if call.outer:
        outer = call.outer[-1].node
        if type(outer) is cst.Call and outer.func is call.node:
            return outer
    return None


def _same_application(first: Call, second: Call) -> bool:
    """Two registrations through a decorator factory register the same thing only when they
    are applied to the same function (``reg()(score)`` and ``reg()(fetch)`` are two tools)."""
    a, b = _applied(first), _applied(second)
    if a is None and b is None:
        return True
    return a is not None and b is not None and a.deep_equals(b)


def repeated_registrations(model: Model) -> Iterator[tuple[Site, Site]]:
    """(first, second): the same registration call (same target, handler and arguments)
    made twice on one path through one scope, with the target not rebound in between."""
    all_sites = [site for site in sites(model) if not site.decorator]  # each decorates another def
    # only the same method called with the same text, in one scope, can repeat a registration
    earlier: dict[tuple[object, ...], list[Site]] = {}
    for second in all_sites:
        call = second.call
        key = (
            second.method,
            call.function,
            call.in_main,
            call.func,
            tuple((a.keyword, a.star, a.dotted) for a in call.args),
        )
        group = earlier.setdefault(key, [])
        for first in group:
            if not first.call.node.deep_equals(call.node) or not _on_path(first.call, call):
                continue
            if not _same_application(first.call, call):
                continue  # one decorator factory applied to two functions: two registrations
            texts = [t for t in second.targets if t] + [a.dotted for a in second.call.args if a.dotted]
            if not all(_same_object(model, first.call, second.call, t) for t in texts):
                continue
            if any(removed_in_scope_between(model, first.call, second.call, t) for t in second.targets if t):
                continue
            if _deduped_by_target(model, second):
                continue
            yield first, second
            break
        group.append(second)


@analysis
def _removal_orders(model: Model) -> dict[str | None, list[int]]:
    """Receiver → source order of the calls that undo a registration on it, ascending."""
    out: dict[str | None, list[int]] = {}
    for i, call in enumerate(model.calls):
        if is_removal(call.method):
            out.setdefault(call.receiver, []).append(i)
    return out


def removed_in_scope_between(model: Model, first: Call, second: Call, target: str) -> bool:
    """Is the registration on ``target`` undone between the two calls?"""
    lo, hi = model.order(first), model.order(second)
    return _any_between(_removal_orders(model).get(target, []), lo, hi - 1)
