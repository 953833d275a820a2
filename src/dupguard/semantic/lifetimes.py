"""How long an object lives, how often a line runs, and whether a mutation is guarded.

The handler and tool-list rules (DUP303, DUP401, DUP402) flag a mutation of a *long-lived*
object (a callback manager, an agent, a tool list) made by code that runs *per call*. Both
halves must hold for a finding, so both are decided here from the model's records:

- long-lived: bound at module level, imported (``Settings.callback_manager``), a class
  attribute, an attribute of the single module-level instance of a class, or returned by a
  cached factory. A local or a parameter is not (its lifetime is unknown or one call).
- per call: a request handler or worker task (``Model.is_concurrent_context``), a loop whose
  body also runs an agent turn, or a plain function that itself runs an agent turn (so it runs
  once per conversation turn; "runs an agent turn" is ``runs.agent_run``). Startup hooks,
  cached functions and ``__main__`` code run once.
- guarded: the mutation sits under ``if h not in cm.handlers:``/``if not _registered:`` (or
  after such an early return): ``guards.once_only``.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from . import entrypoints as ep
from .catalog_data import RUN_ONCE_CACHES
from .hosts import reruns_per_session, streamlit_page
from .model import Call, Function, Loop, Model, analysis
from .runs import agent_run
from .vocabulary import REMOVE_METHODS, REMOVE_PREFIXES


def is_removal(method: str | None) -> bool:
    """``remove_handler``, ``set_handlers([])``…: undoes a registration (``agent.reset()``,
    which clears chat history, does not)."""
    if not method:
        return False
    return method.startswith(REMOVE_PREFIXES) or method in REMOVE_METHODS


@dataclass(frozen=True)
class PerCall:
    """Why a line runs once per request/job/turn: ``kind`` is "handler", "worker" (or
    "handler-helper"/"worker-helper" for a function they reach), "loop" or "function"; ``where``
    names the function; ``loop`` is set for a loop."""

    kind: str
    where: str
    loop: Loop | None = None

    def describe(self, line_of_loop: int | None = None) -> str:
        if self.kind == "handler":
            return f"request handler `{self.where}`"
        if self.kind == "worker":
            return f"worker task `{self.where}`"
        if self.kind == "handler-helper":
            return f"`{self.where}`, which runs per request (a request handler calls it)"
        if self.kind == "worker-helper":
            return f"`{self.where}`, which runs per job (a worker task calls it)"
        if self.kind == "streamlit":
            return "Streamlit script code, which re-runs on every interaction"
        if self.kind == "loop":
            at = f" at line {line_of_loop}" if line_of_loop else ""
            return f"the loop{at} that runs the agent on every iteration"
        return f"`{self.where}`, which runs the agent on every call"


# ---------------------------------------------------------------------- how often code runs


def _cached(fn: Function) -> bool:
    return any(d.callee in RUN_ONCE_CACHES for d in fn.decorators)


@analysis
def _runs_once(model: Model, fn: Function) -> bool:
    contexts = fn.contexts | fn.reached_from
    if ep.STARTUP in fn.contexts or (ep.SCRIPT in contexts and not (contexts & {ep.HANDLER, ep.WORKER})):
        return True
    if fn.name in ("__init__", "__post_init__", "setup", "startup", "on_startup", "lifespan", "main"):
        return True
    if _cached(fn):
        return True
    # a script's ``run()`` called once at the bottom of the module, outside any loop
    sites = model.callers(fn)
    return bool(sites) and all(c.function is None and not c.loops for c in sites)


@analysis
def _loop_runs_agent(model: Model, loop: Loop) -> bool:
    """Does a call directly in ``loop``'s function, inside the loop, run an agent turn?"""
    return any(
        other.function is loop.function and agent_run(model, other) is not None for other in model.calls_in(loop)
    )


@analysis
def _function_runs_agent(model: Model, fn: Function) -> bool:
    return any(agent_run(model, other) is not None for other in fn.calls)


