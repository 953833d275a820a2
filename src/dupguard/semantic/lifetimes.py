"""How long an object lives, how often a line runs, and whether a mutation is guarded.

The handler and tool-list rules (DUP303, DUP401, DUP402) flag a mutation of a *long-lived*
object (a callback manager, an agent, a tool list) made by code that runs *per call*. Both
halves must hold for a finding, so both are decided here from the model's records:

- long-lived: bound at module level, imported (``Settings.callback_manager``), a class
  attribute, an attribute of the single module-level instance of a class, or returned by a
  cached factory. A local or a parameter is not (its lifetime is unknown or one call).
- per call: a request handler or worker task (``Model.is_concurrent_context``), a loop whose
  body also runs an agent turn, or a plain function that itself runs an agent turn (so it runs
  once per conversation turn). Startup hooks and ``__main__`` code run once.
- guarded: the mutation sits under ``if h not in cm.handlers:``/``if not _registered:`` (or
  after such an early return), or the function is cached (runs once).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import entrypoints as ep
from .catalog import Kind
from .model import Call, Function, Loop, Model, string_value

if TYPE_CHECKING:
    import libcst as cst

# Methods that run one agent turn (a superset of the catalog's run methods for agents that
# the catalog does not know; the receiver must still look like an agent, see ``runs_agent``).
RUN_METHODS = frozenset(
    {
        "chat",
        "achat",
        "stream_chat",
        "astream_chat",
        "run",
        "arun",
        "run_sync",
        "run_streamed",
        "run_stream",
        "invoke",
        "ainvoke",
        "stream",
        "astream",
        "invoke_async",
        "stream_async",
        "initiate_chat",
        "a_initiate_chat",
        "generate_reply",
        "a_generate_reply",
        "kickoff",
        "kickoff_async",
        "on_messages",
        "run_stream_events",
    }
)
# Receiver names that denote an agent-like runnable when the catalog cannot classify it.
AGENT_WORDS = (
    "agent",
    "assistant",
    "crew",
    "executor",
    "runner",
    "proxy",
    "team",
    "chain",
    "graph",
    "workflow",
    "bot",
    "planner",
    "researcher",
    "swarm",
)
CACHING = {
    "functools.lru_cache",
    "functools.cache",
    "functools.cached_property",
    "streamlit.cache_resource",
    "streamlit.experimental_singleton",
    "cachetools.cached",
}
# Words in an ``if`` test that mark a register-once flag (``if not _tracing_installed:``).
FLAG_WORDS = (
    "registered",
    "installed",
    "initialized",
    "initialised",
    "configured",
    "attached",
    "hooked",
    "_setup",
    "setup_done",
    "_done",
    "already",
    "once",
    "seen",
)
REMOVE_PREFIXES = ("remove", "unregister", "deregister", "discard")
REMOVE_METHODS = {"set_handlers", "clear_handlers", "reset_handlers", "clear_hooks", "clear_callbacks"}


def is_removal(method: str | None) -> bool:
    """``remove_handler``, ``set_handlers([])``…: undoes a registration (``agent.reset()``,
    which clears chat history, does not)."""
    return bool(method) and (method.startswith(REMOVE_PREFIXES) or method in REMOVE_METHODS)


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


# ---------------------------------------------------------------------- expressions


def names_in(node: cst.CSTNode) -> Iterator[str]:
    """Dotted names read anywhere in a small expression (an ``if`` test, an argument)."""
    import libcst as cst

    from .builder import dotted

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Name, cst.Attribute)):
            text = dotted(current)
            if text:
                yield text
            if isinstance(current, cst.Attribute):
                stack.append(current.value)
            continue
        stack.extend(current.children)


def strings_in(node: cst.CSTNode) -> Iterator[str]:
    """String constants in a small expression (``getattr(app.state, "hooks_installed", False)``)."""
    import libcst as cst

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.SimpleString):
            value = string_value(current)
            if isinstance(value, str):
                yield value
            continue
        stack.extend(current.children)


def has_membership_test(node: cst.CSTNode) -> bool:
    import libcst as cst

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Comparison) and any(
            isinstance(c.operator, (cst.In, cst.NotIn)) for c in current.comparisons
        ):
            return True
        stack.extend(current.children)
    return False


def code_of(node: cst.CSTNode) -> str:
    import libcst as cst

    return cst.Module(body=[]).code_for_node(node).strip()


# ---------------------------------------------------------------------- agent turns


def _agent_tops(model: Model) -> set[str]:
    cached = getattr(model, "_dg_agent_tops", None)
    if cached is None:
        cached = {name.split(".")[0] for name in model.catalog.by_name}
        model._dg_agent_tops = cached  # type: ignore[attr-defined]
    return cached


def runs_agent(model: Model, call: Call) -> bool:
    """Does this call run an agent turn (``agent.chat``, ``Runner.run``, ``agent("...")``…)?"""
    if call.method in RUN_METHODS and call.receiver:
        if call.callee is not None:
            # Runner.run(...), imported agent objects; never asyncio.run / subprocess.run
            return call.callee.split(".")[0] in _agent_tops(model)
        head = call.receiver.split(".")[0].replace("()", "").replace("[]", "")
        binding = model.local_binding(head, call.function) if "." not in call.receiver else None
        if binding is not None and binding.value_call is not None:
            kind, _ = model.kind_of_expr_call(binding.value_call)
            if kind in (Kind.AGENT, Kind.STATELESS):
                return True
        last = call.receiver.rsplit(".", 1)[-1].lower()
        return any(word in last for word in AGENT_WORDS)
    if call.method is None and call.func and "." not in call.func and "(" not in call.func:
        binding = model.local_binding(call.func, call.function)
        if binding is not None and binding.value_call is not None:
            _, entry = model.kind_of_expr_call(binding.value_call)
            return entry is not None and "__call__" in entry.run_methods
    return False


# ---------------------------------------------------------------------- how often code runs


def _runs_once(model: Model, fn: Function) -> bool:
    contexts = fn.contexts | fn.reached_from
    if ep.STARTUP in fn.contexts or (ep.SCRIPT in contexts and not (contexts & {ep.HANDLER, ep.WORKER})):
        return True
    if fn.name in ("__init__", "__post_init__", "setup", "startup", "on_startup", "lifespan", "main"):
        return True
    if any(d.callee in CACHING for d in fn.decorators):
        return True
    # a script's ``run()`` called once at the bottom of the module, outside any loop
    sites = [c for c in model.calls if model.called_function(c) is fn]
    return bool(sites) and all(c.function is None and not c.loops for c in sites)


def per_call(model: Model, call: Call) -> PerCall | None:
    """Why ``call`` runs once per request, job or agent turn, or None if it runs once."""
    fn = call.function
    if model.is_concurrent_context(fn, call.in_main) and fn is not None:
        if any(d.callee in CACHING for d in fn.decorators):
            return None
        contexts = model.contexts_of(fn)
        kind = "handler" if ep.HANDLER in contexts else "worker"
        direct = fn.contexts & {ep.HANDLER, ep.WORKER}
        return PerCall(kind if direct else f"{kind}-helper", fn.name)
    if fn is None and model.is_streamlit and not call.in_main:
        return PerCall("streamlit", "the Streamlit script")
    loop = innermost_loop(call)
    if loop is not None and any(
        loop in other.loops and runs_agent(model, other) for other in model.calls if other.function is fn
    ):
        return PerCall("loop", fn.name if fn else "<module>", loop)
    if fn is not None and not _runs_once(model, fn):
        if any(runs_agent(model, other) for other in fn.calls):
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


def module_instances(model: Model) -> set[str]:
    """Local classes instantiated once at module level (``service = ChatService()``)."""
    out = set()
    for b in model.bindings:
        if b.scope == "module" and not b.in_main and b.value_call is not None and b.value_call.func in model.classes:
            out.add(b.value_call.func)
    return out


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
        if factory is not None and any(d.callee in CACHING for d in factory.decorators):
            return "cached"
        return None
    if fn is not None and head in ("self", "cls"):
        if fn.class_name is None or "." not in text:
            return None
        attr = text.split(".")[1]
        if any(b.scope == "class" and b.class_name == fn.class_name and b.target == attr for b in model.bindings):
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
        if model.is_streamlit:
            # a Streamlit script re-runs top to bottom: its module-level objects are rebuilt
            # each time, unless they come from a cached factory (``st.cache_resource``)
            factory = model.function_named(binding.value_call.func or "") if binding.value_call else None
            cached = factory is not None and any(d.callee in CACHING for d in factory.decorators)
            return "cached" if cached else None
        return "module"
    if head in model.classes:
        return "class"
    return None


def bound_outside(model: Model, text: str, call: Call, loop: Loop) -> bool:
    """Is the local ``text`` bound before ``loop`` rather than inside it?"""
    import libcst as cst

    head = _head(text)
    body = loop.node.body if isinstance(loop.node, (cst.For, cst.While)) else None
    if body is None:
        return False
    bindings = [b for b in model.bindings if b.function is call.function and b.target == head]
    return bool(bindings) and all(id(body) not in b.branch for b in bindings)


# ---------------------------------------------------------------------- guards


def _mentions(test: cst.CSTNode, texts: tuple[str, ...], flags: set[str]) -> bool:
    if has_membership_test(test):
        return True
    if any(any(word in text.lower() for word in FLAG_WORDS) for text in strings_in(test)):
        return True
    for name in names_in(test):
        lowered = name.lower()
        if any(word in lowered for word in FLAG_WORDS):
            return True
        if name in flags:
            return True
        if any(t and (name == t or name.startswith(t + ".")) for t in texts):
            return True
    return False


def is_guarded(model: Model, call: Call, *texts: str) -> bool:
    """Is ``call`` behind a check that makes it run once: a membership test, a register-once
    flag, a test of the mutated object itself (``if not cm.handlers:``), or a module-level flag
    the function rebinds (``global _ready``)?"""
    fn = call.function
    flags = set(fn.global_names) if fn is not None else set()
    tests = list(call.conditions)
    scope = fn
    while scope is not None:
        tests.extend(scope.exit_tests)
        scope = scope.parent
    return any(_mentions(test, texts, flags) for test in tests)


def removed_in_scope(model: Model, call: Call, target: str) -> bool:
    """Is the registration undone in the same function (``remove_handler`` in a ``finally``)?"""
    for other in model.calls:
        if other is call or other.function is not call.function or not is_removal(other.method):
            continue
        if other.receiver is not None and other.receiver in (call.receiver, target):
            return True
    return False
