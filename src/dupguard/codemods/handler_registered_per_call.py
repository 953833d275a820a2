"""DUP401 fix (unsafe): register the handler once, not on every call.

Two shapes:

* ``target.add_handler(handler)`` (one positional handler on an object) becomes
  ``register_once(target, handler, method="add_handler")`` from ``dupguard.runtime``: the
  first call registers, later ones find the same handler (same function, or same handler
  class) and skip it, atomically across threads.
* any other registration statement (``register_function(f, caller=a, executor=b)``,
  ``set_global_handler("phoenix")``, ``hooks.add_callback(Event, f)``) is wrapped in a
  register-once check on a module-level counter,
  ``if next(_plan_register_function_once) == 0:``; ``next()`` on an ``itertools.count`` is
  one C call, so two threads can never both see 0.

Why unsafe: later calls no longer register anything. When the handler is built from
per-call values (a parameter, a loop variable), only the first call's handler is ever
registered; the fix message says which values. The registration keeps any condition it
was under (it runs the first time that condition holds): when it is all an ``if`` (without
``else``) does, the check joins that ``if``'s condition, ``if trace and next(flag) == 0:``, rather
than nesting a second ``if``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal, Replacement, replace, update
from ..semantic.nodes import contains
from ._command import RuleCodemod
from ._common import add_imports, bound_names, statement_expression

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.model import Function, Model
    from ..semantic.registrations import PerCallRegistration


def _names(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

    node.visit(Names())
    return found


def fix(ctx: FixContext, found: PerCallRegistration) -> FixProposal:
    model = ctx.model
    call = found.site.call
    fn = call.function
    if fn is None:
        return FixProposal.refuse("only a registration inside a function is rewritten")
    node = call.node
    small = statement_expression(call.statement, node)
    if (
        small is None
        or call.outer
        or not isinstance(call.statement, cst.SimpleStatementLine)
        or len(call.statement.body) != 1
        or not isinstance(node, cst.Call)
    ):
        return FixProposal.refuse(f"the `{call.func}(...)` result is used, so the call cannot be rewritten")
    args = node.args
    if (
        found.target
        and isinstance(node.func, cst.Attribute)
        # ``manager.handlers.append(h)`` is reported as add_handler: not a method register_once can call
        and node.func.attr.value == found.site.method
        and len(args) == 1
        and args[0].keyword is None
        and not args[0].star
        and _free_name("register_once", model)
    ):
        return _register_once(ctx, node, found.site.method)
    return _once_counter(ctx, found, fn, call.statement)


def _free_name(name: str, model: Model) -> bool:
    qualified = model.imports.get(name)
    if qualified is not None:
        return qualified in ("dupguard.runtime.register_once", "dupguard.runtime.tools.register_once")
    return name not in bound_names(model)


def _register_once(ctx: FixContext, node: cst.Call, method: str) -> FixProposal:
    assert isinstance(node.func, cst.Attribute)
    target = node.func.value
    handler = node.args[0].value
    new_call = cst.Call(
        cst.Name("register_once"),
        [
            cst.Arg(target, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(handler, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(
                cst.SimpleString(f'"{method}"'),
                keyword=cst.Name("method"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            ),
        ],
        lpar=node.lpar,
        rpar=node.rpar,
    )
    text = f"{ctx.module.code_for_node(target)}.{method}(...)"
    return FixProposal(
        f"Register once: `register_once(...)` instead of `{text}` on every call",
        (replace(node, new_call), *add_imports(ctx, [("dupguard.runtime", "register_once")])),
    )


def _once_counter(
    ctx: FixContext, found: PerCallRegistration, fn: Function, statement: cst.SimpleStatementLine
) -> FixProposal:
    model, module = ctx.model, ctx.module
    call = found.site.call
    top_fn = fn
    while top_fn.parent is not None:
        top_fn = top_fn.parent
    top: cst.FunctionDef | cst.ClassDef | None = top_fn.node if ctx.body_index(top_fn.node) is not None else None
    if top is None and top_fn.class_name is not None:
        for stmt in module.body:
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == top_fn.class_name and contains(stmt, top_fn.node):
                top = stmt
                break
    if top is None:
        return FixProposal.refuse(f"`{fn.name}()` is not defined at the top level of the module")
    what = (call.method or (call.func or "register").rsplit(".", 1)[-1]).lstrip("_")
    flag = f"_{fn.name.lstrip('_')}_{what}_once"
    if flag in bound_names(model) or not flag.isidentifier():
        return FixProposal.refuse(f"the flag name `{flag}` is already used in this module")
    per_call = sorted(_names(call.node) & (set(fn.params) | fn.local_names))
    config = module.config_for_parsing
    nl = config.default_newline
    block = ctx.parent(statement)
    owner = ctx.parent(block) if block is not None else None
    change: Replacement
    if isinstance(block, cst.IndentedBlock) and len(block.body) == 1 and isinstance(owner, cst.If) and not owner.orelse:
        # the registration is all an ``if`` does: one condition, not an ``if`` nested in another
        # (ruff's SIM102); the counter is still read only when the condition holds
        check = cst.parse_expression(f"next({flag}) == 0", config=config)
        change = update(owner, lambda old: old.with_changes(test=_and(old.test, check)))
    else:
        guard = cst.ensure_type(cst.parse_statement(f"if next({flag}) == 0:{nl}    pass{nl}", config=config), cst.If)
        inner = statement.with_changes(leading_lines=[])
        wrapped = guard.with_changes(body=guard.body.with_changes(body=[inner]), leading_lines=statement.leading_lines)
        change = replace(statement, wrapped)
    counter = cst.ensure_type(
        cst.parse_statement(f"{flag} = itertools.count()  # dupguard: register once{nl}", config=config),
        cst.SimpleStatementLine,
    )

    def after_counter(old_top: cst.FunctionDef | cst.ClassDef) -> cst.FlattenSentinel[cst.BaseStatement]:
        """The counter goes above the top-level definition, taking its blank lines; the
        definition gets two blank lines after it (PEP 8), its comments stay with it."""
        lines = list(old_top.leading_lines)
        blanks = []
        while lines and lines[0].comment is None:
            blanks.append(lines.pop(0))
        blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""), comment=None)
        return cst.FlattenSentinel(
            [counter.with_changes(leading_lines=blanks), old_top.with_changes(leading_lines=[blank, blank, *lines])]
        )

    text = f"{call.func}(...)"
    caveat = ""
    if per_call:
        values = ", ".join(f"`{n}`" for n in per_call)
        caveat = f"; it is built from per-call values ({values}): only the first call's registration is kept"
    return FixProposal(
        f"Register once: run `{text}` on the first call only (`{flag}`){caveat}",
        (change, update(top, after_counter), *add_imports(ctx, [("itertools", None)])),
    )


def _and(test: cst.BaseExpression, check: cst.BaseExpression) -> cst.BooleanOperation:
    """``test and check``, with ``test`` parenthesised when ``and`` binds tighter than it."""
    looser = (
        (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or))
        or isinstance(test, (cst.IfExp, cst.Lambda, cst.NamedExpr))
    ) and not test.lpar
    if looser:
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=test, operator=cst.And(), right=check)


class FixHandlerRegisteredPerCall(RuleCodemod):
    DESCRIPTION = "register handlers once (register_once, or a register-once counter)."
