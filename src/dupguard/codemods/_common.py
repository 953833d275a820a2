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
from ..semantic.nodes import dotted

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


def imports_only_used_by(ctx: FixContext, nodes: Sequence[cst.CSTNode]) -> dict[int, cst.Import | cst.ImportFrom]:
    """id(import alias) → its import statement, for the aliases whose names are read only
    inside ``nodes``."""
    module, model = ctx.module, ctx.model
    inside: set[int] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            inside.add(id(n))

    for node in nodes:
        node.visit(Collect())
    first = module.body[0] if module.body else None
    global_scope = ctx.scope(first.body[0]) if isinstance(first, cst.SimpleStatementLine) else None
    if global_scope is None:
        return {}
    out: dict[int, cst.Import | cst.ImportFrom] = {}
    for name in set(model.imports):
        assignments = list(global_scope.assignments[name]) if name in global_scope else []
        if len(assignments) != 1 or not hasattr(assignments[0], "node"):
            continue
        refs = list(assignments[0].references)
        if refs and all(id(r.node) in inside for r in refs):
            statement = assignments[0].node
            if isinstance(statement, (cst.Import, cst.ImportFrom)) and not isinstance(statement.names, cst.ImportStar):
                for alias in statement.names:
                    local = (
                        alias.asname.name.value
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                        else (alias.evaluated_name.split(".")[0])
                    )
                    if local == name:
                        out[id(alias)] = statement
    return out


def swap_imports(
    ctx: FixContext, unused: dict[int, cst.Import | cst.ImportFrom], needed: list[tuple[str, str | None]]
) -> tuple[list[Replacement], list[tuple[str, str | None]]]:
    """Replacements that drop the ``unused`` import aliases, an alias becoming a ``needed`` name
    of the same module in place (``from m import A`` → ``from m import B``), and what is still
    to add."""
    replacements: list[Replacement] = []
    remaining = list(needed)
    for alias_id, statement in unused.items():
        alias = next(a for a in statement.names if id(a) == alias_id)  # type: ignore[union-attr]
        source = dotted(statement.module) if isinstance(statement, cst.ImportFrom) else None
        same = next((item for item in remaining if source is not None and item[0] == source and item[1]), None)
        if same is not None and alias.asname is None:
            remaining.remove(same)
            replacements.append(replace(alias.name, cst.Name(str(same[1]))))
            continue
        line = ctx.parent(statement)
        names = [a for a in statement.names if id(a) != alias_id]  # type: ignore[union-attr]
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            continue
        if not names:
            replacements.append(remove(line))
        elif not (isinstance(statement, cst.ImportFrom) and statement.lpar is not None):
            names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            replacements.append(replace(statement, statement.with_changes(names=names)))
    return replacements, remaining


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def add_imports(ctx: FixContext, needed: list[tuple[str, str | None]]) -> tuple[Replacement, ...]:
    """The replacements that add ``from mod import obj`` (or ``import mod`` when obj is None) to
    the module's leading import block the way isort (ruff's ``I001``) lays it out; none when
    everything needed is imported already.

    A name from a module the block already imports from joins that line (in isort's order, and
    the line wrapped in parentheses when it grows too long); a new line goes into the section of
    its kind (standard library or not), in order. Only the lines changed are replaced (a new one
    is anchored to a neighbour), so that two fixes that need the same import make the same
    replacement, applied once.
    """
    module = ctx.module
    end = 0
    for index, stmt in enumerate(module.body):
        if _is_import_line(stmt):
            end = index + 1
        elif index == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr):
            end = 1  # the docstring
        else:
            break
    block = list(module.body[:end])
    froms: dict[str, list[tuple[cst.SimpleStatementLine, cst.ImportFrom]]] = {}
    plain: set[str] = set()
    for stmt in block:
        if not _is_import_line(stmt):
            continue
        assert isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                froms.setdefault(cst.Module([]).code_for_node(small.module), []).append((stmt, small))
            elif isinstance(small, cst.Import):
                plain.update(cst.Module([]).code_for_node(a.name) for a in small.names if a.asname is None)
    merged: dict[int, tuple[cst.SimpleStatementLine, cst.ImportFrom, list[str]]] = {}
    new_from: dict[str, list[str]] = {}
    new_plain: list[str] = []
    for mod, obj in dict.fromkeys(needed):
        if obj is None:
            if mod not in plain and mod not in new_plain:
                new_plain.append(mod)
            continue
        lines = froms.get(mod, [])
        if any(
            not isinstance(small.names, cst.ImportStar)
            and any(a.asname is None and a.evaluated_name == obj for a in small.names)
            for _stmt, small in lines
        ) or any(isinstance(small.names, cst.ImportStar) for _stmt, small in lines):
            continue
        host = next(((stmt, small) for stmt, small in lines if len(stmt.body) == 1), None)
        if host is None:
            new_from.setdefault(mod, []).append(obj)
        else:
            merged.setdefault(id(host[0]), (host[0], host[1], []))[2].append(obj)
    out: list[Replacement] = []
    for stmt, small, names in merged.values():
        out.append(replace(stmt, _wrapped(stmt.with_changes(body=[_with_names(small, names)]), module)))
    config = module.config_for_parsing
    texts = [f"import {mod}" for mod in new_plain]
    texts += [
        f"from {mod} import {', '.join(sorted(dict.fromkeys(names), key=_import_order))}"
        for mod, names in new_from.items()
    ]
    added = [_wrapped(_import_line(text + module.default_newline, config), module) for text in texts]
    if not added:
        return tuple(out)
    placed = _sorted_placement(block, added) if any(_is_import_line(s) for s in block) else None
    if placed is not None:
        return (*out, *placed)
    added.sort(key=_sort_key)
    if end:
        return (*out, insert_after(block[-1], *added))
    if module.body:
        return (*out, insert_before(module.body[0], *added))
    return (*out, replace(module, module.with_changes(body=added)))