def per_call(model: Model, call: Call) -> PerCall | None:
    """Why ``call`` runs once per request, job or agent turn, or None if it runs once."""
    fn = call.function
    if model.is_concurrent_context(fn, call.in_main) and fn is not None:
        if _cached(fn):
            return None
        contexts = model.contexts_of(fn)
        kind = "handler" if ep.HANDLER in contexts else "worker"
        direct = fn.contexts & {ep.HANDLER, ep.WORKER}
        return PerCall(kind if direct else f"{kind}-helper", fn.name)
    if fn is None and streamlit_page(model):
        return PerCall("streamlit", "the Streamlit script")
    loop = innermost_loop(call)
    if loop is not None and _loop_runs_agent(model, loop):
        return PerCall("loop", fn.name if fn else "<module>", loop)
    if fn is not None and not _runs_once(model, fn) and _function_runs_agent(model, fn):
        return PerCall("function", fn.name)
    return None


def innermost_loop(call: Call) -> Loop | None:
    for loop in reversed(call.loops):
        if loop.function is call.function and loop.kind in ("for", "while"):
            return loop
    return None


# ---------------------------------------------------------------------- how long objects live


def _head(text: str) -> str:
    return text.split(".")[0]


@analysis
def module_instances(model: Model) -> frozenset[str]:
    """Local classes instantiated once at module level (``service = ChatService()``)."""
    out = set()
    for b in model.bindings:
        if b.scope == "module" and not b.in_main and b.value_call is not None and b.value_call.func in model.classes:
            out.add(b.value_call.func)
    return frozenset(out)


def lifetime(model: Model, text: str | None, call: Call) -> str | None:
    """ "global", "module", "class", "singleton", "cached" or "local"; None when unknown
    (a parameter, an enclosing function's local, a call result)."""
    if not text:
        return None
    head = _head(text)
    fn = call.function
    if "()" in text or "[]" in text:
        # only ``get_agent().hooks`` where ``get_agent`` is a module-level cached factory;
        # ``IOLoop.current()`` or ``make_agent()`` may build a new object per call
        before, _, _ = text.partition("()")
        factory = model.function_named(before) if "." not in before and "[]" not in before else None
        if factory is not None and _cached(factory):
            return "cached"
        return None
    if fn is not None and head in ("self", "cls"):
        if fn.class_name is None or "." not in text:
            return None
        attr = text.split(".")[1]
        if any(b.scope == "class" for b in model.member_bindings(fn.class_name, attr)):
            return "class"
        if fn.class_name in module_instances(model):
            return "singleton"
        return None
    scope = fn
    while scope is not None:
        if head in scope.local_names and head not in scope.global_names:
            return "local" if scope is fn and head not in fn.params else None
        scope = scope.parent
    if head in model.imports:
        return "global"
    binding = model.module_binding(head)
    if binding is not None:
        if reruns_per_session(model):
            # a Streamlit page (or a servable Panel script) re-runs top to bottom: its
            # module-level objects are rebuilt each time, unless they come from a cached factory
            factory = model.function_named(binding.value_call.func or "") if binding.value_call else None
            return "cached" if factory is not None and _cached(factory) else None
        return "module"
    if head in model.classes:
        return "class"
    return None


def bound_outside(model: Model, text: str, call: Call, loop: Loop) -> bool:
    """Is the local ``text`` bound before ``loop`` rather than inside it?"""
    node = loop.node
    body = node.body if type(node) is cst.For or type(node) is cst.While else None
    if body is None:
        return False
    bindings = model.bindings_in(_head(text), call.function)
    return bool(bindings) and all(id(body) not in b.branch for b in bindings)


# ---------------------------------------------------------------------- removals


@analysis
def _removals(model: Model) -> dict[Function | None, list[Call]]:
    """Function (None: module level) → its calls that undo a registration, in source order."""
    out: dict[Function | None, list[Call]] = {}
    for call in model.calls:
        if is_removal(call.method):
            out.setdefault(call.function, []).append(call)
    return out


def removed_in_scope(model: Model, call: Call, target: str) -> bool:
    """Is the registration undone in the same function (``remove_handler`` in a ``finally``)?"""
    for other in _removals(model).get(call.function, ()):
        if other is not call and other.receiver is not None and other.receiver in (call.receiver, target):
            return True
    return False
