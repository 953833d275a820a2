"""DUP303 fix (unsafe): build a per-call tool list instead of growing the long-lived one.

``TOOLS.append(extra)`` inside a handler becomes ``tools = [*TOOLS, extra]`` and the reads
of ``TOOLS`` that follow it in the same block (``Agent(tools=TOOLS)``) read ``tools``; the
long-lived list is then built once, at module level, and never changes. ``extend(xs)`` and
``TOOLS += xs`` give ``[*TOOLS, *xs]`` (``[*TOOLS, a, b]`` for a literal), ``insert(0, x)``
``[x, *TOOLS]`` and ``insert(i, x)`` ``[*TOOLS[:i], x, *TOOLS[i:]]``.

Why unsafe: code that relied on the accumulated tools (a later request seeing tools added
by an earlier one) changes behaviour, which is the bug being fixed but still a change.
Refused when the mutation's value is used, the function rebinds the list's name, or the
list is read after the mutation outside the block that holds it (the local copy might not
exist there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal, replace
from ._command import RuleCodemod
from ._common import statement_expression

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.model import Call, Model


def _dotted(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


class _Refs(cst.CSTVisitor):
    """Every read of ``target`` (a name or ``a.b`` chain), and every name used."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.refs: list[cst.CSTNode] = []
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)
        if node.value == self.target:
            self.refs.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _dotted(node) == self.target:
            self.refs.append(node)
            return False
        node.value.visit(self)  # ``x.TOOLS``: the attribute name is not a read of TOOLS
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # ``tools=TOOLS``: the keyword is not a read
        return False


def fix(ctx: FixContext, call: Call) -> FixProposal:
    model, module = ctx.model, ctx.module
    target = call.receiver
    fn = call.function
    if not target or fn is None:
        return FixProposal.refuse("only a mutation inside a function is rewritten")
    statement = call.statement
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return FixProposal.refuse(f"the `{call.func}(...)` call is part of a larger statement")
    small: cst.CSTNode | None
    if call.method == "__iadd__":  # ``TOOLS += [extra]``: the record's node is the AugAssign
        small = call.node if statement.body[0] is call.node else None
    else:
        small = statement_expression(statement, call.node)
    if small is None or call.outer:
        return FixProposal.refuse(f"the `{call.func}(...)` call is part of a larger statement")
    if "." not in target and target in fn.local_names:
        return FixProposal.refuse(f"`{target}` is rebound inside `{fn.name}()`")
    block = ctx.parent(statement)
    if not isinstance(block, cst.IndentedBlock):
        return FixProposal.refuse("the mutation is not in an indented block")
    index = next(i for i, s in enumerate(block.body) if s is statement)
    collector = _Refs(target)
    fn.node.visit(collector)
    later = _Refs(target)
    for stmt in block.body[index + 1 :]:
        stmt.visit(later)
    replace_ids = {id(r) for r in later.refs}
    stmt_end = ctx.positions.range(statement)[2:]
    for ref in collector.refs:
        if id(ref) in replace_ids:
            continue
        start = ctx.positions.range(ref)[:2]
        if start > stmt_end:
            return FixProposal.refuse(
                f"`{target}` is read at line {start[0]}, after the mutation but outside its block; "
                "a per-call copy would not reach it"
            )
    local = _local_name(model, fn, target, collector.names)
    if local is None:
        return FixProposal.refuse("no free local name for the per-call list")
    value = _new_list(module, call, target)
    if value is None:
        return FixProposal.refuse(f"`{call.func}(...)` has arguments this fix does not rewrite")
    config = module.config_for_parsing
    new_stmt = cst.parse_statement(f"{local} = {value}{config.default_newline}", config=config)
    new_stmt = new_stmt.with_changes(
        leading_lines=statement.leading_lines, trailing_whitespace=statement.trailing_whitespace
    )
    return FixProposal(
        f"Build the tools per call: `{local} = {_short(value)}`, leaving `{target}` unchanged",
        (replace(statement, new_stmt), *(replace(ref, cst.Name(local)) for ref in later.refs)),
    )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:59] + "…"


def _local_name(model: Model, fn, target: str, used: set[str]) -> str | None:
    base = target.rsplit(".", 1)[-1].lower().lstrip("_") or "tools"
    taken = used | set(fn.params) | fn.local_names | set(model.imports) | set(model.classes)
    taken |= {b.target for b in model.bindings if b.scope == "module"} | {f.name for f in model.functions}
    for candidate in (base, f"{base}_for_call", f"call_{base}"):
        if candidate.isidentifier() and candidate not in taken and candidate != target:
            return candidate
    return None


def _new_list(module: cst.Module, call: Call, target: str) -> str | None:
    args = call.args
    if any(a.keyword is not None or a.star for a in args):
        return None
    code = [module.code_for_node(a.node) for a in args]
    if call.method == "append" and len(args) == 1:
        return f"[*{target}, {code[0]}]"
    if call.method in ("extend", "__iadd__") and len(args) == 1:
        node = args[0].node
        if isinstance(node, cst.List) and all(isinstance(e, cst.Element) for e in node.elements):
            items = ", ".join(module.code_for_node(e.value) for e in node.elements)
            return f"[*{target}, {items}]" if items else f"[*{target}]"
        return f"[*{target}, *{code[0]}]"
    if call.method == "insert" and len(args) == 2:
        where = args[0].node
        if isinstance(where, cst.Integer) and where.evaluated_value == 0:
            return f"[{code[1]}, *{target}]"
        if isinstance(where, (cst.Integer, cst.Name)) or (
            isinstance(where, cst.UnaryOperation) and isinstance(where.expression, cst.Integer)
        ):
            return f"[*{target}[:{code[0]}], {code[1]}, *{target}[{code[0]}:]]"
    return None


class FixToolListGrowsPerCall(RuleCodemod):
    DESCRIPTION = "build a per-call tool list instead of growing a long-lived one."
