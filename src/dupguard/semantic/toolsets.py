"""Tool sets: the list of tools one agent receives, with every way it was assembled.

Follows a ``tools=`` argument back through a list literal, a name bound to one, ``+``
concatenation and ``append``/``extend``/``insert`` calls made on that name in the same scope
before the agent is built, so DUP301/DUP302 see what the agent actually gets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .model import Call, Model

if TYPE_CHECKING:
    import libcst as cst

DEFAULT_TOOLS_KWARGS = ("tools", "functions")
MUTATORS = {"append", "extend", "insert", "__iadd__"}


@dataclass(eq=False)
class ToolSet:
    consumer: Call  # the call that receives the tools (an agent constructor)
    elements: list[tuple[str | None, cst.CSTNode]]  # (dotted text, node), in order


def tool_sets(model: Model) -> Iterator[ToolSet]:
    import libcst as cst

    for call in model.calls:
        entry = model.entry_for_call(call)
        kwargs = entry.tools_kwargs if entry and entry.tools_kwargs else DEFAULT_TOOLS_KWARGS
        arg = None
        for name in kwargs:
            arg = call.arg(name)
            if arg is not None:
                break
        if arg is None or (entry is None and call.callee is None and call.func not in model.classes):
            # an unknown callee with tools=: only trust it when it is a known framework call
            if arg is None or not _looks_like_agent_call(call):
                continue
        elements = _expand(model, arg.node, call, cst, depth=0)
        if elements:
            yield ToolSet(call, elements)


def _looks_like_agent_call(call: Call) -> bool:
    return bool(call.callee) and call.callee.split(".")[0] != "builtins"


def _expand(model: Model, node, consumer: Call, cst, depth: int) -> list:
    if depth > 4:
        return []
    if isinstance(node, cst.List):
        literal = model.lists.get(id(node))
        out = []
        for text, element in literal.elements if literal else ():
            # a call builds a new object each time: two make_tool() are two tools
            out.append((text if text and "()" not in text else None, element))
        return out
    call = model.call_for_node(node) if isinstance(node, cst.Call) else None
    if call is not None and call.func in ("list", "tuple") and len(call.args) == 1:
        return _expand(model, call.args[0].node, consumer, cst, depth + 1)  # a copy: list(TOOLS)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _expand(model, node.left, consumer, cst, depth + 1) + _expand(
            model, node.right, consumer, cst, depth + 1
        )
    if isinstance(node, cst.Name):
        binding = model.local_binding(node.value, consumer.function)
        if binding is None or binding.scope == "class":
            return []
        out = _expand(model, binding.value, consumer, cst, depth + 1)
        if not out and not isinstance(binding.value, cst.List):
            return []
        # mutations of the same name, in the same scope, between the binding and the consumer
        for call in model.calls:
            if (
                call.receiver == node.value
                and call.method in MUTATORS
                and call.function is consumer.function
                and _between(binding.block, call, consumer)
                and call.args
            ):
                if call.method == "extend":
                    out += _expand(model, call.args[0].node, consumer, cst, depth + 1)
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
