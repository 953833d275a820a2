"""DUP104 handler-mutates-shared-agent: per-request code that changes the configuration of an
agent, graph or client every request shares.

``agent.instructions = ...``, ``agent.mcp_servers = [conn]``, ``agent.tools.append(t)``,
``self.agent.default_options["instructions"] = ...``, ``Settings.llm = ...`` or a setter
(``agent.set_settings(...)``) on an object built once: the object may keep no conversation at
all (an OpenAI Agents SDK ``Agent``, a pydantic-ai ``Agent``), but its configuration is one
for the process, so a concurrent request runs with this request's instructions, tools or
connection (CopilotKit/CopilotKit#5659, AgentEra/Agently#284, ag-ui-protocol/ag-ui#1277).

Reported when all of these hold (``dupguard.semantic.request_state``):
- the code runs per request (handler, worker, a function they call, a run-like method, or a
  function that runs the agent and is not run once);
- the object lives longer than the request: module level, imported (``Settings``), a class
  attribute, the single module-level instance's attribute, ``app.state``, a cached factory's
  result, or ``self.x`` that the method itself saves and restores (the author's own admission
  that other runs see it);
- it is an agent, graph or client: a catalog agent or stateless object, or named like one;
- the value belongs to this request (reads a parameter or local), or the write grows a list
  (``append``/``extend``/``insert``/``+=``), which is wrong even with a constant;
- the write is not under a lock.

Writes to a memory (DUP102), to a standalone tool list (DUP303) and callback registrations
(DUP401) are left to those rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ...semantic.catalog import Kind
from ...semantic.guards import serialised
from ...semantic.lifetimes import _cached, module_instances
from ...semantic.model import Binding, Function, Model
from ...semantic.nodes import dotted
from ...semantic.request_state import (
    PerRequest,
    page_session,
    per_request,
    reads_request_value,
    reads_session_value,
    under_lock,
)
from ..registry import Finding, RuleContext, rule

# Process-wide configuration objects that frameworks read when a call is not given its own
# (qualified name → why). LlamaIndex: ``Settings = _Settings()`` at module level in
# llama_index/core/settings.py (llama-index-core 0.14.25); indexes, query engines and agents
# built without ``llm=``/``embed_model=`` read ``Settings.llm`` when they are used.
GLOBAL_CONFIGS = {
    "llama_index.core.Settings": "LlamaIndex's process-wide `Settings`",
    "llama_index.core.settings.Settings": "LlamaIndex's process-wide `Settings`",
}
# In-place changes of a container held by the agent (its tool list, its options dict).
CONTAINER_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "__iadd__"})
GROWERS = frozenset({"append", "extend", "insert", "__iadd__"})
# Setters called on the agent itself. ``set_*`` (Agently ``set_settings``/``set_agent_prompt``,
# AG2 ``update_system_message``); ``with_*``/``bind_*`` are left out: LangChain's return a copy.
SETTER_METHODS = frozenset({"update_system_message", "set_system_message"})
# Name words of objects whose attributes are configuration a request must not change.
CLIENT_WORDS = (
    "agent",
    "assistant",
    "crew",
    "executor",
    "runner",
    "team",
    "chain",
    "graph",
    "workflow",
    "bot",
    "swarm",
    "client",
    "llm",
    "settings",
)
STATEFUL_KINDS = (Kind.AGENT, Kind.STATELESS)


@dataclass(frozen=True)
class SharedObject:
    text: str  # how this function refers to it: "agent", "self.agent", "Settings"
    what: str  # for the message: "the module-level `agent`"
    binding: Binding | None = None  # where it is built, when it is in this file


@dataclass(frozen=True)
class Mutation:
    node: object  # the statement or call to report
    shown: str  # "agent.instructions = ...", "agent.tools.append(...)"
    target: SharedObject
    why: PerRequest


def _agentish(text: str) -> bool:
    last = text.replace("()", "").rsplit(".", 1)[-1].lower()
    return any(word in last for word in CLIENT_WORDS)


def _kind_ok(model: Model, binding: Binding | None, text: str) -> bool:
    if binding is not None and binding.value_call is not None:
        kind, entry = model.kind_of_expr_call(binding.value_call)
        if entry is not None or kind is not None:
            return kind in STATEFUL_KINDS
        return _agentish(text) or _agentish(binding.value_call.func or "")
    return _agentish(text)


def _shared(model: Model, fn: Function | None, text: str, depth: int = 0) -> SharedObject | None:
    """``text`` (a prefix of the written target) names a long-lived agent, graph or client.
    ``fn`` is None for the top level of a Streamlit page script."""
    if depth > 2 or not text:
        return None
    head, _, rest = text.partition(".")
    if head in ("self", "cls"):
        if fn is None or fn.class_name is None or not rest:
            return None
        attr = rest.split(".")[0]
        if "." in rest:
            return None  # self.a.b: only the attribute of self is an object we know
        held = [*model.member_bindings(fn.class_name, attr), *model.member_bindings(fn.class_name, f"self.{attr}")]
        binding = held[-1] if held else None
        class_level = any(b.scope == "class" for b in held)
        if not _kind_ok(model, binding, text):
            return None
        if class_level:
            return SharedObject(text, f"the class attribute `{fn.class_name}.{attr}`", binding)
        if fn.class_name in module_instances(model):
            return SharedObject(text, f"`{text}` of the single module-level `{fn.class_name}`", binding)
        if _restored(model, fn, text):
            return SharedObject(text, f"`{text}`, which this method saves and restores around the run")
        return None
    if ".state." in f".{text}." and text.rsplit(".", 1)[-1] != "state":
        # request.app.state.agent / app.state.agent: one object per process, set at startup
        if _agentish(text) or _startup_kind(model, text):
            return SharedObject(text, f"`{text}` on the application state")
        return None
    local_scope = _local_scope(fn, head) if fn is not None else None
    aliases = model.bindings_in(head, local_scope) if local_scope is not None else []
    imported_here = local_scope is not None and not aliases and head in model.imports and head not in local_scope.params
    if local_scope is not None and not imported_here:
        # (a name the function imports itself, ``from app.agents import agent`` inside the
        # handler, is the imported module's object: handled below with the module's imports)
        alias = aliases[-1] if aliases else None
        if alias is None:
            return None
        if alias.value_dotted and "(" not in alias.value_dotted:
            return _shared(model, fn, alias.value_dotted + (f".{rest}" if rest else ""), depth + 1)
        factory_call = alias.value_call
        if fn is not None and factory_call is not None and factory_call.func and "." not in factory_call.func:
            factory = model.function_named(factory_call.func, within=fn)
            if factory is not None and not rest and _cached(factory) and _kind_ok(model, alias, factory_call.func):
                return SharedObject(text, f"the object the cached factory `{factory.name}()` returns to every caller")
        return None
    qualified = model.resolve(text)
    if qualified in GLOBAL_CONFIGS:
        return SharedObject(text, GLOBAL_CONFIGS[qualified])
    if head in model.imports:
        if rest:
            return None  # ``module.attr``: a module attribute we cannot classify
        return SharedObject(text, f"the imported `{text}`") if _agentish(text) else None
    if model.is_streamlit:
        return None  # a Streamlit script's module level re-runs per session (cached factories aside)
    binding = model.module_binding(text)
    if binding is None or binding.value_call is None:
        return None
    if not _kind_ok(model, binding, text):
        return None
    return SharedObject(text, f"the module-level `{text}`", binding)


def _local_scope(fn: Function, head: str) -> Function | None:
    scope: Function | None = fn
    while scope is not None:
        if head in scope.global_names:
            return None
        if head in scope.local_names or head in scope.params:
            return scope
        scope = scope.parent
    return None


def _startup_kind(model: Model, text: str) -> bool:
    suffix = "state." + text.rpartition("state.")[2]
    for b in model.bindings:
        if b.target.endswith(suffix) and b.value_call is not None:
            kind, _ = model.kind_of_expr_call(b.value_call)
            if kind in STATEFUL_KINDS:
                return True
    return False


def _restored(model: Model, fn: Function, text: str) -> bool:
    """The method writes an attribute of ``text`` twice and one write puts back a value it read
    from that attribute before (``saved = self.agent.x`` … ``self.agent.x = saved``)."""
    mine = [b for b in model.bindings_under(fn.node.body) if b.function is fn]
    writes = [b for b in mine if b.target.startswith(text + ".")]
    if len(writes) < 2:
        return False
    targets = {w.target for w in writes}
    saved = {b.target for b in mine if "." not in b.target and _read_target(b) in targets}
    return any(w.value_dotted in saved for w in writes)


def _read_target(binding: Binding) -> str | None:
    """The dotted target form an assignment's value reads: ``self.agent.x`` or ``self.agent.x[]``."""
    return dotted(binding.value)