def _import_line(text: str, config: cst.PartialParserConfig) -> cst.SimpleStatementLine:
    line = cst.parse_statement(text, config=config)
    assert isinstance(line, cst.SimpleStatementLine)
    return line


def _with_names(small: cst.ImportFrom, names: list[str]) -> cst.ImportFrom:
    """``small`` with ``names`` added: in isort's order when its names were in it, else at the end."""
    assert not isinstance(small.names, cst.ImportStar)
    aliases = list(small.names)
    new = [cst.ImportAlias(cst.Name(n)) for n in names]
    keys = [_import_order(a.evaluated_name) for a in aliases]
    if keys == sorted(keys):
        combined = sorted([*aliases, *new], key=lambda a: _import_order(a.evaluated_name))
    else:
        combined = [*aliases, *new]
    trailing = aliases[-1].comma if small.lpar is not None else cst.MaybeSentinel.DEFAULT
    combined = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in combined]
    if small.lpar is not None:
        # a parenthesised import keeps one name per line, as its layout was
        first = aliases[0].comma if len(aliases) > 1 else trailing
        combined = [a.with_changes(comma=first) for a in combined[:-1]] + [combined[-1].with_changes(comma=trailing)]
    return small.with_changes(names=combined)


# isort's (and ruff's ``I001``) layout: an import line longer than this is wrapped in parentheses
IMPORT_LINE_LENGTH = 88


def _import_module(stmt: cst.CSTNode) -> str | None:
    """``m`` of a one-statement line ``import m`` / ``from m import ...`` (None for relative)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.ImportFrom):
        if small.relative or small.module is None:
            return None
        return cst.Module([]).code_for_node(small.module)
    if isinstance(small, cst.Import) and len(small.names) == 1:
        return cst.Module([]).code_for_node(small.names[0].name)
    return None


def _wrapped(stmt: cst.SimpleStatementLine, module: cst.Module) -> cst.SimpleStatementLine:
    """``from m import a, b, c`` in isort's parenthesised form when it is too long for a line."""
    small = stmt.body[0] if len(stmt.body) == 1 else None
    if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar) or small.lpar is not None:
        return stmt
    code = module.code_for_node(stmt.with_changes(leading_lines=[]))
    if len(code.rstrip("\r\n")) <= IMPORT_LINE_LENGTH or len(small.names) < 2:
        return stmt
    indent = module.default_indent
    newline = module.default_newline
    names = "".join(
        f"{indent}{module.code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))},{newline}"
        for a in small.names
    )
    text = f"from {_import_module(stmt)} import ({newline}{names}){newline}"
    return _import_line(text, module.config_for_parsing).with_changes(leading_lines=stmt.leading_lines)


def _category(name: str | None) -> str:
    import sys

    if name is None:
        return "local"
    root = name.split(".")[0]
    if root == "__future__":
        return "future"
    return "stdlib" if root in sys.stdlib_module_names else "other"


def _sort_key(stmt: cst.CSTNode) -> tuple[int, str]:
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
    return (0 if isinstance(small, cst.Import) else 1, (_import_module(stmt) or "").lower())


def _sorted_placement(
    block: Sequence[cst.BaseStatement], added: Sequence[cst.SimpleStatementLine]
) -> tuple[Replacement, ...] | None:
    """Insert each new import line where isort would put it: in the section (a run of import
    lines between blank lines) of its kind (standard library or not), in order (``import`` lines
    before ``from`` lines, by module name). None when the block has no section of that kind."""
    sections: list[list[cst.SimpleStatementLine]] = []
    for stmt in block:
        if not isinstance(stmt, cst.SimpleStatementLine) or not _is_import_line(stmt):
            continue
        if not sections or any(line.comment is None for line in stmt.leading_lines):
            sections.append([stmt])
        else:
            sections[-1].append(stmt)
    before: dict[int, list[cst.SimpleStatementLine]] = {}
    after: dict[int, list[cst.SimpleStatementLine]] = {}
    anchors: dict[int, cst.SimpleStatementLine] = {}
    for stmt in added:
        kind = _category(_import_module(stmt))
        section = next(
            (sec for sec in sections if sum(_category(_import_module(s)) == kind for s in sec) * 2 > len(sec)), None
        )
        if section is None:
            return None
        order = _sort_key(stmt)
        follower = next((s for s in section if _sort_key(s) > order), None)
        anchor = follower if follower is not None else section[-1]
        (before if follower is not None else after).setdefault(id(anchor), []).append(stmt)
        anchors[id(anchor)] = anchor
    out: list[Replacement] = []
    firsts = {id(sec[0]) for sec in sections}
    for key, stmts in before.items():
        ordered = sorted(stmts, key=_sort_key)
        anchor = anchors[key]
        if key in firsts and anchor.leading_lines:
            # the section's first line: the blank line (and comments) above it go above the new one
            ordered[0] = ordered[0].with_changes(leading_lines=anchor.leading_lines)
            out.append(update(anchor, _without_leading_lines))
        out.append(insert_before(anchor, *ordered))
    for key, stmts in after.items():
        out.append(insert_after(anchors[key], *sorted(stmts, key=_sort_key)))
    return tuple(out)


def _without_leading_lines(stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    return stmt.with_changes(leading_lines=[])


def _import_order(name: str) -> tuple[int, str]:
    """isort's / ruff's ``order-by-type``: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2), name.lower()
