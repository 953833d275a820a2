"""DUP303 fix (unsafe): build a per-call tool list instead of growing the long-lived one.

``TOOLS.append(extra)`` inside a handler becomes ``tools = [*TOOLS, extra]`` and the reads
of ``TOOLS`` that follow it in the same block (``Agent(tools=TOOLS)``) read ``tools``; the
long-lived list is then built once, at module level, and never changes. ``extend(xs)`` and
``TOOLS += xs`` give ``[*TOOLS, *xs]`` (``[*TOOLS, a, b]`` for a literal), ``insert(0, x)``
``[x, *TOOLS]`` and ``insert(i, x)`` ``[*TOOLS[:i], x, *TOOLS[i:]]``.

Why unsafe: code that relied on the accumulated tools (a later request seeing tools added
by an earlier one) changes behaviour, which is the bug being fixed but still a change.
Refused when the mutation's value is used, the function rebinds the list's name (also through
``global``), or the list is read after the mutation outside the block that holds it (the local
copy might not exist there). ``global TOOLS``, there for ``TOOLS += [...]``, goes with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal, Replacement, remove, replace
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
    if "." not in target:  # ``global TOOLS`` and another assignment: the copy would shadow it
        scan = _Stores(target)
        fn.node.visit(scan)
        other = next((node for node in scan.stores if node is not getattr(small, "target", None)), None)
        if other is not None:
            return FixProposal.refuse(f"`{target}` is also assigned at line {ctx.line(other)} in `{fn.name}()`")
    local = _local_name(model, fn, target, collector.names)
    if local is None:
        return FixProposal.refuse("no free local name for the per-call list")
    value = _new_list(module, call, target)
    if value is None:
        return FixProposal.refuse(f"`{call.func}(...)` has arguments this fix does not rewrite")
    config = module.config_for_parsing
    new_stmt = cst.parse_statement(f"{local} = {value}{config.default_newline}", config=config)
    dropped, carried = _unneeded_global(ctx, fn.node, target, small, statement)
    new_stmt = new_stmt.with_changes(
        leading_lines=(*carried, *statement.leading_lines), trailing_whitespace=statement.trailing_whitespace
    )
    return FixProposal(
        f"Build the tools per call: `{local} = {_short(value)}`, leaving `{target}` unchanged",
        (replace(statement, new_stmt), *(replace(ref, cst.Name(local)) for ref in later.refs), *dropped),
    )


def _unneeded_global(
    ctx: FixContext, fn: cst.CSTNode, target: str, small: cst.CSTNode, statement: cst.SimpleStatementLine
) -> tuple[tuple[Replacement, ...], tuple[cst.EmptyLine, ...]]:
    """``global TOOLS`` was there for ``TOOLS += [...]``: once that is ``tools = [*TOOLS, ...]``
    and nothing else in the function assigns ``TOOLS``, the declaration goes (a ``global`` with
    no assignment is dead code that linters flag: ruff's PLW0602). Returns the replacements and
    the comment lines above a removed declaration right before ``statement``, which move onto it;
    a declaration with comments anywhere else stays."""
    if "." in target or not isinstance(small, cst.AugAssign):
        return (), ()
    scan = _Stores(target)
    fn.visit(scan)  # no other assignment: checked by ``fix``
    out: list[Replacement] = []
    carried: tuple[cst.EmptyLine, ...] = ()
    for declaration in scan.globals:
        names = [n for n in declaration.names if n.name.value != target]
        line = ctx.parent(declaration)
        if names:
            names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            out.append(replace(declaration, declaration.with_changes(names=names)))
            continue
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or line.trailing_whitespace.comment:
            return (), ()  # ``global TOOLS; x = 1``, ``global TOOLS  # why``: left as they are
        if any(empty.comment is not None for empty in line.leading_lines):
            block = ctx.parent(line)
            body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
            at = next((i for i, stmt in enumerate(body) if stmt is line), None)
            if at is None or at + 1 >= len(body) or body[at + 1] is not statement:
                return (), ()
            carried = tuple(line.leading_lines)
        out.append(remove(line))
    return tuple(out), carried


class _Stores(cst.CSTVisitor):
    """The ``global`` statements naming ``target`` in one function, and every name node that
    binds ``target`` there (nested functions and classes have scopes of their own)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.globals: list[cst.Global] = []
        self.stores: list[cst.CSTNode] = []
        self.depth = 0

    def _nested(self, node: cst.CSTNode) -> bool:
        self.depth += 1
        if self.depth > 1:
            name = getattr(node, "name", None)
            if isinstance(name, cst.Name) and name.value == self.target:
                self.stores.append(name)
            return False
        return True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return self._nested(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return self._nested(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.depth -= 1

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> None:
        if any(n.name.value == self.target for n in node.names):
            self.globals.append(node)

    def _bound(self, node: cst.CSTNode | None) -> None:
        if isinstance(node, cst.Name) and node.value == self.target:
            self.stores.append(node)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._bound(element.value)
        elif isinstance(node, cst.StarredElement):
            self._bound(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bound(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bound(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bound(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bound(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bound(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bound(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._bound(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None and node.evaluated_name.split(".")[0] == self.target:
            self.stores.append(node)  # ``import TOOLS`` binds it too


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