def _clone_of_shared(model: Model, fn: Function, obj: str, attribute: str) -> SharedObject | None:
    """``copy = analyst.clone()`` then ``copy.tools.append(t)``: the OpenAI Agents SDK's
    ``Agent.clone`` is ``dataclasses.replace``, a shallow copy whose list attributes are the
    original's unless passed anew (openai-agents 0.24.0 agents/agent.py, ``clone`` docstring),
    so the append reaches the shared agent."""
    if "." in obj or _local_scope(fn, obj) is not fn:
        return None
    aliases = model.bindings_in(obj, fn)
    alias = aliases[-1] if aliases else None
    call = alias.value_call if alias is not None else None
    if call is None or call.method != "clone" or not call.receiver or call.kw(attribute) is not None:
        return None
    original = _shared(model, fn, call.receiver)
    if original is None:
        return None
    return SharedObject(
        original.text,
        f"{original.what} through `{obj}`, whose `clone()` shares the original's `{attribute}` list",
        original.binding,
    )


def _prefixes(target: str) -> Iterator[tuple[str, str]]:
    """(object, configuration) splits of a written target, longest object first:
    ``self.agent.default_options[]`` → (``self.agent.default_options``, ``[]``)… (``self``, …)."""
    parts = target.split(".")
    for i in range(len(parts) - 1, 0, -1):
        obj = ".".join(parts[:i])
        if "[]" in obj or "()" in obj:
            continue
        yield obj, ".".join(parts[i:])


