"""Tool sets: the list of tools one agent receives, with every way it was assembled.

Follows a ``tools=`` argument back through a list literal, a name bound to one, ``+``
concatenation and ``append``/``extend``/``insert`` calls made on that name in the same scope
before the agent is built, so DUP301/DUP302 see what the agent actually gets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .model import Call, Function, Model, analysis
from .vocabulary import DEFAULT_TOOLS_KWARGS, LIST_MUTATORS

Elements = list[tuple[str | None, cst.CSTNode]]


@dataclass(eq=False)
class ToolSet:
    consumer: Call  # the call that receives the tools (an agent constructor)
    elements: Elements  # (dotted text, node), in order


def tool_sets(model: Model) -> Iterator[ToolSet]:
    for call in model.calls:
        entry = model.entry_for_call(call)
        kwargs = entry.tools_kwargs if entry and entry.tools_kwargs else DEFAULT_TOOLS_KWARGS
        arg = None
        for name in kwargs:
            arg = call.arg(name)
            if arg is not None:
                break
        if arg is None:
            continue
        if (
            entry is None
            and call.callee is None
            and call.func not in model.classes
            and not _looks_like_agent_call(call)
        ):
            continue  # an unknown callee with tools=: only trust it when it is a known framework call
        elements = _expand(model, arg.node, call, depth=0)
        if elements:
            yield ToolSet(call, elements)


def _looks_like_agent_call(call: Call) -> bool:
    return call.callee is not None and call.callee != "" and call.callee.split(".")[0] != "builtins"


@analysis
def _mutations(model: Model) -> dict[tuple[str | None, Function | None], list[Call]]:
    """(receiver, function) → the calls that grow a list in place, in source order."""
    out: dict[tuple[str | None, Function | None], list[Call]] = {}
    for call in model.calls:
        if call.method in LIST_MUTATORS:
            out.setdefault((call.receiver, call.function), []).append(call)
    return out


def _expand(model: Model, node: cst.BaseExpression, consumer: Call, depth: int) -> Elements:
    if depth > 4:
        return []
    if type(node) is cst.List:
        literal = model.lists.get(id(node))
        out: Elements = []
        for text, element in literal.elements if literal else ():
            # a call builds a new object each time: two make_tool() are two tools
            out.append((text if text and "()" not in text else None, element))
        return out
    call = model.call_for_node(node) if type(node) is cst.Call else None
    if call is not None and call.func in ("list", "tuple") and len(call.args) == 1:
        return _expand(model, call.args[0].node, consumer, depth + 1)  # a copy: list(TOOLS)
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:
        return _expand(model, node.left, consumer, depth + 1) + _expand(model, node.right, consumer, depth + 1)
    if type(node) is cst.Name:
        binding = model.local_binding(node.value, consumer.function)
        if binding is None or binding.scope == "class":
            return []
        out = _expand(model, binding.value, consumer, depth + 1)
        if not out and type(binding.value) is not cst.List:
            return []
        # mutations of the same name, in the same scope, between the binding and the consumer
        for call in _mutations(model).get((node.value, consumer.function), ()):
            if _between(binding.block, call, consumer) and call.args:
                if call.method == "extend":
                    out += _expand(model, call.args[0].node, consumer, depth + 1)
                else:
                    value = call.args[-1]
                    out.append((value.dotted if value.dotted and "()" not in value.dotted else None, value.node))
        return out
    return []


def _between(binding_block: tuple[int, int], call: Call, consumer: Call) -> bool:
    """Unconditional mutation: in the consumer's own suite, after the binding, before the consumer."""
    if call.block[0] != consumer.block[0] or call.block[1] >= consumer.block[1]:
        return False
    return binding_block[0] != call.block[0] or binding_block[1] < call.block[1]
