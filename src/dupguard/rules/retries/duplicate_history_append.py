"""DUP503 duplicate-history-append: the same message object appended twice to one history in
straight-line code, so the next turn sees its ``tool_calls`` twice and executes them twice.
What counts as a history is ``dupguard.semantic.history`` (DUP203 uses it too); the fix is
``dupguard.codemods.duplicate_history_append``.

Reporting is a claim that both appends add *the same object*, and the safe fix deletes one of
them, so the claim is proved rather than guessed from text: the two appended expressions are
equal node for node and made only of names, attributes and subscripts with a literal or name
index (``msg``, ``self.last``, ``pair[0]``; ``pair[0]`` and ``pair[1]`` are two messages, and
a call such as ``make()`` builds a new one each time); nothing in between binds any name they
read or the history's name (assignments, tuple targets, ``for``/``with``/``except`` targets,
``:=``, ``del``, imports); and the first append is a statement of its own that always runs
before the second. ``proved_for_fix`` then says whether deleting the second can lose nothing:
see there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import libcst as cst

from ...semantic.history import APPEND_METHODS, looks_like_history
from ...semantic.model import Call, Model
from ...semantic.nodes import descendants
from ...fixes import FixProposal
from ..registry import Finding, RuleContext, rule


def repeated_appends(model: Model, module: cst.Module | None = None) -> Iterator[tuple[Call, Call]]:
    """(first, second) appends of the same message object to the same history: the second in
    the first's suite after it, or nested in a later statement of that suite (``if`` body),
    with no name of the message or the history bound in between, and no loop of its own."""
    appends = [c for c in model.calls if _is_append(model, c)]
    # a second append lies in a suite of the first's: each append under every suite on its
    # path, in source order, so that a first append looks only at the appends of its own suite
    # with the same history and message text (not at every append of the file: a module of
    # thousands of handlers stays linear)
    under: dict[tuple[int, str | None, str | None], list[tuple[int, Call]]] = {}
    for i, call in enumerate(appends):
        for suite, _ in call.path:
            under.setdefault((suite, call.receiver, call.args[0].dotted), []).append((i, call))
    reported: set[int] = set()
    for i, first in enumerate(appends):
        message = first.args[0].node
        for k, second in under.get((first.block[0], first.receiver, first.args[0].dotted), ()):
            if k <= i or id(second) in reported:
                continue
            if not _same_expression(message, second.args[0].node):
                continue
            later = _index_in(second, first.block[0])
            if later is None or later <= first.block[1] or first.loops != second.loops:
                continue
            names = _names(message) | {(first.receiver or "").split(".")[0].split("[")[0], "*"}
            if not (_bound_between(module, first, second, later) & names):
                reported.add(id(second))
                yield first, second
            break


def _is_append(model: Model, call: Call) -> bool:
    if call.method not in APPEND_METHODS or not call.receiver or len(call.args) != 1:
        return False
    arg = call.args[0]
    return (
        arg.keyword is None
        and not arg.star
        and not call.outer
        and _plain(arg.node)
        and _own_statement(call)
        and looks_like_history(model, call.receiver, call)
    )


def _plain(node: cst.CSTNode) -> bool:
    """Names, attributes and subscripts by a literal or a name: an expression that reads an
    object without making one (no call, no slice, no operator)."""
    if type(node) is cst.Name:
        return True
    if type(node) is cst.Attribute:
        return _plain(node.value)
    if type(node) is cst.Subscript:
        if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return False
        index = node.slice[0].slice.value
        literal = type(index) in (cst.Integer, cst.SimpleString, cst.Name) or (
            type(index) is cst.UnaryOperation and type(index.expression) is cst.Integer
        )
        return literal and _plain(node.value)
    return False


def _same_expression(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    return a.deep_equals(b)


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in descendants(node) if type(n) is cst.Name}


def _own_statement(call: Call) -> bool:
    """The append is a statement of its own (``h.append(m)`` or ``await h.aput(m)``), so it
    runs whenever its line does (not ``ok and h.append(m)``)."""
    line = call.statement
    if type(line) is not cst.SimpleStatementLine:
        return False
    for small in line.body:
        if type(small) is cst.Expr:
            value = small.value
            if value is call.node or (type(value) is cst.Await and value.expression is call.node):
                return True
    return False


def _index_in(call: Call, suite: int) -> int | None:
    """The index, in ``suite``, of the statement that contains ``call``."""
    for suite_id, index in call.path:
        if suite_id == suite:
            return index
    return None


def _suite(root: cst.CSTNode, suite_id: int) -> cst.Module | cst.IndentedBlock | None:
    """The suite (module or indented block) with the model's id ``suite_id`` under ``root``."""
    for node in descendants(root):
        if id(node) == suite_id and isinstance(node, (cst.Module, cst.IndentedBlock)):
            return node
    return None