def _find_shared(model: Model, fn: Function | None, target: str) -> SharedObject | None:
    for obj, _ in _prefixes(target):
        found = _shared(model, fn, obj)
        if found is not None:
            return found
    return None


def _session_code(model: Model, fn: Function | None, in_main: bool) -> PerRequest | None:
    """Why code here runs per request: ``per_request``, or Streamlit page code (its top level and
    the functions it calls), which every session runs in one process (``page_session``): a
    Streamlit page that reconfigures an object imported from another module, or LlamaIndex's
    ``Settings``, changes it for every visitor (RaoulLetschka/strategist-agent,
    floreaGabriel/NEXXT_AI_PROJECT in bench/real-apps/labels-d.toml)."""
    if fn is not None and _cached(fn):
        return None  # built once (``st.cache_resource``), whoever calls it
    if fn is not None and not in_main:
        why = per_request(model, fn)
        if why is not None:
            return why
    return page_session(model, fn)


def _visitor_value(model: Model, fn: Function | None, why: PerRequest, *nodes) -> bool:
    if why.kind == "session":
        return reads_session_value(model, fn, *nodes)
    assert fn is not None
    return reads_request_value(model, fn, *nodes)


def _attribute_writes(model: Model) -> Iterator[Mutation]:
    seen: set[tuple[int, str]] = set()
    for b in model.bindings:
        fn = b.function
        if "." not in b.target:
            continue
        if fn is None:
            if b.scope != "module":
                continue
        elif b.scope != "function" or b.in_main:
            continue
        why = _session_code(model, fn, b.in_main)
        if why is None:
            continue
        shared = _find_shared(model, fn, b.target)
        if shared is None or (id(fn), shared.text) in seen:
            continue
        if not _visitor_value(model, fn, why, b.value, b.statement if "[]" in b.target else None):
            continue
        if fn is not None and under_lock(fn, b):
            continue
        seen.add((id(fn), shared.text))
        shown = b.target.replace("[]", "[...]")
        yield Mutation(b.statement, f"{shown} = ...", shared, why)


def _method_writes(model: Model) -> Iterator[Mutation]:
    registrations = model.catalog.registrations
    for call in [*model.calls, *model.augmented]:
        method = call.method
        receiver = call.receiver
        fn = call.function
        if not receiver or method is None or "(" in receiver or (fn is not None and call.in_main):
            continue
        if method in CONTAINER_MUTATORS and "." in receiver:
            obj = receiver.rsplit(".", 1)[0]  # agent.tools.append: the tools of ``agent``
        elif method.startswith("set_") or method in SETTER_METHODS:
            if method in registrations:
                continue  # a registration (DUP401)
            obj = receiver
        else:
            continue
        why = _session_code(model, fn, call.in_main)
        if why is None or serialised(call):
            continue
        shared = _shared(model, fn, obj)
        if shared is None and method in CONTAINER_MUTATORS and fn is not None:
            shared = _clone_of_shared(model, fn, obj, receiver.rsplit(".", 1)[1])
        if shared is None:
            continue
        if method not in GROWERS and not _visitor_value(model, fn, why, *(a.node for a in call.args)):
            continue
        shown = f"{receiver}.{method}(...)" if method != "__iadd__" else f"{receiver} += ..."
        yield Mutation(call.node, shown, shared, why)


def shared_agent_mutations(model: Model) -> Iterator[Mutation]:
    yield from _attribute_writes(model)
    yield from _method_writes(model)


@rule("DUP104", name="handler-mutates-shared-agent")
def handler_mutates_shared_agent(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for mutation in shared_agent_mutations(model):
        target = mutation.target
        built = f" (line {ctx.line(target.binding.statement)})" if target.binding is not None else ""
        yield Finding(
            mutation.node,  # type: ignore[arg-type]
            f"`{mutation.shown}` changes {target.what}{built} inside {mutation.why.describe()}: "
            "every request shares that object, so a concurrent request runs with this request's "
            "instructions, tools or connections; pass the per-request value to the run, or build "
            "(or `clone()`) the agent per request",
        )
