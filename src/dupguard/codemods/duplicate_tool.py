"""DUP301 fix (safe): drop the repeated tool, keep its first occurrence.

In a list literal the element is removed with its comma (``[a, b, a]`` → ``[a, b]``, and a
one-per-line list loses exactly that line); a repeated ``tools.append(x)`` /
``tools.insert(i, x)`` statement is removed; an ``extend([...])`` loses the element, or the
whole statement when nothing else is left in it. Anything else (the append's value used in
an expression, a starred or computed element) is left alone with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal, replace
from ..semantic.model import Call, Model, analysis
from ._command import RuleCodemod
from ._common import remove_list_element, remove_statement, statement_expression

if TYPE_CHECKING:
    from ..fixes import FixContext


def fix(ctx: FixContext, node: cst.CSTNode, text: str) -> FixProposal:
    """The fix that removes the repeated tool ``node`` (named ``text``)."""
    model = ctx.model
    message = f"Remove the repeated `{text}`"
    lst = _list_holding(model).get(id(node))
    if lst is not None:
        if len(lst.elements) == 1:
            return _remove_extend(ctx, lst, text)
        # every repeat reported in this list goes in one replacement, the same for each
        # of its findings: ``[t, t, t, ...]`` is fixed in one pass, not one per copy
        repeats = _repeats(model)
        new = lst
        for i in sorted(
            (i for i, e in enumerate(lst.elements) if isinstance(e, cst.Element) and id(e.value) in repeats),
            reverse=True,
        ):
            new = remove_list_element(new, i)
        return FixProposal(message, (replace(lst, new),))
    call = _call_adding(model).get(id(node))
    if call is not None:
        return _remove_call(ctx, call, message)
    return FixProposal.refuse("the repeated tool is not a plain list element or append")


def _remove_call(ctx: FixContext, call: Call, title: str) -> FixProposal:
    small = statement_expression(call.statement, call.node)
    if small is None or call.outer or not isinstance(call.statement, cst.SimpleStatementLine):
        return FixProposal.refuse(f"the `{call.func}(...)` result is used, so the call cannot be removed")
    removal = remove_statement(ctx, call.statement, small)
    return FixProposal.refuse(removal) if isinstance(removal, str) else FixProposal(title, removal)


@analysis
def _list_holding(model: Model) -> dict[int, cst.List]:
    """id(element value) → the list literal it is an element of."""
    out: dict[int, cst.List] = {}
    for literal in model.lists.values():
        for element in literal.node.elements:
            if isinstance(element, cst.Element):
                out.setdefault(id(element.value), literal.node)
    return out


@analysis
def _call_adding(model: Model) -> dict[int, Call]:
    """id(argument) → the first ``append``/``insert`` call that adds it (its last argument)."""
    out: dict[int, Call] = {}
    for call in model.calls:
        if call.method in ("append", "insert") and call.args:
            out.setdefault(id(call.args[-1].node), call)
    return out


@analysis
def _extending(model: Model) -> dict[int, Call]:
    """id(list literal) → the first ``extend`` call it is the first argument of."""
    out: dict[int, Call] = {}
    for call in model.calls:
        if call.method == "extend" and call.args:
            out.setdefault(id(call.args[0].node), call)
    return out


@analysis
def _repeats(model: Model) -> set[int]:
    """ids of every element DUP301 reports (a later copy of a name already in the tool set)."""
    from ..semantic.toolsets import tool_sets

    out: set[int] = set()
    for tool_set in tool_sets(model):
        seen: set[str] = set()
        for name, element in tool_set.elements:
            if name is None:
                continue
            if name in seen:
                out.add(id(element))
            seen.add(name)
    return out


def _remove_extend(ctx: FixContext, lst: cst.List, text: str) -> FixProposal:
    """``tools.extend([x])`` where ``x`` is the repeat: remove the whole statement."""
    call = _extending(ctx.model).get(id(lst))
    if call is not None:
        small = statement_expression(call.statement, call.node)
        if small is not None and not call.outer and isinstance(call.statement, cst.SimpleStatementLine):
            removal = remove_statement(ctx, call.statement, small)
            return (
                FixProposal.refuse(removal)
                if isinstance(removal, str)
                else FixProposal(f"Remove the repeated `{text}`", removal)
            )
    return FixProposal.refuse(f"`{text}` is the only element of its list; removing it would change the list's shape")


class FixDuplicateTool(RuleCodemod):
    DESCRIPTION = "remove tools given twice to one agent (keeps the first)."
