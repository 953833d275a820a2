"""DUP501 fix (unsafe): run the retried agent call once per request id.

Only when the function already has a parameter that identifies the user action
(``request_id``, ``idempotency_key``, ``message_id``, ``event_id``, ``delivery_id``,
``job_id``, ``task_id``, ``turn_id``): a key invented by a codemod would decide wrongly
which calls are "the same action", so without one the fix is skipped with that reason.

* a retry loop whose run keeps the text, ``str(support(prompt))``, becomes
  ``_idempotency.run(str(message_id), lambda: str(support(prompt)))``, with a module-level
  ``_idempotency = Idempotency(on_in_progress="wait")``: a later attempt or a duplicate
  request with the same id gets the first successful result instead of running the agent
  and its tools again (a failed attempt releases the key, so the retry still happens);
* a retry decorator (tenacity, backoff, stamina) on a function annotated to return JSON
  data (``-> str``, ``-> dict``…): ``@idempotent(key=lambda ...: request_id,
  on_in_progress="wait")`` is added above it, so a retried or duplicated call with the same
  id replays the stored result.

Replayed results go through JSON (``dupguard.runtime`` stores them that way; an object that
cannot be encoded makes every later duplicate raise), so a run whose result type is not
known to be JSON data is skipped with that reason.

Why unsafe: results are replayed for the key's lifetime (an hour by default) and the store
is per process (``MemoryBackend``) until you pass a shared one; review the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ._command import RuleCodemod
from ._common import Replacement, add_imports, module_of

if TYPE_CHECKING:
    from ..rules import RuleContext
    from ..semantic.model import Model
    from ..semantic.retries import Retry

Result = tuple[Replacement | None, str]
KEY_PARAMS = ("request_id", "idempotency_key", "message_id", "event_id", "delivery_id", "job_id", "task_id",
              "turn_id")


def fix(model: "Model", ctx: "RuleContext", retry: "Retry") -> Result:
    module = module_of(ctx)
    call = retry.run.call
    fn = call.function
    if retry.shape == "decorator":
        fn = _decorated(model, retry.node) or fn
    if fn is None:
        return None, "the retried run is not inside a function"
    key = next((p for p in KEY_PARAMS if p in fn.params), None)
    if key is None:
        return None, (f"no request id in scope: `{fn.name}()` has no parameter such as `request_id` or "
                      "`idempotency_key` to key the run with (choose one and use `Idempotency`)")
    annotation = fn.param_annotations.get(key)
    key_expr = key if isinstance(annotation, cst.Name) and annotation.value == "str" else f"str({key})"
    if retry.shape == "decorator":
        return _decorate(model, module, fn, retry, key, key_expr)
    return _wrap_loop_run(model, module, fn, call, key_expr)


def _decorated(model: "Model", node: cst.CSTNode):
    for fn in model.functions:
        if any(d.node is node or d.node is getattr(node, "decorator", None) for d in fn.decorators):
            return fn
    return None


def _free(model: "Model", name: str, qualified: tuple[str, ...]) -> bool:
    if name in model.imports:
        return model.imports[name] in qualified
    return name not in model.classes and not any(b.target == name for b in model.bindings) and not any(
        f.name == name for f in model.functions)


def _add_import(module: cst.Module, name: str) -> cst.Module:
    return add_imports(module, [("dupguard.runtime", name)])


JSON_TYPES = ("str", "int", "float", "bool", "dict", "list")
NOT_JSON = ("the result of `{run}` is not known to be JSON-serialisable, which `Idempotency` needs to replay "
            "it; wrap a function that returns the text or data you keep")


def _wrap_loop_run(model: "Model", module: cst.Module, fn, call, key_expr: str) -> Result:
    # the replayed result must survive JSON: only ``str(run(...))`` qualifies here
    outer = call.outer[-1] if call.outer else None
    if call.awaited or outer is None or outer.func != "str" or len(outer.args) != 1 or outer.args[0].node is not call.node:
        return None, NOT_JSON.format(run=f"{call.func}(...)")
    run_text = f"{call.func}(...)"
    call = outer
    if not _free(model, "Idempotency", ("dupguard.runtime.Idempotency", "dupguard.runtime.idempotency.Idempotency")) \
            or not _free(model, "_idempotency", ()):
        return None, "the names `Idempotency` / `_idempotency` are already used in this module"
    method = "run"
    node = call.node
    config = module.config_for_parsing
    template = cst.parse_expression(f"_idempotency.{method}({key_expr}, lambda: _RUN_)", config=config)

    class Fill(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return node if original.value == "_RUN_" else updated

    wrapped = template.visit(Fill())
    store = cst.parse_statement(f'_idempotency = Idempotency(on_in_progress="wait"){config.default_newline}',
                                config=config)

    class Transformer(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            return wrapped if original is node else updated

        def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
            body = list(updated.body)
            index = _after_imports(original)
            blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""), comment=None)
            body.insert(index, store.with_changes(leading_lines=[blank]))
            return updated.with_changes(body=body)

    new = _add_import(module.visit(Transformer()), "Idempotency")
    return (module, new), (f"Run `{run_text}` once per `{key_expr}`: `_idempotency.{method}(...)` "
                           "replays the first result to later attempts and duplicate requests")


def _after_imports(module: cst.Module) -> int:
    """Index after the module's leading imports (and docstring)."""
    index = 0
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            index = i + 1
        elif i == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr):
            index = 1
        else:
            break
    return index


def _decorate(model: "Model", module: cst.Module, fn, retry: "Retry", key: str, key_expr: str) -> Result:
    if not _free(model, "idempotent", ("dupguard.runtime.idempotent", "dupguard.runtime.idempotency.idempotent")):
        return None, "the name `idempotent` is already used in this module"
    node = fn.node
    returns = node.returns.annotation if node.returns is not None else None
    head = returns.value if isinstance(returns, cst.Subscript) else returns
    if not (isinstance(head, cst.Name) and head.value in JSON_TYPES):
        return None, NOT_JSON.format(run=f"{fn.name}(...)") + " (annotate it `-> str`, `-> dict`...)"
    params = node.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
        return None, f"`{fn.name}()` takes *args/**kwargs; write the key function by hand"
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    signature = ", ".join(names)
    config = module.config_for_parsing
    decorator = cst.Decorator(cst.parse_expression(
        f'idempotent(key=lambda {signature}: {key_expr}, on_in_progress="wait")', config=config))

    class Transformer(cst.CSTTransformer):
        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            if original is not node:
                return updated
            decorators = list(updated.decorators)
            at = next(i for i, d in enumerate(original.decorators) if d is retry.node or d.decorator is retry.node)
            moved = decorators[at]
            decorators[at:at + 1] = [decorator.with_changes(leading_lines=moved.leading_lines),
                                     moved.with_changes(leading_lines=[])]
            return updated.with_changes(decorators=decorators)

    new = _add_import(module.visit(Transformer()), "idempotent")
    return (module, new), f"Key `{fn.name}()` by `{key}`: `@idempotent(...)` replays the result to retried calls"


class FixNaiveAgentRetry(RuleCodemod):
    DESCRIPTION = "DUP501: run a retried agent call once per request id (dupguard.runtime.Idempotency)."
    CODE = "DUP501"