def _bound_between(module: cst.Module | None, first: Call, second: Call, later: int) -> set[str]:
    """Names bound by the statements after ``first`` up to the one holding ``second`` (that
    statement included, up to the append itself). ``{"*"}`` when the suite cannot be seen."""
    root = first.function.node if first.function is not None else module
    suite = _suite(root, first.block[0]) if root is not None else None
    if suite is None:
        return {"*"}
    out: set[str] = set()
    for stmt in suite.body[first.block[1] + 1 : later + 1]:
        for node in descendants(stmt):
            if node is second.node:
                return out
            out |= _bound_by(node)
    return out


def _bound_by(node: cst.CSTNode) -> set[str]:
    if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.Del)):
        return _heads(node.target)
    if isinstance(node, cst.WithItem):
        return _heads(node.asname.name) if node.asname is not None else set()
    if isinstance(node, cst.ExceptHandler):
        return _heads(node.name.name) if node.name is not None else set()
    if isinstance(node, (cst.Import, cst.ImportFrom)):
        names = node.names if not isinstance(node.names, cst.ImportStar) else ()
        return {_alias_name(a) for a in names} - {""}
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return {node.name.value}
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        return {n.name.value for n in node.names}
    return set()


def _alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    node: cst.BaseExpression = alias.name
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _heads(target: cst.BaseExpression) -> set[str]:
    """The names an assignment target rebinds or mutates: ``a`` for ``a``, ``a.b``, ``a[0]``;
    every element of a tuple or list target (starred included)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for element in target.elements:
            out |= _heads(element.value)
        return out
    while isinstance(target, (cst.Attribute, cst.Subscript)):
        target = target.value
    return {target.value} if isinstance(target, cst.Name) else set()


def proved_for_fix(model: Model, first: Call, second: Call) -> str | None:
    """None when deleting ``second`` can only drop a second copy of ``first``'s object; else
    why the fix is refused. Between the two appends other code may run; a called function
    cannot rebind a plain local name (without ``nonlocal`` in a nested function), but it can
    reassign an attribute, a subscript's container or a global. So the fix needs either the
    two appends as consecutive statements, or a plain name local to the function."""
    message = second.args[0].node
    if second.block[0] == first.block[0] and second.block[1] == first.block[1] + 1:
        return None
    fn = second.function
    if type(message) is not cst.Name:
        return "code runs between the two appends and may change what the expression names"
    name = message.value
    if fn is None or name not in fn.local_names or name in fn.global_names or _nonlocal_in(fn.node, name):
        return f"`{name}` is not local to the function: code between the two appends may rebind it"
    return None


def _nonlocal_in(node: cst.CSTNode, name: str) -> bool:
    return any(type(n) is cst.Nonlocal and any(a.name.value == name for a in n.names) for n in descendants(node))


@rule("DUP503", name="duplicate-history-append", fix="duplicate_history_append", safety="safe")
def duplicate_history_append(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for first, second in repeated_appends(model, ctx.positions._module):
        message = second.args[0].dotted
        refusal = proved_for_fix(model, first, second)
        yield Finding(
            second.node,
            f"`{message}` is appended to `{second.receiver}` again (first at line {ctx.line(first.node)}): "
            "a message with tool_calls in the history twice makes the next turn execute them twice; "
            "append it once",
            fix=FixProposal.refuse(refusal) if refusal else ctx.fix(second),
        )
