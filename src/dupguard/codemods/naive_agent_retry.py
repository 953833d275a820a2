"""DUP501 fix (unsafe): run the retried work once per request id.

The key is the id of the user action that the handler already has
(``dupguard.codemods._ids.request_id``): a ``request_id``/``idempotency_key``/``message_id``...
parameter, a field of the request body (``req.request_id``), an ``Idempotency-Key`` or
``X-Request-ID`` header it reads, a Celery task's ``self.request.id``, the id of the queue
message it handles, a LangGraph thread plus run id. Never a tool-call id (``tool_call_id``,
``call_id``): the model gives a retried turn new ones. A key invented by a codemod would decide
wrongly which calls are "the same action", so without one the fix is refused with that reason,
and so it is when the id may be ``None`` (every request without one would share a key).

* **a retry loop around a framework run that dupguard has an adapter for** (the OpenAI Agents
  SDK's ``Runner.run``/``run_sync``, a LlamaIndex workflow agent's ``agent.run``): the agent's
  tools are wrapped once, where it is built (``tools=_guard.tools([...])``), and the run goes
  through the adapter keyed by the request: ``await _guard.run(agent, message, ...,
  turn_id=req.request_id)``, with module-level ``_store = store_from_env()`` and ``_guard =
  OpenAIAgentsGuard(ledger=ToolCallLedger(_store, scope=__name__))`` (or ``LlamaIndexGuard``).
  Each tool call is then recorded under the request id, the tool, its arguments and its
  occurrence in the run: when the model call after a refund fails and the loop runs the agent
  again, the model asks for the refund again (with a new tool-call id) and gets the recorded
  result instead of a second refund; a client that re-sends the request gets the same. A
  key around the whole attempt (``Idempotency.arun``) would not do: a failed attempt gives its
  key back, so the retry runs every tool again;
* **a retry loop around any other run** that keeps the text, ``str(support(prompt))``,
  becomes ``_idempotency.run(f"{__name__}.answer:{message_id}", lambda: str(support(prompt)))``,
  with a module-level ``_idempotency = Idempotency(on_in_progress="wait")``: a duplicate request
  with the same id waits for the first and gets its result. A call to a module-local function
  annotated to return JSON data (``-> str``, ``-> dict``…) qualifies as it is, and an awaited
  call to such an ``async def`` becomes ``await _idempotency.arun(..., lambda: ask(agent,
  message))``. The key is namespaced by the module and function, as ``@idempotent`` does,
  because every ``Idempotency()`` without a store shares the process-wide one;
* **a retry decorator** (tenacity, backoff, stamina) on a function annotated to return JSON
  data: ``@idempotent(key=lambda ...: request_id, on_in_progress="wait")`` is added above it,
  so a retried or duplicated call with the same id replays the stored result.

Replayed run results go through JSON (``dupguard.runtime`` stores them that way; an object
that cannot be encoded makes every later duplicate raise), so an ``Idempotency`` run whose
result type is not known to be JSON data is refused with that reason.

Why unsafe: recorded results are replayed for the key's lifetime (a day for tool calls, an
hour for runs), and the store is per process until ``DUPGUARD_STORE`` names a shared one
(``sqlite:///...``, ``redis://...``) for several workers; review the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal, insert_after, insert_before, replace, update
from ..semantic.model import analysis
from ._command import RuleCodemod
from ._common import add_imports, bound_names, imports_only_used_by, swap_imports
from ._ids import IdSource, request_id, tool_call_id_only
from ._runtime_setup import STORE, after_imports, guard_for, setup

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.model import Call, Function, Model
    from ..semantic.retries import Retry
IDEMPOTENCY = ("dupguard.runtime.Idempotency", "dupguard.runtime.idempotency.Idempotency")
RUNNERS = ("agents.Runner", "agents.run.Runner")


def fix(ctx: FixContext, retry: Retry) -> FixProposal:
    model = ctx.model
    call = retry.run.call
    fn = call.function
    if retry.shape == "decorator":
        fn = _decorated(model, retry.node) or fn
    if fn is None:
        return FixProposal.refuse("the retried run is not inside a function")
    source = request_id(ctx.module, model, fn)
    if source is None:
        per_turn = tool_call_id_only(fn)
        if per_turn is not None:
            return FixProposal.refuse(
                f"`{per_turn}` is minted per model response: a retried or re-planned turn comes back under a "
                f"new one and would run again (DUP506); give `{fn.name}()` the request or turn id and key the "
                "run by it"
            )
        return FixProposal.refuse(
            f"no request id in scope: `{fn.name}()` gets no id of the user action (a `request_id` or "
            "`idempotency_key` parameter or body field, an `Idempotency-Key`/`X-Request-ID` header, a "
            "Celery task id, a queue message id) to key the run with; pass one in, then key the run by it"
        )
    if source.optional:
        return FixProposal.refuse(
            f"`{source.expr}` may be None: requests without an id would share one key and replay each "
            "other's result; make it required or key the run by hand"
        )
    if retry.shape == "decorator":
        return _decorate(ctx, fn, retry, source)
    adapted = _framework_run(model, call)
    if adapted is not None:
        return _adapter_run(ctx, call, source, *adapted)
    return _wrap_loop_run(ctx, call, _key_expr(fn, source), source.expr)


# ----------------------------------------------------------------------------- adapters


def _run_shape(model: Model, call: Call) -> tuple[str, str | None, cst.BaseExpression, bool] | None:
    """(framework, adapter method, the agent expression, whether the agent is the receiver) when
    ``call`` runs an agent of a framework dupguard has an adapter for; the method is None for a
    run the adapter cannot take (OpenAI Agents ``Runner.run_streamed``, a LlamaIndex run that is
    not awaited: its events are read as they come). Taken: OpenAI Agents ``await
    Runner.run(agent, ...)`` and ``Runner.run_sync(agent, ...)``, LlamaIndex ``await agent.run(...)``
    of a workflow agent."""
    from ..semantic.runs import receiver_entry

    node = call.node
    if not isinstance(node, cst.Call) or not call.receiver or not call.method:
        return None
    if model.resolve(call.receiver) in RUNNERS:
        if call.method not in ("run", "run_sync", "run_streamed"):
            return None
        agent = call.kw("starting_agent") or call.arg("0")
        if agent is None:
            return None
        taken = call.method == "run_sync" and not call.awaited or call.method == "run" and _awaited(call)
        return "openai_agents", call.method if taken else None, agent.node, False
    entry, _known = receiver_entry(model, call.receiver, call.function)
    if (
        entry is not None
        and entry.framework == "llama_index"
        and call.method == "run"
        and "memory" in entry.state_kwargs
        and isinstance(node.func, cst.Attribute)
    ):
        return "llama_index", "run" if _awaited(call) else None, node.func.value, True
    return None


def _awaited(call: Call) -> bool:
    """Awaited, or handed to ``asyncio.gather``/``create_task``... which awaits it: a coroutine
    of the adapter's ``run`` does there what the framework's awaitable did."""
    from ..semantic.catalog_data import ASYNC_FANOUT

    return call.awaited or any(outer.callee in ASYNC_FANOUT for outer in call.outer)


def _framework_run(model: Model, call: Call) -> tuple[str, str, cst.BaseExpression, bool] | None:
    """:func:`_run_shape` of an awaited run the adapter takes (the retried one), else None."""
    shape = _run_shape(model, call)
    if shape is None or shape[1] is None or not call.awaited and shape[1] != "run_sync":
        return None
    return shape[0], shape[1], shape[2], shape[3]


def _other_runs(
    model: Model, call: Call, framework: str, agent: cst.BaseExpression
) -> list[tuple[Call, str | None]] | None:
    """The other runs of the same agent object in the module, with the adapter method for each
    (None: one the adapter cannot take); None when the agent is not a name bound once."""
    from ..semantic.nodes import dotted

    name = dotted(agent)
    if name is None or "(" in name:
        return None
    binding = model.binding_of(name, call.function)
    if binding is None:
        return None
    out = []
    for other in model.calls:
        if other is call:
            continue
        shape = _run_shape(model, other)
        if shape is None or shape[0] != framework:
            continue
        other_name = dotted(shape[2])
        if other_name != name or model.binding_of(other_name, other.function) is not binding:
            continue
        out.append((other, shape[1]))
    return out


def _through_guard(
    module: cst.Module,
    node: cst.Call,
    name: str,
    method: str,
    agent: cst.BaseExpression,
    receiver: bool,
    key: cst.Arg | None,
) -> cst.Call:
    """``Runner.run(agent, ...)`` / ``agent.run(...)`` as ``<name>.<method>(agent, ...[, turn_id=...])``."""
    args = list(node.args)
    if key is not None and args and args[-1].comma is not cst.MaybeSentinel.DEFAULT and not _multiline(module, node):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if receiver:
        args.insert(0, cst.Arg(agent.deep_clone()))
    if key is not None:
        args.append(key)
    return node.with_changes(func=cst.Attribute(cst.Name(name), cst.Name(method)), args=args)


def _tools_arg(model: Model, call: Call, agent: cst.BaseExpression) -> cst.Arg | str:
    """The ``tools=`` argument where ``agent`` is built, or the reason it cannot be found."""
    from ..semantic.nodes import dotted

    name = dotted(agent)
    shown = name or "the agent"
    binding = model.binding_of(name, call.function) if name and "(" not in name else None
    built = binding.value_call if binding is not None else None
    entry = model.entry_for_call(built) if built is not None else None
    if built is None or entry is None or not isinstance(built.node, cst.Call):
        return f"`{shown}` is not built in this module, so its tools cannot be wrapped here"
    for keyword in entry.tools_kwargs:
        arg = built.kw(keyword)
        if arg is not None:
            for candidate in built.node.args:
                if candidate.value is arg.node:
                    return candidate
    return f"`{shown}` is built without `tools=[...]`; give it its tools there to have them run once per request"


def _already_wrapped(value: cst.BaseExpression, name: str) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Name)
        and value.func.value.value == name
        and value.func.attr.value == "tools"
    )


def _adapter_run(
    ctx: FixContext,
    call: Call,
    source: IdSource,
    framework: str,
    method: str,
    agent: cst.BaseExpression,
    receiver: bool,
) -> FixProposal:
    model, module = ctx.model, ctx.module
    tools = _tools_arg(model, call, agent)
    if isinstance(tools, str):
        return FixProposal.refuse(tools)
    adapter = guard_for(model, framework)
    if adapter is None:
        return FixProposal.refuse(f"the names `_guard` and `_{framework}_guard` are already used in this module")
    name = adapter.name
    prepared = setup(ctx, STORE, adapter)
    if isinstance(prepared, str):
        return FixProposal.refuse(prepared)
    placed, imports = prepared
    others = _other_runs(model, call, framework, agent)
    if others is None:
        return FixProposal.refuse(f"`{module.code_for_node(agent)}` is not one module-level name the fix can follow")
    for other, other_method in others:
        if other_method is None:
            return FixProposal.refuse(
                f"`{module.code_for_node(agent)}` is also run at line {ctx.line(other.node)} in a way the adapter "
                f"cannot take (`{other.func}(...)` streamed); its tools, once wrapped, would share one turn "
                "between those runs: route them through the adapter by hand"
            )
    config = module.config_for_parsing
    node = call.node
    assert isinstance(node, cst.Call)
    key = cst.Arg(
        keyword=cst.Name("turn_id"),
        value=cst.parse_expression(source.expr, config=config),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    replacements = [replace(node, _through_guard(module, node, name, method, agent, receiver, key))]
    # every other run of the agent goes through the adapter too, each its own turn: tools it
    # runs outside any turn would share the adapter's one ambient turn across requests
    for other, other_method in others:
        other_node = other.node
        assert isinstance(other_node, cst.Call) and other_method is not None
        other_agent = _run_shape(model, other)
        assert other_agent is not None
        replacements.append(
            replace(other_node, _through_guard(module, other_node, name, other_method, other_agent[2], receiver, None))
        )
    if not _already_wrapped(tools.value, name):
        wrapped = cst.Call(cst.Attribute(cst.Name(name), cst.Name("tools")), [cst.Arg(tools.value)])
        replacements.append(replace(tools.value, wrapped))
    # ``Runner`` is no longer called once every run goes through the adapter: its import goes
    replaced_heads = [
        run.node.func for run in (call, *(other for other, _ in others)) if isinstance(run.node, cst.Call)
    ]
    dropped, imports = swap_imports(ctx, imports_only_used_by(ctx, replaced_heads), imports)
    replacements.extend(dropped)
    agent_text = module.code_for_node(agent)
    return FixProposal(
        f"Run `{agent_text}`'s tools once per `{source.expr}`: `{name}.{method}(..., turn_id={source.expr})` "
        f"with `tools={name}.tools(...)`; a retried or re-sent run replays the tool calls that already ran",
        # the imports first: when both go after the last statement, they come before the objects
        (*add_imports(ctx, imports), *placed, *replacements),
    )


def _multiline(module: cst.Module, node: cst.Call) -> bool:
    return "\n" in module.code_for_node(node)


def _key_expr(fn: Function, source: IdSource) -> str:
    """``f"{__name__}.chat:{req.request_id}"``: the ``Idempotency`` key, namespaced by the
    module and function; the quotes are the ones the id's own code does not use."""
    quote = "'" if '"' in source.expr else '"'
    return f"f{quote}{{__name__}}.{fn.qualname}:{{{source.expr}}}{quote}"


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
        index = after_imports(module)
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


def _decorate(ctx: FixContext, fn: Function, retry: Retry, source: IdSource) -> FixProposal:
    model, module = ctx.model, ctx.module
    key = source.expr
    roots = _roots(key)
    if not roots or not roots <= set(fn.params):
        return FixProposal.refuse(
            f"the request id `{key}` is not read from `{fn.name}()`'s parameters, which the key function gets"
        )
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
        value = module.code_for_node(p.default) if p.name.value in roots else "None"
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


def _roots(expr: str) -> set[str]:
    """The plain names an expression reads (``req`` for ``req.request_id``)."""
    try:
        node = cst.parse_expression(expr)
    except cst.ParserSyntaxError:
        return set()
    from ..semantic.nodes import names_in

    return set(names_in(node))


class FixNaiveAgentRetry(RuleCodemod):
    DESCRIPTION = "run a retried agent call's tools (or the call) once per request id (dupguard.runtime)."
