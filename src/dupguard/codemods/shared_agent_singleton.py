"""DUP101 / DUP102 fix (unsafe): stop sharing one stateful agent (or memory) between requests.

Three shapes are fixed; everything else is left with the reason:

* ``agent = Agent(...)`` at module level, read only inside functions, becomes a factory
  ``def make_agent(): return Agent(...)`` and every function that reads ``agent`` starts
  with ``agent = make_agent()``: one agent per call, the rest of the body unchanged.
* the same, when every one of those functions takes a session parameter (``session_id``,
  ``thread_id``, ``conversation_id``, ``chat_id``): ``agent_sessions =
  SessionRegistry(lambda _session_id: Agent(...))`` and ``agent =
  agent_sessions.get(session_id)``: one agent per conversation (seed 000's store).
* a ``functools.lru_cache`` / ``functools.cache`` factory loses the cache decorator (and
  the import when nothing else uses it), so each call builds a fresh agent.

Why unsafe: the agent's history no longer survives between requests (which is the point,
but code may rely on it), construction now costs once per call, and other modules that
import the name are not updated. Refused when the name is read at module level, in a class
body, a decorator, a default value or a lambda, or rebound anywhere (``global``), when the
new name is taken, or for Streamlit (its cached resources need ``st.session_state``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import libcst as cst

from ._command import RuleCodemod
from ._common import Replacement, module_of

if TYPE_CHECKING:
    from ..rules import RuleContext
    from ..semantic.model import Model
    from ..semantic.shared import Shared

SESSION_PARAMS = ("session_id", "thread_id", "conversation_id", "chat_id")
UNCACHE = ("functools.lru_cache", "functools.cache")

Result = tuple[Replacement | None, str]


def fix(model: "Model", ctx: "RuleContext", shared: "Shared") -> Result:
    module = module_of(ctx)
    if model.is_streamlit:
        return None, "Streamlit shares cached resources between sessions; keep the agent in `st.session_state`"
    if shared.factory is not None:
        return _uncache(model, module, shared)
    binding = shared.binding
    if binding is None or shared.owner_class is not None:
        return None, "only a module-level name or a cached factory is rewritten automatically"
    if binding.scope != "module" or binding.function is not None:
        where = "the class" if binding.scope == "class" else "the application state"
        return None, f"an object held on {where} is not rewritten automatically; build it per request"
    if "." in binding.target:
        return None, f"`{binding.target}` is an attribute; only a plain module-level name is rewritten"
    held = _shared_parts(model, shared)
    if held:
        return None, (f"`{binding.target}` is built with the shared `{held}`: a factory would still share it; "
                      f"build both per request")
    return _module_name(model, ctx, module, shared)


def _shared_parts(model: "Model", shared: "Shared") -> str | None:
    """A module-level stateful object passed to this one's constructor (``Agent(memory=memory)``)."""
    from ..semantic.shared import shared_objects

    call = shared.binding.value_call if shared.binding is not None else None
    if call is None:
        return None
    labels = {other.label for other in shared_objects(model) if other is not shared and other.binding is not None}
    return next((arg.dotted for arg in call.args if arg.dotted in labels), None)


# ----------------------------------------------------------------------------- cached factory

def _uncache(model: "Model", module: cst.Module, shared: "Shared") -> Result:
    fn = shared.factory
    assert fn is not None
    decorators = [d for d in fn.decorators if d.callee in UNCACHE]
    if not decorators:
        names = ", ".join(d.dotted or "?" for d in fn.decorators)
        return None, f"the cache decorator ({names}) is not one dupguard removes automatically"
    drop = {id(d.node) for d in decorators}
    node = fn.node

    class Transformer(cst.CSTTransformer):
        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            if original is not node:
                return updated
            # comments between decorators move to the next kept decorator (or the ``def``)
            carry: list[cst.EmptyLine] = []
            kept = []
            for before, dec in zip(original.decorators, updated.decorators):
                if id(before.decorator) in drop:  # updated nodes are copies: match the originals
                    carry.extend(dec.leading_lines)
                else:
                    kept.append(dec.with_changes(leading_lines=[*carry, *dec.leading_lines]))
                    carry = []
            return updated.with_changes(decorators=kept,
                                        lines_after_decorators=[*carry, *updated.lines_after_decorators])

    new = module.visit(Transformer())
    heads = {(d.dotted or "").split(".")[0] for d in decorators}
    new = _remove_unused_imports(new, heads, model)
    return (module, new), f"Remove `@{decorators[0].dotted}` from `{fn.name}()`: a new agent per call"


