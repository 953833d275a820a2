"""Typed access to libcst nodes for the semantic layer: one way to test a node's kind, and the
few walks over small expressions (an ``if`` test, an argument) that several analyses share.

**Node kinds** are tested with ``type(node) is cst.X``, or ``type(node) in KINDS`` for a set of
kinds, everywhere in ``semantic/``. Why this idiom: a parse builds libcst's own classes
(``parsing.py`` makes the objects of the real classes, never subclasses), so the exact type is
the kind; ``type() is`` is the cheapest test Python has (``isinstance`` goes through
``ABCMeta``, as ``CSTNode`` is an ABC, and the builder tests every call, argument and
assignment of a file); and mypy narrows the node's type on it, so the node's fields can be
read afterwards without silencing the type checker.

Only the builder walks the whole tree (``builder.py``); these helpers walk one small
expression or statement that a record points at.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from .visitor import children

# small statements that leave the enclosing block
LEAVING: frozenset[type[cst.CSTNode]] = frozenset({cst.Return, cst.Break, cst.Raise})


def dotted(node: cst.CSTNode | None) -> str | None:
    """``a.b.c`` for a name/attribute chain; calls and subscripts keep a marker: ``f().x``, ``d[].x``."""
    parts: list[str] = []
    while True:
        if type(node) is cst.Name:
            parts.append(node.value)
            break
        if type(node) is cst.Attribute:
            parts.append(node.attr.value)
            node = node.value
        elif type(node) is cst.Call:
            head = dotted(node.func)
            if head is None:
                return None
            parts.append(head + "()")
            break
        elif type(node) is cst.Subscript:
            head = dotted(node.value)
            if head is None:
                return None
            parts.append(head + "[]")
            break
        else:
            return None
    return ".".join(reversed(parts))


def contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    """Is ``inner`` ``outer`` or one of its descendants?"""
    stack = [outer]
    while stack:
        node = stack.pop()
        if node is inner:
            return True
        stack.extend(children(node))
    return False


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node under it (trivia left out: ``children``), parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def names_in(node: cst.CSTNode) -> set[str]:
    """Plain names an expression reads (the heads of attribute chains included; not the names
    inside a ``lambda`` or ``def``, which are read later, if ever)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name:
            found.add(n.value)
        elif type(n) is cst.Attribute:
            stack.append(n.value)
        elif type(n) is not cst.Lambda and type(n) is not cst.FunctionDef:
            stack.extend(children(n))
    return found


def dotted_names_in(node: cst.CSTNode) -> Iterator[str]:
    """Every dotted name read in a small expression, with the prefixes of each chain:
    ``cm.handlers`` gives ``cm.handlers`` and ``cm`` (an ``if`` test, an argument)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name or type(current) is cst.Attribute:
            text = dotted(current)
            if text:
                yield text
            if type(current) is cst.Attribute:
                stack.append(current.value)
            continue
        stack.extend(children(current))


def strings_in(node: cst.CSTNode) -> Iterator[str]:
    """String constants in a small expression (``getattr(app.state, "hooks_installed", False)``)."""
    from .model import string_value

    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.SimpleString:
            value = string_value(current)
            if isinstance(value, str):
                yield value
            continue
        stack.extend(children(current))


def has_membership_test(node: cst.CSTNode) -> bool:
    """Does the expression contain an ``in`` / ``not in`` comparison (at any depth)?"""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Comparison and any(
            type(c.operator) is cst.In or type(c.operator) is cst.NotIn for c in current.comparisons
        ):
            return True
        stack.extend(children(current))
    return False


def code_of(node: cst.CSTNode) -> str:
    """The source text of a node, as written (for messages)."""
    return cst.Module(body=[]).code_for_node(node).strip()


def token_text(node: cst.CSTNode, limit: int = 60) -> str:
    """Names, attributes and string literals of a small expression (``call "function" "name"``),
    for word checks only. Follows subscripts, calls and their arguments, ``not``/``await``,
    ``and``/``or`` and comparisons; nothing else."""
    out: list[str] = []
    stack = [node]
    while stack and len(out) < limit:
        n = stack.pop()
        if type(n) is cst.Name or type(n) is cst.SimpleString:
            out.append(n.value)
        elif type(n) is cst.Attribute:
            out.append("." + n.attr.value)
            stack.append(n.value)
        elif type(n) is cst.Subscript:
            stack.extend(e.slice.value for e in n.slice if type(e.slice) is cst.Index)
            stack.append(n.value)
        elif type(n) is cst.Call:
            stack.extend(a.value for a in n.args)
            stack.append(n.func)
        elif type(n) is cst.UnaryOperation or type(n) is cst.Await:
            stack.append(n.expression)
        elif type(n) is cst.BooleanOperation:
            stack.extend((n.right, n.left))
        elif type(n) is cst.Comparison:
            stack.extend(t.comparator for t in n.comparisons)
            stack.append(n.left)
    return " ".join(out)


def comparison_parts(
    node: cst.CSTNode,
) -> Iterator[tuple[type[cst.BaseCompOp], cst.BaseExpression, cst.BaseExpression]]:
    """(operator kind, left, right) of every comparison in a test (through not/and/or)."""
    if type(node) is cst.Comparison:
        left = node.left
        for target in node.comparisons:
            yield type(target.operator), left, target.comparator
            left = target.comparator
    elif type(node) is cst.UnaryOperation:
        yield from comparison_parts(node.expression)
    elif type(node) is cst.BooleanOperation:
        yield from comparison_parts(node.left)
        yield from comparison_parts(node.right)


def loop_parts(node: cst.CSTNode) -> tuple[cst.BaseAssignTargetExpression, cst.BaseExpression] | None:
    """(target, iterable) of a ``for`` statement or of a comprehension's first ``for``; None
    for a ``while`` loop."""
    if type(node) is cst.For:
        return node.target, node.iter
    if (
        type(node) is cst.ListComp
        or type(node) is cst.SetComp
        or type(node) is cst.GeneratorExp
        or type(node) is cst.DictComp
    ):
        return node.for_in.target, node.for_in.iter
    return None


def small_statements(stmt: cst.CSTNode) -> tuple[cst.BaseSmallStatement, ...]:
    """The small statements of a simple statement line (``a(); return b``); none for a
    compound statement."""
    return tuple(stmt.body) if type(stmt) is cst.SimpleStatementLine else ()
