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

from ._command import RuleCodemod
from ._common import Replacement, module_of, remove_list_element, remove_statement, statement_expression

if TYPE_CHECKING:
    from ..rules import RuleContext
    from ..semantic.model import Model


def fix(model: Model, ctx: RuleContext, node: cst.CSTNode, text: str) -> tuple[Replacement | None, str]:
    """The replacement that removes the repeated tool ``node`` (named ``text``)."""
    module = module_of(ctx)
    message = f"Remove the repeated `{text}`"
    for literal in model.lists.values():
        lst = literal.node
        for index, element in enumerate(lst.elements):
            if isinstance(element, cst.Element) and element.value is node:
                if len(lst.elements) == 1:
                    return _remove_extend(model, module, lst, text)
                # every repeat reported in this list goes in one replacement, the same for each
                # of its findings: ``[t, t, t, ...]`` is fixed in one pass, not one per copy
                repeats = _repeats(model) & {id(e.value) for e in lst.elements if isinstance(e, cst.Element)}
                new = lst
                for i in sorted(
                    (i for i, e in enumerate(lst.elements) if isinstance(e, cst.Element) and id(e.value) in repeats),
                    reverse=True,
                ):
                    new = remove_list_element(new, i)
                return (lst, new), message
    for call in model.calls:
        if call.method in ("append", "insert") and call.args and call.args[-1].node is node:
            small = statement_expression(call.statement, call.node)
            if small is None or call.outer:
                return None, f"the `{call.func}(...)` result is used, so the call cannot be removed"
            replacement, reason = remove_statement(module, call.statement, small)  # type: ignore[arg-type]
            return replacement, message if replacement is not None else reason
    return None, "the repeated tool is not a plain list element or append"


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


def _remove_extend(model: Model, module: cst.Module, lst: cst.List, text: str) -> tuple[Replacement | None, str]:
    """``tools.extend([x])`` where ``x`` is the repeat: remove the whole statement."""
    for call in model.calls:
        if call.method == "extend" and call.args and call.args[0].node is lst:
            small = statement_expression(call.statement, call.node)
            if small is not None and not call.outer:
                replacement, reason = remove_statement(module, call.statement, small)  # type: ignore[arg-type]
                return replacement, f"Remove the repeated `{text}`" if replacement is not None else reason
    return None, f"`{text}` is the only element of its list; removing it would change the list's shape"


class FixDuplicateTool(RuleCodemod):
    DESCRIPTION = "remove tools given twice to one agent (keeps the first)."