def _remove_unused_imports(module: cst.Module, names: set[str], model: "Model") -> cst.Module:
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor

    context = CodemodContext()
    for name in names:
        qualified = model.imports.get(name)
        if qualified is None:
            continue
        if qualified == name:  # ``import functools``
            RemoveImportsVisitor.remove_unused_import(context, name)
        else:
            mod, _, obj = qualified.rpartition(".")
            RemoveImportsVisitor.remove_unused_import(context, mod, obj, None if obj == name else name)
    new = RemoveImportsVisitor(context).transform_module(module)
    if new.body and new.body[0] is not module.body[0] and not new.header:
        # the removed import opened the file: do not leave it starting with blank lines
        first = new.body[0]
        lines = list(first.leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        new = new.with_changes(body=[first.with_changes(leading_lines=lines), *new.body[1:]])
    return new


# ----------------------------------------------------------------------------- module-level name

def _module_name(model: "Model", ctx: "RuleContext", module: cst.Module, shared: "Shared") -> Result:
    from libcst.metadata import ClassScope, ComprehensionScope, FunctionScope, GlobalScope, ScopeProvider

    binding = shared.binding
    assert binding is not None
    name = binding.target
    stmt = binding.statement
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None, f"`{name} = ...` shares its line with other statements"
    small = stmt.body[0]
    if isinstance(small, cst.Assign):
        if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
            return None, f"`{name}` is bound together with other names"
        annotation = None
    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
        annotation = small.annotation
    else:
        return None, f"`{name}` is not bound by a plain assignment"
    if stmt not in module.body:
        return None, f"`{name}` is bound inside a block (if/try/with); only a top-level binding is rewritten"

    scopes = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    global_scope = scopes.get(small)
    if not isinstance(global_scope, GlobalScope):
        return None, f"`{name}` is not bound at module level"
    assignments = list(global_scope.assignments[name])
    if len(assignments) != 1:
        return None, f"`{name}` is bound {len(assignments)} times in this module"
    functions: dict[int, cst.FunctionDef] = {}
    for access in assignments[0].references:
        scope = access.scope
        while isinstance(scope, ComprehensionScope):
            scope = scope.parent
        at = f" (line {_line(ctx, access.node)})"
        if isinstance(scope, FunctionScope) and isinstance(scope.node, cst.FunctionDef):
            functions[id(scope.node)] = scope.node
        elif isinstance(scope, FunctionScope):
            return None, f"`{name}` is read in a lambda{at}"
        elif isinstance(scope, ClassScope):
            return None, f"`{name}` is read in a class body{at}"
        else:
            return None, f"`{name}` is also read at module level{at} (a decorator, default value or statement)"
    if not functions:
        return None, f"`{name}` is not read by any function"
    for fn in functions.values():
        if not isinstance(fn.body, cst.IndentedBlock):
            return None, f"`{fn.name.value}()` is a one-line function"

    session = _session_params(functions.values())
    fn_scopes = [scopes.get(fn.body.body[0]) for fn in functions.values()]
    if session is not None:
        registry = f"{name}_sessions"
        if _taken(registry, global_scope, fn_scopes) or _taken("SessionRegistry", global_scope, fn_scopes, allow=(
                "dupguard.runtime.SessionRegistry", "dupguard.runtime.registry.SessionRegistry"), model=model):
            session = None
    factory = f"_make_{name.lstrip('_')}" if name.startswith("_") else f"make_{name}"
    if session is None and _taken(factory, global_scope, fn_scopes):
        return None, f"the factory name `{factory}` is already used in this module"

    def local(fn: cst.FunctionDef) -> str:
        if session is None:
            return f"{name} = {factory}()"
        return f"{name} = {name}_sessions.get({session[id(fn)]})"

    config = module.config_for_parsing
    fn_ids = set(functions)

    class Transformer(cst.CSTTransformer):
        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            if id(original) not in fn_ids:
                return updated
            body = updated.body
            assert isinstance(body, cst.IndentedBlock)
            statements = list(body.body)
            at = 1 if statements and _is_docstring(statements[0]) else 0
            statements.insert(at, cst.parse_statement(local(original) + config.default_newline, config=config))
            return updated.with_changes(body=body.with_changes(body=statements))

        def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
            index = next(i for i, s in enumerate(original.body) if s is stmt)
            body = list(updated.body)
            old = body[index]
            assert isinstance(old, cst.SimpleStatementLine)
            if session is None:
                # two blank lines before the def; none added after it: two fixes on neighbouring
                # lines must not both add spacing between them
                body[index] = _factory_def(factory, small.value, annotation, old, index == 0)
            else:
                call = cst.Call(cst.Name("SessionRegistry"), [cst.Arg(cst.Lambda(
                    cst.Parameters([cst.Param(cst.Name("_session_id"))]), small.value))])
                body[index] = old.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(registry))], call)])
            return updated.with_changes(body=body)

    new = module.visit(Transformer())
    if session is not None:
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import AddImportsVisitor

        context = CodemodContext()
        AddImportsVisitor.add_needed_import(context, "dupguard.runtime", "SessionRegistry")
        new = AddImportsVisitor(context).transform_module(new)
        return (module, new), (f"Keep one `{name}` per session: `{name}_sessions = SessionRegistry(...)`, "
                               f"`{name}_sessions.get(<session>)` in {_names(functions.values())}")
    return (module, new), f"Build `{name}` per call: `{factory}()` in {_names(functions.values())}"


