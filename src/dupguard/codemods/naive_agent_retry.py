"""DUP501 fix (unsafe): run the retried agent call once per request id.

Only when the function already has a parameter that identifies the user action
(``request_id``, ``idempotency_key``, ``message_id``, ``event_id``, ``delivery_id``,
``job_id``, ``task_id``, ``turn_id``): a key invented by a codemod would decide wrongly which
calls are "the same action", so without one the fix is skipped with that reason. A model's
tool-call id (``tool_call_id``, ``call_id``) is not such a parameter: the model mints a new one
for every response, so a retried or re-planned turn would come back under a new key and run
again (DUP506); a function that has only one is skipped with that reason.

* a retry loop whose run keeps the text, ``str(support(prompt))``, becomes
  ``_idempotency.run(f"{__name__}.answer:{message_id}", lambda: str(support(prompt)))``,
  with a module-level ``_idempotency = Idempotency(on_in_progress="wait")``: a later attempt
  or a duplicate request with the same id gets the first successful result instead of
  running the agent and its tools again (a failed attempt releases the key, so the retry
  still happens). A call to a module-local function annotated to return JSON data
  (``-> str``, ``-> dict``…) qualifies as it is, and an awaited call to such an ``async def``
  becomes ``await _idempotency.arun(..., lambda: ask(agent, message))``. The key is
  namespaced by the module and function, as ``@idempotent`` does, because every
  ``Idempotency()`` without a store shares the process-wide one;
* a retry decorator (tenacity, backoff, stamina) on a function annotated to return JSON
  data: ``@idempotent(key=lambda ...: request_id, on_in_progress="wait")`` is added above
  it, so a retried or duplicated call with the same id replays the stored result.

Replayed results go through JSON (``dupguard.runtime`` stores them that way; an object that
cannot be encoded makes every later duplicate raise), so a run whose result type is not
known to be JSON data is skipped with that reason. A loop whose id may be ``None``
(``str | None``, ``= None``) is skipped too: every request without an id would share one key
and get the first one's result; ``@idempotent`` gets the id as it is and raises
``IdempotencyKeyMissing`` for ``None``.

Why unsafe: results are replayed for the key's lifetime (an hour by default) and the store
is per process (``MemoryBackend``) until you pass a shared one; review the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal, insert_after, insert_before, replace, update
from ..semantic.model import analysis
from ._command import RuleCodemod
from ._common import add_imports, bound_names

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.model import Call, Function, Model
    from ..semantic.retries import Retry
KEY_PARAMS = (
    "request_id",
    "idempotency_key",
    "message_id",
    "event_id",
    "delivery_id",
    "job_id",
    "task_id",
    "turn_id",
)
# per-turn ids (DUP506): never a key for a retried run
PER_TURN_PARAMS = ("tool_call_id", "call_id", "tool_use_id", "invocation_id", "function_call_id", "response_id")
IDEMPOTENCY = ("dupguard.runtime.Idempotency", "dupguard.runtime.idempotency.Idempotency")


def fix(ctx: FixContext, retry: Retry) -> FixProposal:
    model = ctx.model
    call = retry.run.call
    fn = call.function
    if retry.shape == "decorator":
        fn = _decorated(model, retry.node) or fn
    if fn is None:
        return FixProposal.refuse("the retried run is not inside a function")
    key = next((p for p in KEY_PARAMS if p in fn.params), None)
    per_turn = next((p for p in PER_TURN_PARAMS if p in fn.params), None)
    if key is None and per_turn is not None:
        return FixProposal.refuse(
            f"`{per_turn}` is minted per model response: a retried or re-planned turn comes back under a "
            f"new one and would run again (DUP506); give `{fn.name}()` the request or turn id and key the "
            "run by it"
        )
    if key is None:
        return FixProposal.refuse(
            f"no request id in scope: `{fn.name}()` has no parameter such as `request_id` or "
            "`idempotency_key` to key the run with (choose one and use `Idempotency`)"
        )
    if retry.shape == "decorator":
        return _decorate(ctx, fn, retry, key)
    if _may_be_none(fn, key):
        return FixProposal.refuse(
            f"`{key}` may be None: requests without an id would share one key and replay each "
            "other's result; make it required or key the run by hand"
        )
    return _wrap_loop_run(ctx, call, f'f"{{__name__}}.{fn.qualname}:{{{key}}}"', key)


def _may_be_none(fn, key: str) -> bool:
    """``request_id: str | None``, ``Optional[str]``, ``Union[str, None]``, ``request_id=None``."""
    default = fn.param_defaults.get(key)
    if isinstance(default, cst.Name) and default.value == "None":
        return True
    annotation = fn.param_annotations.get(key)
    if annotation is None:
        return False
    code = cst.Module([]).code_for_node(annotation).replace(" ", "").strip("\"'")
    if code.startswith(("Optional[", "typing.Optional[")):
        return True
    if code.startswith(("Union[", "typing.Union[")):
        return "None" in code[code.index("[") + 1 : -1].split(",")
    return "None" in code.split("|")


def _decorated(model: Model, node: cst.CSTNode) -> Function | None:
    """The function ``node`` (a decorator record's node, or the ``Decorator`` holding it) decorates."""
    index = _decorator_index(model)
    return index.get(id(node)) or index.get(id(getattr(node, "decorator", None)))


@analysis
def _decorator_index(model: Model) -> dict[int, Function]:
    """id(decorator record's node) → the function it decorates (the first, in source order)."""
    out: dict[int, Function] = {}
    for fn in model.functions:
        for d in fn.decorators:
            if d.node is not None:
                out.setdefault(id(d.node), fn)
    return out


def _free(model: Model, name: str, qualified: tuple[str, ...]) -> bool:
    if name in model.imports:
        return model.imports[name] in qualified
    return name not in bound_names(model)


JSON_TYPES = ("str", "int", "float", "bool", "dict", "list")
NOT_JSON = (
    "the result of `{run}` is not known to be JSON-serialisable, which `Idempotency` needs to replay "
    "it; wrap a function that returns the text or data you keep"
)
NOT_JSON_LOOP = (
    "the result of `{run}` is not known to be JSON-serialisable, which `Idempotency` needs to "
    "replay it; {advice} annotated `-> str` (or `-> dict`...) that returns the text or data you keep"
)


def _returns_json(fn) -> bool:
    """Is ``fn`` annotated to return JSON data (``-> str``, ``-> dict[str, int]``)?"""
    returns = fn.node.returns.annotation if fn.node.returns is not None else None
    head = returns.value if isinstance(returns, cst.Subscript) else returns
    return isinstance(head, cst.Name) and head.value in JSON_TYPES


def _json_run(model: Model, call: Call) -> tuple[cst.BaseExpression, str] | None:
    """(node to wrap, ``run``/``arun``) when the retried call's result can be replayed:
    ``str(run(...))``, a call to a module-local function annotated ``-> str``/``-> dict``…,
    or an awaited call to such an ``async def``."""
    outer = call.outer[-1] if call.outer else None
    if (
        not call.awaited
        and outer is not None
        and outer.func == "str"
        and len(outer.args) == 1
        and outer.args[0].node is call.node
        and isinstance(outer.node, cst.BaseExpression)
    ):
        return outer.node, "run"
    helper = model.called_function(call)
    if helper is None or helper is call.function or not _returns_json(helper) or not isinstance(call.node, cst.Call):
        return None
    if helper.is_async:
        return (call.node, "arun") if call.awaited else None
    return None if call.awaited else (call.node, "run")


@analysis
def _store_bound(model: Model) -> bool | None:
    """True when the module already binds ``_idempotency = Idempotency(...)`` (an earlier fix),
    False when the name is free, None when it is used for something else."""
    for b in model.bindings:
        if b.target == "_idempotency":
            ok = b.scope == "module" and b.value_call is not None and b.value_call.callee in IDEMPOTENCY
            return True if ok and sum(x.target == "_idempotency" for x in model.bindings) == 1 else None
    return False if _free(model, "_idempotency", ()) else None


def _wrap_loop_run(ctx: FixContext, call: Call, key_expr: str, key: str) -> FixProposal:
    model, module = ctx.model, ctx.module
    # the replayed result must survive JSON
    found = _json_run(model, call)
    if found is None:
        advice = (
            "move the run into an `async def`"
            if call.awaited
            else (f"retry `str({call.func}(...))`, or move the run into a function")
        )
        return FixProposal.refuse(NOT_JSON_LOOP.format(run=f"{call.func}(...)", advice=advice))
    node, method = found
    run_text = f"{call.func}(...)"
    bound = _store_bound(model)
    if not _free(model, "Idempotency", IDEMPOTENCY) or bound is None:
        return FixProposal.refuse("the names `Idempotency` / `_idempotency` are already used in this module")
    config = module.config_for_parsing
    template = cst.parse_expression(f"_idempotency.{method}({key_expr}, lambda: _RUN_)", config=config)

    class Fill(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return node if original.value == "_RUN_" else updated

    wrapped = template.visit(Fill())
    replacements = [replace(node, wrapped)]
    if not bound:
        store = cst.parse_statement(
            f'_idempotency = Idempotency(on_in_progress="wait"){module.default_newline}', config=config
        )
        blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""), comment=None)
        store = store.with_changes(leading_lines=[blank])
        index = _after_imports(module)
        if index < len(module.body):
            replacements.append(insert_before(module.body[index], store))
        else:
            replacements.append(insert_after(module.body[-1], store))
    return FixProposal(
        f"Run `{run_text}` once per `{key}`: `_idempotency.{method}(...)` "
        "replays the first result to later attempts and duplicate requests",
        # the import first: when both go after the last statement, it comes before the store
        (*add_imports(ctx, [("dupguard.runtime", "Idempotency")]), *replacements),
    )


