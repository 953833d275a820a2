"""DUP107 agent-behind-long-lived-server: one stateful agent, held by an object a server keeps
for the life of the process, run for every client and never serialised.

Two holders the module-level rule (DUP101) does not see:

- a **served object**: an A2A ``AgentExecutor`` subclass, or an object handed to a server that
  keeps it (``DefaultRequestHandler(agent_executor=executor)``, entrypoints.LONG_LIVED_HOLDERS),
  or an object such a served object builds in its ``__init__`` (a wrapper around the agent),
  whose ``__init__`` stores a stateful agent in ``self.<x>`` and whose methods run it;
- an **agent registry**: a module-level dict (or a served object's ``self.<x>`` dict) whose
  values are stateful agents, looked up by name and run by per-request code
  (``AGENTS[name].run(...)``; kyegomez/swarms#2047, the AOP server that exposes each registered
  agent as an MCP tool).

A2A's request handler starts every message in a task of its own, MCP servers run every
client's tool calls on one event loop: runs of one agent overlap and share its history. A run
under a lock (``with lock:``, ``InvocationGuard``) is serialised and not reported; a reset
alone is not enough, as the swarms fix notes, since concurrent runs still share the memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ...semantic import entrypoints as ep
from ...semantic.catalog import Entry, Kind
from ...semantic.guards import serialised
from ...semantic.lifetimes import module_instances
from ...semantic.model import Binding, Call, Model
from ...semantic.nodes import dotted
from ...semantic.request_state import per_request
from ..registry import Finding, RuleContext, rule

A2A_EXECUTORS = frozenset(b for b in ep.HANDLER_BASES if b.startswith("a2a."))


@dataclass(frozen=True)
class HeldAgent:
    binding: Binding  # ``self.agent = Agent(...)`` or the registry's binding
    entry: Entry
    holder: str  # for the message
    run: Call  # one run of it


def _stateful(model: Model, call: Call | None) -> Entry | None:
    kind, entry = model.kind_of_expr_call(call)
    return entry if kind is Kind.AGENT and entry is not None else None


def _typed_parameter(model: Model, fn, binding: Binding) -> Entry | None:
    """``self.agent = agent`` where ``agent`` is a parameter of ``__init__`` annotated with a
    stateful agent class (``def __init__(self, agent: strands.Agent)``): whatever the caller
    builds, the served object keeps that one agent for the server's life. Strands' early
    ``StrandsA2AExecutor``, copied into applications, has this shape (zjaco13/ai-on-eks,
    bench/real-apps/labels-d.toml). An unannotated parameter says nothing about its kind and is
    left alone."""
    name = dotted(binding.value)
    if not name or "." in name or name not in fn.params:
        return None
    annotation = fn.param_annotations.get(name)
    qualified = model.resolve(dotted(annotation)) if annotation is not None else None
    entry = model.catalog.lookup(qualified) if qualified else None
    return entry if entry is not None and entry.kind is Kind.AGENT else None


def _class_of(model: Model, node, fn) -> str | None:
    """The local class whose instance ``node`` is: ``Executor(...)`` or a name bound to one."""
    call = model.call_for_node(node)
    if call is None:
        text = dotted(node)
        if text and "." not in text and "(" not in text and "[" not in text:
            binding = model.local_binding(text, fn)
            call = binding.value_call if binding is not None else None
    if call is not None and call.func in model.classes:
        return call.func
    return None


def _a2a_executor(model: Model, name: str, depth: int = 0) -> bool:
    bases = model.classes.get(name, [])
    if any(base in A2A_EXECUTORS for base in bases):
        return True
    return depth < 3 and any(base in model.classes and _a2a_executor(model, base, depth + 1) for base in bases)


def _served_classes(model: Model) -> dict[str, str]:
    """Local classes whose instances a server keeps, with why (for the message), closed over
    the objects their ``__init__`` builds."""
    served: dict[str, str] = {}
    for name in model.classes:
        if _a2a_executor(model, name):
            served[name] = f"the A2A executor `{name}` (one per server)"
    for call in model.calls:
        spec = ep.LONG_LIVED_HOLDERS.get(call.callee or "")
        if spec is None:
            continue
        keyword, index = spec
        arg = call.kw(keyword) or call.arg(str(index))
        cls = _class_of(model, arg.node, call.function) if arg is not None else None
        if cls is not None:
            served.setdefault(cls, f"`{cls}`, which `{call.func}(...)` keeps for the life of the server")
    changed = True
    while changed:
        changed = False
        for fn in model.functions:
            if fn.name != "__init__" or fn.class_name not in served:
                continue
            for call in fn.calls:
                if call.func in model.classes and call.func not in served:
                    served[call.func] = f"`{call.func}` (built once by {served[fn.class_name]})"
                    changed = True
    return served


def _runs(model: Model, call: Call, text: str, entry: Entry) -> bool:
    """Does ``call`` run the agent ``text`` refers to (``self.agent.invoke_async(...)``,
    ``self.agent(...)``)?"""
    if call.receiver == text and call.method in entry.run_methods:
        return True
    return call.func == text and "__call__" in entry.run_methods


def _instance_agents(model: Model, served: dict[str, str]) -> Iterator[HeldAgent]:
    singletons = module_instances(model)
    for cls, why in served.items():
        if cls in singletons:
            continue  # one module-level instance: DUP101 reports its agent
        for fn in model.functions:
            if fn.class_name != cls or fn.name != "__init__":
                continue
            for binding in model.bindings_under(fn.node.body):
                if (
                    binding.function is not fn
                    or not binding.target.startswith("self.")
                    or binding.target.count(".") != 1
                ):
                    continue
                entry = _stateful(model, binding.value_call) or _typed_parameter(model, fn, binding)
                if entry is None:
                    continue
                run = next(
                    (
                        c
                        for c in model.calls
                        if c.function is not None
                        and c.function.class_name == cls
                        and c.function.name != "__init__"
                        and _runs(model, c, binding.target, entry)
                    ),
                    None,
                )
                if run is not None and not serialised(run):
                    yield HeldAgent(binding, entry, why, run)


def _registry_values(model: Model, binding: Binding) -> Entry | None:
    import libcst as cst

    if isinstance(binding.value, cst.Dict):
        for element in binding.value.elements:
            if isinstance(element, cst.DictElement):
                entry = _stateful(model, model.call_for_node(element.value))
                if entry is not None:
                    return entry
    return None


def _registries(model: Model, served: dict[str, str]) -> Iterator[tuple[str, Binding, Entry]]:
    """(name as per-request code writes it, binding, the agents' entry) for dicts of agents:
    module level, or ``self.x`` of a served class; a dict literal of agent constructors, or
    ``x[key] = Agent(...)`` once (module level, start-up, ``__init__``)."""
    seen: set[str] = set()
    for b in model.bindings:
        if b.in_main:
            continue
        fn = b.function
        module_level = b.scope == "module" and fn is None
        in_init = fn is not None and fn.name == "__init__" and fn.class_name in served and b.target.startswith("self.")
        once = fn is not None and (ep.STARTUP in fn.contexts or fn.name in ("lifespan", "startup", "setup"))
        if b.target.endswith("[]") and (module_level or in_init or once):
            entry = _stateful(model, b.value_call)
            name = b.target[:-2]
        elif module_level or in_init:
            entry = _registry_values(model, b)
            name = b.target
        else:
            continue
        if entry is not None and name not in seen and "[" not in name:
            seen.add(name)
            yield name, b, entry


def _registry_runs(model: Model, name: str, entry: Entry) -> Call | None:
    lookups = {f"{name}[]", f"{name}.get()"}
    for call in model.calls:
        fn = call.function
        if fn is None or per_request(model, fn) is None or serialised(call):
            continue
        receiver = call.receiver or ""
        head = receiver.split(".")[0]
        if receiver in lookups or call.func in lookups:
            target = receiver if receiver in lookups else (call.func or "")
        elif head and "(" not in head and "[" not in head:
            alias = model.local_binding(head, fn)
            if alias is None or alias.function is not fn:
                continue
            looked = dotted(alias.value)
            if looked not in lookups and (alias.value_call is None or alias.value_call.func != f"{name}.get"):
                continue
            target = head
        else:
            continue
        if _runs(model, call, target, entry) or (call.receiver == target and call.method in entry.run_methods):
            return call
    return None


@dataclass(frozen=True)
class HostedAgent:
    node: object  # the agent's binding statement, or the host call when the agent is built inline
    entry: Entry
    host: Call  # ``GradioUI(agent)``


def _truthy(call: Call, keyword: str) -> bool:
    """Is ``keyword`` passed, as anything but a literal ``False``/``None`` (a variable may be true)?"""
    arg = call.kw(keyword)
    return arg is not None and arg.dotted not in ("False", "None")


def hosted_agents(model: Model) -> Iterator[HostedAgent]:
    """A stateful agent handed to a UI host that keeps it and runs it for every visitor
    (``entrypoints.AGENT_HOSTS``: smolagents' ``GradioUI``), unless the host is told to start
    each run afresh."""
    for call in model.calls:
        spec = ep.AGENT_HOSTS.get(call.callee or "")
        if spec is None:
            continue
        keyword, index, fresh = spec
        if _truthy(call, fresh):
            continue
        arg = call.kw(keyword) or call.arg(str(index))
        if arg is None:
            continue
        inline = model.call_for_node(arg.node)
        if inline is not None:
            entry = _stateful(model, inline)
            if entry is not None:
                yield HostedAgent(call.statement, entry, call)
            continue
        name = arg.dotted
        if not name or "." in name or "(" in name or "[" in name:
            continue
        binding = model.local_binding(name, call.function)
        entry = _stateful(model, binding.value_call) if binding is not None else None
        if binding is not None and entry is not None:
            yield HostedAgent(binding.statement, entry, call)


def held_agents(model: Model) -> Iterator[HeldAgent]:
    served = _served_classes(model)
    yield from _instance_agents(model, served)
    for name, binding, entry in _registries(model, served):
        run = _registry_runs(model, name, entry)
        if run is not None:
            yield HeldAgent(binding, entry, f"the agent registry `{name}`", run)


@rule("DUP107", name="agent-behind-long-lived-server")
def agent_behind_long_lived_server(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for hosted in hosted_agents(model):
        yield Finding(
            hosted.node,  # type: ignore[arg-type]
            f"this stateful {hosted.entry.framework} agent is handed to `{hosted.host.func}(...)` (line "
            f"{ctx.line(hosted.host.node)}), which keeps it and runs the same object for every visitor without "
            "resetting its memory: each visitor continues the others' conversation until the context overflows "
            "(huggingface/smolagents#703); build the UI with `reset_agent_memory=True`, or give each session its "
            "own agent",
        )
    for held in held_agents(model):
        where = held.run.function.qualname if held.run.function else "module code"
        yield Finding(
            held.binding.statement,
            f"a stateful {held.entry.framework} agent is held by {held.holder} and run by `{where}` "
            f"(line {ctx.line(held.run.node)}) for every request, with no lock: clients share one "
            "conversation and their runs overlap; build the agent per request or per context id "
            "(`dupguard.runtime.SessionRegistry`), or serialise the run with `InvocationGuard`",
        )
