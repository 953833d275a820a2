"""Tool names (DUP302) and long-lived tool lists (DUP303).

A model calls tools by name. Two *different* tool objects with one name in the same tool set
make the framework either keep one silently, overwrite its function map, or show the model two
tools it cannot tell apart, so the model retries or calls "both" (LlamaIndex: "conflicting
metadata"). A name counts only when it is certain: a literal given to the name argument the
catalog names for the constructor (``name_kwargs``: ``FunctionTool.from_defaults(name=...)``,
``function_tool(name_override=...)``, ``Tool("search", ...)``), or the function name of a
``def`` decorated by a catalog tool decorator with no explicit name.

DUP303's question is different: is a tool list that outlives a request (module level, a class
attribute, the single instance's ``self.tools``) grown by code that runs per call?
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from .catalog import Kind
from .guards import once_only
from .lifetimes import PerCall, lifetime, module_instances, per_call
from .model import Arg, Binding, Call, Function, Model, analysis, string_value
from .toolsets import tool_sets
from .vocabulary import (
    FUNCTION_KWARGS,
    LIST_MUTATORS,
    NOT_TOOLS,
    PER_INSTANCE_BASE_WORDS,
    TOOL_LIST_KWARGS,
    TOOL_LIST_WORDS,
)


def _string(node: cst.CSTNode | None) -> str | None:
    value = string_value(node)
    return value if isinstance(value, str) and value else None


def _explicit_name(model: Model, call: Call) -> str | None:
    entry = model.entry_for_call(call)
    if entry is None or entry.kind is not Kind.TOOL:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    given = False
    for key in entry.name_kwargs:
        arg = call.arg(key)
        if arg is None:
            continue
        given = True
        name = _string(arg.node)
        if name is not None:
            return name
    if given or not entry.name_kwargs or any(a.star for a in call.args):
        return None  # a computed name (f"search_{r}"), or no name parameter we know of
    return _function_name(model, call, positional)


def _function_name(model: Model, call: Call, positional: Sequence[Arg]) -> str | None:
    """No name given: tool constructors with a name parameter default it to the wrapped
    function's ``__name__``. Only a module-level ``def`` of this file is trusted (an imported
    name may be any object, and an alias hides the real ``__name__``)."""
    arg = next((call.kw(k) for k in FUNCTION_KWARGS if call.kw(k) is not None), None)
    if arg is None and positional:
        arg = positional[0]
    text = arg.dotted if arg is not None else None
    if not text or "." in text or "(" in text:
        return None
    scope = call.function
    if scope is not None and text in scope.local_names:
        return None
    fn = model.function_named(text)
    return fn.name if fn is not None and fn.class_name is None else None


def _decorated_tool(model: Model, fn: Function) -> str | None:
    """The name a catalog tool decorator gives ``def fn``: its explicit name, else ``fn.name``."""
    for dec in fn.decorators:
        if dec.callee is None:
            continue
        entry = model.catalog.lookup(dec.callee)
        if entry is None or entry.kind is not Kind.TOOL:
            continue
        if dec.call is not None:
            return _explicit_name(model, dec.call) or fn.name
        return fn.name
    return None


def tool_name(model: Model, node: cst.CSTNode, scope: Function | None, depth: int = 0) -> str | None:
    """The certain name of the tool that the expression ``node`` evaluates to, if any."""
    call = model.call_for_node(node)
    if call is not None:
        return _explicit_name(model, call)
    if type(node) is cst.Name and depth < 3:
        binding = model.local_binding(node.value, scope)
        if binding is not None:
            if binding.value_call is not None:
                return _explicit_name(model, binding.value_call)
            return None
        fn = model.function_named(node.value)
        if fn is not None and (scope is None or node.value not in scope.local_names):
            return _decorated_tool(model, fn)
    return None


@dataclass(frozen=True)
class NameClash:
    name: str
    first: cst.CSTNode
    second: cst.CSTNode
    consumer: str | None  # the agent call that receives both, when known
    first_text: str | None = None  # dotted text of the elements, when they are names
    second_text: str | None = None


def name_clashes(model: Model) -> Iterator[NameClash]:
    """Second tools whose certain name is already used in the same tool set (an agent's tools,
    or a list literal of tools), when the two are different objects (same object = DUP301)."""
    reported: set[int] = set()
    groups: list[tuple[list[tuple[str | None, cst.CSTNode]], Function | None, str | None]] = []
    for tool_set in tool_sets(model):
        groups.append((tool_set.elements, tool_set.consumer.function, tool_set.consumer.func))
    scopes = _list_scopes(model)
    for literal in model.lists.values():
        if len(literal.elements) > 1:
            groups.append((list(literal.elements), scopes.get(id(literal.node)), None))
    for elements, scope, consumer in groups:
        seen: dict[str, tuple[str | None, cst.CSTNode]] = {}
        for text, node in elements:
            name = tool_name(model, node, scope)
            if name is None:
                continue
            if name in seen:
                first_text, first_node = seen[name]
                same_object = text is not None and text == first_text and "(" not in text
                if not same_object and id(node) not in reported:
                    reported.add(id(node))
                    yield NameClash(name, first_node, node, consumer, first_text, text)
            else:
                seen[name] = (text, node)


def _list_scopes(model: Model) -> dict[int, Function | None]:
    """id(list literal) → the function it is written in, for literals bound to a name or passed
    as an argument (the two places a tool list literal appears); one pass over the records."""
    out: dict[int, Function | None] = {}
    for call in model.calls:
        for arg in call.args:
            out.setdefault(id(arg.node), call.function)
    for b in model.bindings:
        out[id(b.value)] = b.function
    return out


# ---------------------------------------------------------------------- DUP303


@dataclass(frozen=True)
class ToolList:
    label: str  # "TOOLS", "self.tools", "Service.tools"
    binding: Binding


def _is_list_value(model: Model, binding: Binding) -> bool:
    value = binding.value
    if type(value) is cst.List or type(value) is cst.ListComp:
        return True
    call = binding.value_call
    return call is not None and call.func == "list"


@analysis
def _given_as_tools_anywhere(model: Model) -> frozenset[str]:
    """Dotted names passed to a ``tools=``-like keyword anywhere in the file."""
    return frozenset(a.dotted for c in model.calls for a in c.args if a.keyword in TOOL_LIST_KWARGS and a.dotted)


def _given_as_tools(model: Model, text: str) -> bool:
    return text in _given_as_tools_anywhere(model)


def _holds_tools(model: Model, binding: Binding) -> bool:
    literal = model.lists.get(id(binding.value))
    if literal is None:
        return False
    for _, node in literal.elements:
        call = model.call_for_node(node)
        if call is not None:
            kind, _ = model.kind_of_expr_call(call)
            if kind is Kind.TOOL:
                return True
    return False


def long_lived_tool_lists(model: Model) -> list[ToolList]:
    out = []
    singletons = module_instances(model)
    for b in model.bindings:
        if b.in_main or not _is_list_value(model, b):
            continue
        label = None
        if b.scope == "module":
            label = b.target
        elif b.scope == "class":
            label = f"{b.class_name}.{b.target}"
        elif (
            b.scope == "function"
            and b.target.startswith("self.")
            and b.function is not None
            and b.function.name == "__init__"
            and b.class_name in singletons
        ):
            label = b.target
        if label is None or (b.scope == "module" and "." in b.target):
            continue  # ``send_email.tool_input_guardrails = [...]`` sets an attribute of a tool
        if b.scope == "class" and _per_instance_fields(model, b.class_name):
            continue
        name = b.target.rsplit(".", 1)[-1]
        if _tool_list_name(name) or _given_as_tools(model, b.target) or _holds_tools(model, b):
            out.append(ToolList(label, b))
    return out


def _tool_list_name(name: str) -> bool:
    """``TOOLS``, ``base_tools``, ``tools_for_agent``, ``toolkit`` — not ``tool_calls``."""
    words = name.lower().strip("_").split("_")
    return any(w in TOOL_LIST_WORDS for w in words) and not any(w in NOT_TOOLS for w in words)


def _per_instance_fields(model: Model, class_name: str | None) -> bool:
    """Pydantic models, TypedDicts and NamedTuples copy or declare their class-level defaults
    per instance: ``tools: list = []`` there is not one list shared by every instance."""
    bases = model.classes.get(class_name or "", [])
    return any(any(word in base for word in PER_INSTANCE_BASE_WORDS) for base in bases)


def _refers_to(model: Model, tool_list: ToolList, call: Call) -> bool:
    b = tool_list.binding
    receiver = call.receiver or ""
    fn = call.function
    if b.scope == "module":
        return receiver == b.target and lifetime(model, receiver, call) == "module"
    if b.scope == "class":
        return receiver == tool_list.label or (
            receiver == f"self.{b.target}" and fn is not None and fn.class_name == b.class_name
        )
    return receiver == b.target and fn is not None and fn.class_name == b.class_name and fn.name != "__init__"


@dataclass(frozen=True)
class ToolListGrowth:
    tool_list: ToolList
    call: Call
    why: PerCall


def _receivers(tool_list: ToolList) -> tuple[str, ...]:
    """The receiver texts under which ``_refers_to`` can match the list."""
    b = tool_list.binding
    if b.scope == "class":
        return (tool_list.label, f"self.{b.target}")
    return (b.target,)


def growing_tool_lists(model: Model) -> Iterator[ToolListGrowth]:
    lists = long_lived_tool_lists(model)
    if not lists:
        return
    by_receiver: dict[str, list[ToolList]] = {}
    for tool_list in lists:
        for receiver in dict.fromkeys(_receivers(tool_list)):
            by_receiver.setdefault(receiver, []).append(tool_list)
    for call in [*model.calls, *model.augmented]:
        if call.method not in LIST_MUTATORS or not call.args:
            continue
        for tool_list in by_receiver.get(call.receiver or "", ()):
            if not _refers_to(model, tool_list, call):
                continue
            why = per_call(model, call)
            if why is None or once_only(model, call, tool_list.binding.target):
                continue
            yield ToolListGrowth(tool_list, call, why)
            break