def _after_imports(module: cst.Module) -> int:
    """Index after the module's leading imports (and docstring)."""
    index = 0
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            index = i + 1
        elif i == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr):
            index = 1
        else:
            break
    return index


def _decorate(ctx: FixContext, fn: Function, retry: Retry, key: str) -> FixProposal:
    model, module = ctx.model, ctx.module
    if not _free(model, "idempotent", ("dupguard.runtime.idempotent", "dupguard.runtime.idempotency.idempotent")):
        return FixProposal.refuse("the name `idempotent` is already used in this module")
    node = fn.node
    if not _returns_json(fn):
        return FixProposal.refuse(NOT_JSON.format(run=f"{fn.name}(...)") + " (annotate it `-> str`, `-> dict`...)")
    params = node.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:  # a bare ``*`` is fine
        return FixProposal.refuse(f"`{fn.name}()` takes *args/**kwargs; write the key function by hand")

    def param(p: cst.Param) -> str:
        # the key function is called with the call's arguments: a parameter with a default may
        # be left out (its value does not matter, except the key's own)
        if p.default is None:
            return p.name.value
        value = module.code_for_node(p.default) if p.name.value == key else "None"
        return f"{p.name.value}={value}"

    signature = [param(p) for p in params.posonly_params]
    if signature:
        signature.append("/")
    signature += [param(p) for p in params.params]
    if params.kwonly_params:
        signature += ["*", *(param(p) for p in params.kwonly_params)]
    decorator = cst.Decorator(
        cst.parse_expression(
            f'idempotent(key=lambda {", ".join(signature)}: {key}, on_in_progress="wait")',
            config=module.config_for_parsing,
        )
    )
    at = next(i for i, d in enumerate(node.decorators) if d is retry.node or d.decorator is retry.node)

    def decorated(updated: cst.FunctionDef) -> cst.FunctionDef:
        decorators = list(updated.decorators)
        moved = decorators[at]
        decorators[at : at + 1] = [
            decorator.with_changes(leading_lines=moved.leading_lines),
            moved.with_changes(leading_lines=[]),
        ]
        return updated.with_changes(decorators=decorators)

    return FixProposal(
        f"Key `{fn.name}()` by `{key}`: `@idempotent(...)` replays the result to retried calls",
        (update(node, decorated), *add_imports(ctx, [("dupguard.runtime", "idempotent")])),
    )


class FixNaiveAgentRetry(RuleCodemod):
    DESCRIPTION = "run a retried agent call once per request id (dupguard.runtime.Idempotency)."
