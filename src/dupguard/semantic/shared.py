"""Shared objects: stateful agents and memories that outlive one request, and their uses.

The questions behind DUP101/DUP102 (and the fan-out rules): which agent or memory is bound
where every request reaches it (module, class, ``app.state``, a cached factory, an instance
created once), and which unguarded calls run or mutate it from per-request code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .catalog import USER_RUN_METHODS, Entry, Kind
from .model import Binding, Call, Function, Model, _is_name

if TYPE_CHECKING:
    import libcst as cst


CACHING_DECORATORS = {
    "functools.lru_cache",
    "functools.cache",
    "streamlit.cache_resource",
    "streamlit.experimental_singleton",
    "cachetools.cached",
}
LOCK_WORDS = ("lock", "semaphore", "mutex", "limiter")
GUARD_METHODS = {"hold", "ahold", "use", "ause", "acquire"}
GUARD_DECORATOR_WORDS = ("guarded", "synchronized", "serialized")


@dataclass(eq=False)
class Shared:
    """An object that outlives one request: what it is, where it is bound, how it is reached."""

    label: str  # how the user refers to it: "agent", "app.state.agent", "get_agent()"
    report_node: cst.CSTNode  # where a finding about it is reported
    kind: Kind
    entry: Entry | None
    binding: Binding | None = None
    factory: Function | None = None  # a cached factory that returns it
    owner_class: str | None = None  # a class whose module-level instance holds it (self.x)


def _lock_like(text: str) -> bool:
    lowered = text.lower()
    if any(word in lowered for word in LOCK_WORDS):
        return True
    tail = lowered.rsplit(".", 1)[-1]
    return tail.rstrip("()") in GUARD_METHODS and tail.endswith("()")


def is_guarded(call: Call) -> bool:
    """Is the call inside ``with <lock>:`` / ``async with guard.hold():`` or a guarded function?"""
    if any(_lock_like(w) for w in call.withs):
        return True
    fn = call.function
    while fn is not None:
        for dec in fn.decorators:
            text = (dec.dotted or "").lower()
            if any(word in text for word in GUARD_DECORATOR_WORDS):
                return True
        fn = fn.parent
    return False


def shared_objects(model: Model) -> Iterator[Shared]:
    """Every stateful object (agent or memory) that outlives a request in this file."""
    stateful = (Kind.AGENT, Kind.MEMORY)
    instantiated_once = _module_level_instances(model)
    for b in model.bindings:
        if b.in_main or b.value_call is None:
            continue
        kind, entry = model.kind_of_expr_call(b.value_call)
        if kind not in stateful:
            continue
        if b.scope == "module" and not model.is_streamlit:
            yield Shared(b.target, b.statement, kind, entry, binding=b)
        elif b.scope == "class":
            yield Shared(f"{b.class_name}.{b.target}", b.statement, kind, entry, binding=b)
        elif (
            b.scope == "function"
            and ".state." in f".{b.target}"
            and b.function
            and (b.function.contexts & {"startup"} or b.function.name in ("lifespan", "startup", "on_startup"))
        ):
            yield Shared(b.target, b.statement, kind, entry, binding=b)
        elif (
            b.scope == "function"
            and b.target.startswith("self.")
            and b.function is not None
            and b.function.name == "__init__"
            and b.class_name in instantiated_once
        ):
            yield Shared(b.target, b.statement, kind, entry, binding=b, owner_class=b.class_name)
    for fn in model.functions:
        if not any(d.callee in CACHING_DECORATORS for d in fn.decorators):
            continue
        for ret in fn.returns:
            ret_call = model.call_for_node(ret)
            if ret_call is None and _is_name(ret):
                binding = model.local_binding(ret.value, fn)  # type: ignore[attr-defined]
                ret_call = binding.value_call if binding else None
            kind, entry = model.kind_of_expr_call(ret_call)
            if kind in stateful:
                yield Shared(f"{fn.name}()", ret, kind, entry, factory=fn)
                break


def _module_level_instances(model: Model) -> set[str]:
    """Local classes instantiated once at module level (``service = ChatService()``)."""
    out = set()
    for b in model.bindings:
        if b.scope == "module" and not b.in_main and b.value_call is not None:
            name = b.value_call.func
            if name in model.classes:
                out.add(name)
    return out


def _texts(call: Call, shared: Shared) -> list[str]:
    """The expressions in ``call`` that could be the shared object being run or mutated."""
    entry = shared.entry
    run_methods = set(entry.run_methods) if entry is not None else set(USER_RUN_METHODS)
    texts = []
    if call.receiver and (shared.kind is Kind.MEMORY or call.method in run_methods):
        texts.append(call.receiver)
    if call.func and "__call__" in run_methods:
        texts.append(call.func)
    for arg in call.args:
        if not arg.dotted:
            continue
        if shared.kind is Kind.MEMORY or call.method in run_methods:
            # a memory passed anywhere, or an agent handed to another agent's run
            # (``user_proxy.initiate_chat(assistant, ...)`` runs both)
            texts.append(arg.dotted)
        else:
            head, _, method = arg.dotted.rpartition(".")
            if head and method in run_methods:
                texts.append(head)
    return texts


def _refers(model: Model, call: Call, shared: Shared, text: str) -> bool:
    fn = call.function
    if fn is not None and "." not in text and "(" not in text:
        # a local alias: ``agent = request.app.state.agent`` or ``bot = self.agent``
        alias = model.local_binding(text, fn)
        if alias is not None and alias.function is fn and alias.value_dotted:
            text = alias.value_dotted
    b = shared.binding
    if shared.factory is not None:
        factory = shared.factory.name
        if text == f"{factory}()":
            return True
        if "." in text or "(" in text:
            return False
        local = model.local_binding(text, fn)  # module level too: ``agent = load_agent()`` in Streamlit
        if local is not None and local.value_call is not None and local.value_call.func == factory:
            return True
        if fn is not None and text in fn.params:
            default = fn.param_defaults.get(text)
            annotation = fn.param_annotations.get(text)
            return any(_depends_on(model, node, factory) for node in (default, annotation) if node is not None)
        return False
    assert b is not None
    if shared.owner_class is not None:
        return text == b.target and fn is not None and fn.class_name == shared.owner_class
    if b.scope == "class":
        return text == f"{b.class_name}.{b.target}" or (
            text == f"self.{b.target}" and fn is not None and fn.class_name == b.class_name
        )
    if ".state." in f".{b.target}":
        suffix = "state." + b.target.rpartition("state.")[2]
        return text == b.target or text.endswith("." + suffix)
    if text != b.target:
        return False
    if fn is None:
        return True
    return model.local_binding(text, fn) is b


def _depends_on(model: Model, node: cst.CSTNode, factory: str) -> bool:
    """``Depends(get_agent)`` or ``Annotated[Agent, Depends(get_agent)]``."""
    for call in model.calls:
        if (
            call.callee in ("fastapi.Depends", "fastapi.params.Depends")
            and call.args
            and call.args[0].dotted == factory
        ):
            if _contains(node, call.node):
                return True
    return False


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    if outer is inner:
        return True
    return any(_contains(child, inner) for child in outer.children)


def uses_in_concurrent_code(model: Model, shared: Shared) -> list[Call]:
    """Unguarded calls that run or mutate ``shared`` from code that runs per request/job."""
    found = []
    for call in model.calls:
        concurrent = model.is_concurrent_context(call.function, call.in_main) or (
            shared.factory is not None and call.function is None and model.is_streamlit
        )
        if not concurrent or is_guarded(call):
            continue
        if any(_refers(model, call, shared, text) for text in _texts(call, shared)):
            found.append(call)
    return found


def uses_through_history_getter(model: Model, memory: Shared) -> tuple[list[Call], str]:
    """Per-request runs of a runnable whose session-history getter returns ``memory`` whatever
    the session id (``RunnableWithMessageHistory(chain, lambda session_id: history)``): the
    wrapper is shared by design, but every session then reads and writes that one history.
    Returns the runs and the wrapper's name, for the message."""
    if memory.binding is None or memory.binding.scope != "module" or memory.owner_class is not None:
        return [], ""
    for wrapper in model.bindings:
        call = wrapper.value_call
        entry = model.entry_for_call(call)
        if call is None or entry is None or not entry.history_getters or wrapper.in_main:
            continue
        getter = next((arg for key in entry.history_getters if (arg := call.arg(key)) is not None), None)
        if getter is None or not _always_returns(model, getter.node, memory.binding, call.function):
            continue
        found = uses_in_concurrent_code(
            model, Shared(wrapper.target, wrapper.statement, entry.kind, entry, binding=wrapper)
        )
        if found:
            return found, wrapper.target
    return [], ""


def _always_returns(model: Model, getter: cst.BaseExpression, memory: Binding, where: Function | None) -> bool:
    """Does the getter (a lambda, or the name of a function defined here) return ``memory``
    on every return, without looking at its arguments?"""
    import libcst as cst

    if isinstance(getter, cst.Lambda):
        params = getter.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
        body = getter.body
        return _is_name(body) and body.value not in names and model.local_binding(body.value, where) is memory  # type: ignore[attr-defined]
    if not _is_name(getter):
        return False
    fn = model.function_named(getter.value, within=where)  # type: ignore[attr-defined]
    return (
        fn is not None
        and bool(fn.returns)
        and all(
            _is_name(ret) and model.local_binding(ret.value, fn) is memory
            for ret in fn.returns  # type: ignore[attr-defined]
        )
    )
