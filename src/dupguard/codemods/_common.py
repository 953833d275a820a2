"""Tree surgery shared by the codemods: remove a list element or a statement cleanly, add imports.

Each helper returns the ``dupguard.fixes.Replacement`` s that make the change (or a list, or
the reason the change cannot be made without risk); a codemod puts them in its
``FixProposal``. They never touch anything outside the nodes they replace, so the bytes around
a fix stay exactly as the user wrote them; comments that sit on removed lines are kept on
their own lines instead of being deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import Replacement, insert_after, insert_before, remove, replace, update
from ..semantic.model import analysis

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.model import Model


@analysis
def bound_names(model: Model) -> frozenset[str]:
    """Every name the module binds anywhere (imports, classes, assignment targets, functions):
    the names a fix must not introduce. Once per model, not once per finding."""
    return frozenset(
        {*model.imports, *model.classes, *(b.target for b in model.bindings), *(f.name for f in model.functions)}
    )


# ------------------------------------------------------------------ comments


def _has_comment(lines: Sequence[cst.EmptyLine]) -> bool:
    return any(line.comment is not None for line in lines)


# ------------------------------------------------------------------ list elements


def remove_list_element(lst: cst.List, index: int) -> cst.List:
    """``lst`` without element ``index``; the neighbours keep their commas and line layout.

    Removing ``b`` from ``[a, b]`` gives ``[a]`` (not ``[a, ]``); in a one-per-line list it
    deletes ``b``'s line. A comment at the end of the removed line goes with it (it described
    the removed element); comments on lines of their own are kept.
    """
    elements = list(lst.elements)
    removed = elements.pop(index)
    if index == 0 or not elements:
        return lst.with_changes(elements=elements)
    prev = elements[index - 1]
    prev_comma, removed_comma = prev.comma, removed.comma
    prev_ws = prev_comma.whitespace_after if isinstance(prev_comma, cst.Comma) else None
    if index == len(elements):
        # the removed element was last: the previous one is last now
        closing = lst.rbracket.whitespace_before
        if (
            isinstance(prev_comma, cst.Comma)
            and isinstance(prev_ws, cst.ParenthesizedWhitespace)
            and isinstance(closing, cst.ParenthesizedWhitespace)
        ):  # one per line: keep ``a,`` and its comment, then the line break before ``]``
            closing = closing.with_changes(
                first_line=prev_ws.first_line,
                empty_lines=[*prev_ws.empty_lines, *closing.empty_lines],
            )
            elements[index - 1] = prev.with_changes(
                comma=prev_comma.with_changes(whitespace_after=cst.SimpleWhitespace(""))
            )
            return lst.with_changes(elements=elements, rbracket=lst.rbracket.with_changes(whitespace_before=closing))
        if isinstance(prev_ws, cst.ParenthesizedWhitespace) and (
            prev_ws.first_line.comment is not None or _has_comment(prev_ws.empty_lines)
        ):
            return lst.with_changes(elements=elements)  # ``[a,  # note\n b]`` → ``[a,  # note\n ]``
        elements[index - 1] = prev.with_changes(comma=removed_comma)  # a trailing comma, or none
        return lst.with_changes(elements=elements)
    assert isinstance(prev_comma, cst.Comma) and isinstance(removed_comma, cst.Comma)
    removed_ws = removed_comma.whitespace_after
    if isinstance(prev_ws, cst.ParenthesizedWhitespace) and isinstance(removed_ws, cst.ParenthesizedWhitespace):
        # delete the removed element's line: keep the previous line's end and the own-line
        # comments of both, take the indentation of what followed the removed element
        merged = prev_ws.with_changes(
            empty_lines=[*prev_ws.empty_lines, *removed_ws.empty_lines],
            indent=removed_ws.indent,
            last_line=removed_ws.last_line,
        )
        elements[index - 1] = prev.with_changes(comma=prev_comma.with_changes(whitespace_after=merged))
    elif isinstance(prev_ws, cst.ParenthesizedWhitespace):
        pass  # ``a,\n    b, c``: ``a`` keeps its line break and ``c`` follows it
    else:
        elements[index - 1] = prev.with_changes(comma=removed_comma)
    return lst.with_changes(elements=elements)


# ------------------------------------------------------------------ statements


def statement_expression(line: cst.CSTNode, call: cst.CSTNode) -> cst.BaseSmallStatement | None:
    """The ``Expr`` small statement of ``line`` whose value is ``call`` (or ``await call``)."""
    if not isinstance(line, cst.SimpleStatementLine):
        return None
    for small in line.body:
        if isinstance(small, cst.Expr):
            value = small.value
            if value is call or (isinstance(value, cst.Await) and value.expression is call):
                return small
    return None


def remove_statement(
    ctx: FixContext, line: cst.SimpleStatementLine, small: cst.BaseSmallStatement
) -> tuple[Replacement, ...] | str:
    """Remove one small statement (``x.append(m)``), and its line when it is alone on it; or
    the reason it cannot be removed.

    The comment at the end of the removed line goes with it; the lines above it (comments,
    blank lines) stay where they are: they move to the next statement (or the end of the
    block), so only the statement's own line disappears.
    """
    if len(line.body) > 1:
        body = [s for s in line.body if s is not small]
        if line.body[-1] is small:
            # ``a(); b()`` minus ``b()``: ``a()`` loses its semicolon
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return (replace(line, line.with_changes(body=body)),)
    if not line.leading_lines:
        return (remove(line),)
    suite = ctx.parent(line)
    if not isinstance(suite, (cst.IndentedBlock, cst.Module)):
        return "the statement is not directly in a block"
    index = next(i for i, s in enumerate(suite.body) if s is line)
    carried = line.leading_lines
    if index + 1 < len(suite.body):
        return (
            remove(line),
            update(suite.body[index + 1], lambda nxt: nxt.with_changes(leading_lines=[*carried, *nxt.leading_lines])),
        )
    return (remove(line), update(suite, lambda block: block.with_changes(footer=[*carried, *block.footer])))


# ------------------------------------------------------------------ imports


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def add_imports(ctx: FixContext, needed: list[tuple[str, str | None]]) -> tuple[Replacement, ...]:
    """The replacements that add ``from mod import obj`` (or ``import mod`` when obj is None),
    as LibCST's ``AddImportsVisitor`` would, which merges with and skips existing imports; none
    when everything needed is imported already.

    The visitor only ever edits the module's leading import block, and its matcher-based
    walk is slow on a whole file, so it runs on that block alone. Only the statements it
    changes are replaced (and an insertion is anchored to the statement before it), so that two
    fixes that need the same import make the same replacement, applied once.
    """
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    module = ctx.module
    end = 0
    for index, stmt in enumerate(module.body):
        if _is_import_line(stmt):
            end = index + 1
        elif index == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr):
            end = 1  # the docstring
        else:
            break
    context = CodemodContext()
    for mod, obj in needed:
        AddImportsVisitor.add_needed_import(context, mod, obj)
    head = module.with_changes(body=module.body[:end], footer=[])
    new_head = AddImportsVisitor(context).transform_module(head)
    for mod, obj in needed:
        if obj is not None:
            new_head = new_head.visit(_KeepImportOrder(mod, obj))
    if len(new_head.header) != len(head.header) or not all(
        a.deep_equals(b) for a, b in zip(new_head.header, head.header)
    ):  # the visitor changed the module's leading comments: replace the module
        new = module.with_changes(header=new_head.header, body=[*new_head.body, *module.body[end:]])
        return (replace(module, new),)
    old, new_body = list(head.body), list(new_head.body)
    same = 0
    while same < min(len(old), len(new_body)) and old[same].deep_equals(new_body[same]):
        same += 1
    tail = 0
    while tail < min(len(old), len(new_body)) - same and old[-1 - tail].deep_equals(new_body[-1 - tail]):
        tail += 1
    changed, added = old[same : len(old) - tail], new_body[same : len(new_body) - tail]
    if not changed and not added:
        return ()
    if changed:
        return (replace(changed[0], cst.FlattenSentinel(added)), *(remove(stmt) for stmt in changed[1:]))
    if same:
        return (insert_after(old[same - 1], *added),)
    if module.body:
        return (insert_before(module.body[0], *added),)
    return (replace(module, module.with_changes(body=added)),)


def _import_order(name: str) -> tuple[int, str]:
    """isort's / ruff's ``order-by-type``: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2), name.lower()


class _KeepImportOrder(cst.CSTTransformer):
    """LibCST puts a name it merges into ``from mod import a, b`` first; put it back in isort
    order when the other names were in it (``Idempotency, idempotent``, not the reverse)."""

    def __init__(self, module: str, name: str) -> None:
        super().__init__()
        self.module, self.name = module, name

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        if (
            updated_node.relative
            or updated_node.module is None
            or isinstance(updated_node.names, cst.ImportStar)
            or cst.Module([]).code_for_node(updated_node.module) != self.module
        ):
            return updated_node
        aliases = list(updated_node.names)
        others = [_import_order(a.evaluated_name) for a in aliases if a.evaluated_name != self.name]
        if others != sorted(others):
            return updated_node
        ordered = sorted(aliases, key=lambda a: _import_order(a.evaluated_name))
        return updated_node.with_changes(names=[a.with_changes(comma=old.comma) for a, old in zip(ordered, aliases)])