def _line(ctx: "RuleContext", node: cst.CSTNode) -> int | str:
    try:
        return ctx.line(node)
    except KeyError:  # pragma: no cover - every node of the module has a position
        return "?"


def _names(functions) -> str:
    return ", ".join(f"`{fn.name.value}()`" for fn in functions)


def _session_params(functions) -> dict[int, str] | None:
    """The session parameter of each function, when every one of them has one."""
    out = {}
    for fn in functions:
        params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)]
        found = next((p for p in SESSION_PARAMS if p in params), None)
        if found is None:
            return None
        out[id(fn)] = found
    return out


def _taken(name: str, global_scope, fn_scopes, allow: tuple[str, ...] = (), model: "Model | None" = None) -> bool:
    """Is ``name`` bound or read anywhere it would clash (module, or the patched functions)?"""
    if model is not None and model.imports.get(name) in allow:
        return False
    if global_scope.assignments[name] or any(True for _ in global_scope.accesses[name]):
        return True
    return any(scope is not None and scope.assignments[name] for scope in fn_scopes)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _blank_count(lines: Sequence[cst.EmptyLine]) -> int:
    count = 0
    for line in lines:
        if line.comment is not None:
            break
        count += 1
    return count


def _blank_lines_before(stmt: cst.BaseStatement, wanted: int) -> cst.BaseStatement:
    """PEP 8's two blank lines around a top-level def (only adds, never removes)."""
    lines = list(getattr(stmt, "leading_lines", ()))
    missing = wanted - _blank_count(lines)
    if missing <= 0:
        return stmt
    blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""), comment=None)
    return stmt.with_changes(leading_lines=[blank] * missing + lines)


def _factory_def(factory: str, value: cst.BaseExpression, annotation, old: cst.SimpleStatementLine,
                 first: bool) -> cst.FunctionDef:
    returns = cst.Return(value=value, whitespace_after_return=cst.SimpleWhitespace(" "))
    body = cst.IndentedBlock([cst.SimpleStatementLine([returns], trailing_whitespace=old.trailing_whitespace)])
    fn = cst.FunctionDef(
        name=cst.Name(factory),
        params=cst.Parameters(),
        body=body,
        returns=annotation,
        leading_lines=old.leading_lines,
    )
    return fn if first else _blank_lines_before(fn, 2)  # type: ignore[return-value]


class FixSharedAgentSingleton(RuleCodemod):
    DESCRIPTION = "DUP101: build shared module-level agents per call (or per session); uncache cached factories."
    CODE = "DUP101"
