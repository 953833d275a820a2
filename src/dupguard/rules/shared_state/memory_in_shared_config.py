"""DUP108 memory-in-shared-config: a memory (or stateful agent) inside a module-level
configuration dict that per-request code copies into every session's agent.

``AGENT_CONFIG = {"name": "assistant", "memory": [ListMemory()]}`` and, per request,
``AssistantAgent(**AGENT_CONFIG)``: the agent is new each time, but ``**``, ``dict(...)``,
``{**CONFIG}`` and ``.copy()`` copy only the dict, so every session's agent holds the one
memory object the dict was built with (microsoft/autogen#6088). DUP102 sees a module-level
memory passed by name; here it is hidden one level down, so this rule follows the dict.

Reported when a module-level dict literal (or ``dict(...)``) holds, at any depth of nested
dicts and lists, a catalog memory or stateful agent — built inline or bound at module level —
and a function that runs per request reads the dict while building something from it (a
``**`` spread, an argument, a shallow copy). ``copy.deepcopy`` gives each session its own
memory and is not reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...semantic.catalog import Entry, Kind
from ...semantic.model import Binding, Call, Function, Model
from ...semantic.nodes import dotted
from ...semantic.request_state import PerRequest, per_request, session_factory
from ..registry import Finding, RuleContext, rule

if TYPE_CHECKING:
    import libcst as cst

DEEP_COPIES = frozenset({"copy.deepcopy"})
STATEFUL = (Kind.MEMORY, Kind.AGENT)


@dataclass(frozen=True)
class HiddenMemory:
    node: cst.CSTNode  # the memory in the dict (a constructor call or a name)
    entry: Entry
    config: Binding
    use: Call
    why: PerRequest


def _stateful_in(model: Model, node: cst.CSTNode, depth: int = 0) -> Iterator[tuple[cst.CSTNode, Entry]]:
    """Memories and stateful agents in a dict/list literal, at any depth."""
    import libcst as cst

    if depth > 4:
        return
    if isinstance(node, cst.Dict):
        for item in node.elements:
            if isinstance(item, cst.DictElement):
                yield from _stateful_in(model, item.value, depth + 1)
        return
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        for element in node.elements:
            yield from _stateful_in(model, element.value, depth + 1)
        return
    if isinstance(node, cst.Call):
        call = model.call_for_node(node)
        kind, entry = model.kind_of_expr_call(call)
        if kind in STATEFUL and entry is not None:
            yield node, entry
        elif call is not None and call.func == "dict":
            for arg in call.args:
                yield from _stateful_in(model, arg.node, depth + 1)
        return
    if isinstance(node, cst.Name):
        binding = model.module_binding(node.value)
        if binding is not None and binding.value_call is not None:
            kind, entry = model.kind_of_expr_call(binding.value_call)
            if kind in STATEFUL and entry is not None:
                yield node, entry


def _configs(model: Model) -> Iterator[tuple[Binding, list[tuple[cst.CSTNode, Entry]]]]:
    import libcst as cst

    for b in model.bindings:
        if b.scope != "module" or b.function is not None or b.in_main or "." in b.target or "[" in b.target:
            continue
        is_dict = isinstance(b.value, cst.Dict) or (b.value_call is not None and b.value_call.func == "dict")
        if not is_dict:
            continue
        found = list(_stateful_in(model, b.value))
        if found:
            yield b, found


def _spread(model: Model, call: Call, name: str) -> bool:
    """Does ``call`` build from the dict: ``**name`` (or ``**name[key]``), ``name`` as an
    argument, or a dict literal argument spreading it (``{**name, "x": 1}``)?"""
    import libcst as cst

    parts = {name, f"{name}[]", f"{name}.get()"}  # the dict, or one of its nested configs
    for arg in call.args:
        if arg.dotted in parts:
            return True
        if isinstance(arg.node, cst.Dict):
            for element in arg.node.elements:
                if isinstance(element, cst.StarredDictElement) and dotted(element.value) in parts:
                    return True
    return call.func == f"{name}.copy"


def _use(model: Model, fn: Function, name: str) -> Call | None:
    """The first call in ``fn`` that builds from the module-level dict ``name``, unless ``fn``
    deep-copies it."""
    if any(c.callee in DEEP_COPIES and any(a.dotted == name for a in c.args) for c in fn.calls):
        return None
    local = model.local_binding(name, fn)
    if local is None or local.scope != "module":
        return None  # ``name`` is a local of fn
    for call in fn.calls:
        if call.callee in DEEP_COPIES:
            continue
        if _spread(model, call, name):
            return call
    return None


def hidden_memories(model: Model) -> Iterator[HiddenMemory]:
    configs = list(_configs(model))
    if not configs:
        return
    for config, found in configs:
        for fn in model.functions:
            why = per_request(model, fn) or session_factory(model, fn)
            if why is None:
                continue
            use = _use(model, fn, config.target)
            if use is None:
                continue
            for node, entry in found:
                yield HiddenMemory(node, entry, config, use, why)
            break


@rule("DUP108", name="memory-in-shared-config")
def memory_in_shared_config(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for hidden in hidden_memories(model):
        what = "memory" if hidden.entry.kind is Kind.MEMORY else "stateful agent"
        yield Finding(
            hidden.node,
            f"this {hidden.entry.framework} {what} sits in the module-level config "
            f"`{hidden.config.target}`, copied into a new agent at line {ctx.line(hidden.use.node)} in "
            f"{hidden.why.describe()}: `**`, `dict(...)` and `.copy()` copy only the dict, so "
            "every session's agent shares this one object; build it in the factory per session (or "
            "`copy.deepcopy` the config), or key it by session id with `dupguard.runtime.SessionRegistry`",
        )
