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
was under (it runs the first time that condition holds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..semantic.nodes import contains
from ._command import RuleCodemod
from ._common import Replacement, add_imports, module_of, statement_expression

if TYPE_CHECKING:
    from ..rules import RuleContext
    from ..semantic.model import Model
    from ..semantic.registrations import PerCallRegistration

Result = tuple[Replacement | None, str]


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


def fix(model: Model, ctx: RuleContext, found: PerCallRegistration) -> Result:
    module = module_of(ctx)
    call = found.site.call
    fn = call.function
    if fn is None:
        return None, "only a registration inside a function is rewritten"
    small = statement_expression(call.statement, call.node)
    if small is None or call.outer or len(call.statement.body) != 1 or not isinstance(small.value, cst.Call):  # type: ignore[attr-defined]
        return None, f"the `{call.func}(...)` result is used, so the call cannot be rewritten"
    node = call.node
    args = node.args
    if (
        found.target
        and isinstance(node.func, cst.Attribute)
        and len(args) == 1
        and args[0].keyword is None
        and not args[0].star
        and _free_name("register_once", model)
    ):
        return _register_once(module, node, found.site.method)
    return _once_counter(model, ctx, module, found, fn)


def _free_name(name: str, model: Model) -> bool:
    qualified = model.imports.get(name)
    if qualified is not None:
        return qualified in ("dupguard.runtime.register_once", "dupguard.runtime.tools.register_once")
    return (
        name not in model.classes
        and not any(b.target == name for b in model.bindings)
        and not any(f.name == name for f in model.functions)
    )


def _register_once(module: cst.Module, node: cst.Call, method: str) -> Result:
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
    new = add_imports(module.deep_replace(node, new_call), [("dupguard.runtime", "register_once")])  # type: ignore[arg-type]
    text = f"{module.code_for_node(target)}.{method}(...)"
    return (module, new), f"Register once: `register_once(...)` instead of `{text}` on every call"


def _once_counter(model: Model, ctx: RuleContext, module: cst.Module, found: PerCallRegistration, fn) -> Result:
    call = found.site.call
    statement = call.statement
    top_fn = fn
    while top_fn.parent is not None:
        top_fn = top_fn.parent
    top = next((s for s in module.body if s is top_fn.node), None)
    if top is None and top_fn.class_name is not None:
        top = next(
            (
                s
                for s in module.body
                if isinstance(s, cst.ClassDef) and s.name.value == top_fn.class_name and contains(s, top_fn.node)
            ),
            None,
        )
    if top is None:
        return None, f"`{fn.name}()` is not defined at the top level of the module"
    what = (call.method or (call.func or "register").rsplit(".", 1)[-1]).lstrip("_")
    flag = f"_{fn.name.lstrip('_')}_{what}_once"
    module_names = (
        set(model.imports) | set(model.classes) | {b.target for b in model.bindings} | {f.name for f in model.functions}
    )
    if flag in module_names or not flag.isidentifier():
        return None, f"the flag name `{flag}` is already used in this module"
    per_call = sorted(_names(call.node) & (set(fn.params) | fn.local_names))
    config = module.config_for_parsing
    nl = config.default_newline
    guard = cst.ensure_type(cst.parse_statement(f"if next({flag}) == 0:{nl}    pass{nl}", config=config), cst.If)
    inner = statement.with_changes(leading_lines=[])  # type: ignore[attr-defined]
    wrapped = guard.with_changes(body=guard.body.with_changes(body=[inner]), leading_lines=statement.leading_lines)  # type: ignore[attr-defined]
    counter = cst.parse_statement(f"{flag} = itertools.count()  # dupguard: register once{nl}", config=config)

    class Transformer(cst.CSTTransformer):
        def leave_SimpleStatementLine(
            self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
        ) -> cst.BaseStatement:
            return wrapped if original is statement else updated

        def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
            body = list(updated.body)
            index = next(i for i, s in enumerate(original.body) if s is top)
            old_top = body[index]
            lines = list(old_top.leading_lines)
            blanks = []
            while lines and lines[0].comment is None:
                blanks.append(lines.pop(0))
            blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""), comment=None)
            body[index] = old_top.with_changes(leading_lines=[blank, blank, *lines])
            body.insert(index, counter.with_changes(leading_lines=blanks))
            return updated.with_changes(body=body)

    new = add_imports(module.visit(Transformer()), [("itertools", None)])
    text = f"{call.func}(...)"
    caveat = ""
    if per_call:
        values = ", ".join(f"`{n}`" for n in per_call)
        caveat = f"; it is built from per-call values ({values}): only the first call's registration is kept"
    return (module, new), f"Register once: run `{text}` on the first call only (`{flag}`){caveat}"


class FixHandlerRegisteredPerCall(RuleCodemod):
    DESCRIPTION = "register handlers once (register_once, or a register-once counter)."
