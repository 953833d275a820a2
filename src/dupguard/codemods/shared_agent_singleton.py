"""DUP101 / DUP102 fix (unsafe): stop sharing one stateful agent (or memory) between requests.

Three shapes are fixed; everything else is left with the reason:

* ``agent = Agent(...)`` at module level, read only inside functions, becomes a factory
  ``def make_agent(): return Agent(...)`` and every function that reads ``agent`` starts
  with ``agent = make_agent()``: one agent per call, the rest of the body unchanged.
* the same, when every one of those functions takes a session parameter (``session_id``,
  ``thread_id``, ``conversation_id``, ``chat_id``): ``agent_sessions =
  SessionRegistry(lambda _session_id: Agent(...))`` and ``agent =
  agent_sessions.get(session_id)``: one agent per conversation (seed 000's store). A
  session-history getter that returns the name (``lambda session_id: history``, LangChain's
  ``RunnableWithMessageHistory``) becomes ``lambda session_id: history_sessions.get(session_id)``.
* a ``functools.lru_cache`` / ``functools.cache`` factory loses the cache decorator (and
  the import when nothing else uses it), so each call builds a fresh agent.

Why unsafe: the agent's history no longer survives between requests (which is the point,
but code may rely on it), construction now costs once per call, and other modules that
import the name are not updated. Refused when the name is read at module level, in a class
body, a decorator, a default value or a lambda (other than as a one-parameter history
getter's whole body), or rebound anywhere (``global``), when the new name is taken, or for
Streamlit (its cached resources need ``st.session_state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from ._command import RuleCodemod
from ._common import Replacement, _is_import_line, add_imports, module_of

if TYPE_CHECKING:
    from ..rules import RuleContext
    from ..semantic.model import Model
    from ..semantic.shared import Shared

SESSION_PARAMS = ("session_id", "thread_id", "conversation_id", "chat_id")
UNCACHE = ("functools.lru_cache", "functools.cache")

Result = tuple[Replacement | None, str]


def fix(model: Model, ctx: RuleContext, shared: Shared) -> Result:
    module = module_of(ctx)
    if model.is_streamlit:
        return None, "Streamlit shares cached resources between sessions; keep one per session in `st.session_state`"
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
    return _module_name(model, ctx, module, shared)


# ----------------------------------------------------------------------------- cached factory


def _uncache(model: Model, module: cst.Module, shared: Shared) -> Result:
    fn = shared.factory
    assert fn is not None
    decorators = [d for d in fn.decorators if d.callee in UNCACHE]
    if not decorators:
        names = ", ".join(d.dotted or "?" for d in fn.decorators)
        return None, f"the cache decorator ({names}) is not one dupguard removes automatically"
    drop = {id(d.node) for d in decorators}
    node = fn.node

    unused = _imports_only_used_by(module, model, [d.node for d in decorators])

    class DropImports(cst.CSTTransformer):
        """Remove the cache decorator's import when nothing else uses it."""

        def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
            if len(original.body) != 1 or not isinstance(original.body[0], (cst.Import, cst.ImportFrom)):
                return updated
            statement = original.body[0]
            if isinstance(statement.names, cst.ImportStar):
                return updated
            names = [alias for alias in statement.names if id(alias) not in unused]
            if len(names) == len(statement.names):
                return updated
            if not names:
                return cst.RemoveFromParent()
            if isinstance(statement, cst.ImportFrom) and statement.lpar is not None:
                return updated  # a parenthesised import: leave its layout alone
            names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(body=[updated.body[0].with_changes(names=names)])

    class Transformer(DropImports):
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
            return updated.with_changes(
                decorators=kept, lines_after_decorators=[*carry, *updated.lines_after_decorators]
            )

    new = _no_leading_blank_lines(module, module.visit(Transformer()))
    return (module, new), f"Remove `@{decorators[0].dotted}` from `{fn.name}()`: a new agent per call"


def _imports_only_used_by(module: cst.Module, model: Model, nodes: list) -> set[int]:
    """ids of the import aliases whose names are read only inside ``nodes``."""
    inside: set[int] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            inside.add(id(n))

    for node in nodes:
        if node is not None:
            node.visit(Collect())
    scopes = _scopes(module)
    global_scope = (
        scopes.get(module.body[0].body[0])
        if module.body and isinstance(module.body[0], cst.SimpleStatementLine)
        else None
    )
    if global_scope is None:
        return set()
    out: set[int] = set()
    for name in {n for n in model.imports}:
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
                        out.add(id(alias))
    return out


def _no_leading_blank_lines(module: cst.Module, new: cst.Module) -> cst.Module:
    """When the removed import opened the file, do not leave it starting with blank lines."""
    if (
        new.body
        and len(new.body) < len(module.body)
        and _is_import_line(module.body[0])
        and new.body[0].deep_equals(module.body[1])
    ):
        first = new.body[0]
        lines = list(first.leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        new = new.with_changes(body=[first.with_changes(leading_lines=lines), *new.body[1:]])
    return new


# ----------------------------------------------------------------------------- module-level name


@dataclass(eq=False)
class _Member:
    """One module-level name of the group being turned into factories."""

    name: str
    stmt: cst.SimpleStatementLine
    small: cst.Assign | cst.AnnAssign
    annotation: cst.Annotation | None
    factory: str = ""
    functions: dict = field(default_factory=dict)  # id(FunctionDef) → FunctionDef that reads it
    value_refs: set = field(default_factory=set)  # ids of Name nodes in other members' values
    # ids of Name nodes that are the whole body of a one-parameter lambda (a session-history
    # getter, ``lambda session_id: history``) → that parameter
    getters: dict = field(default_factory=dict)


def _module_name(model: Model, ctx: RuleContext, module: cst.Module, shared: Shared) -> Result:
    """Factory (or session registry) for a module-level name, together with the stateful
    module-level objects it is built from or that are built from it: ``memory = Memory()`` +
    ``agent = Agent(memory=memory)`` become ``make_memory()`` and ``make_agent()``, the latter
    calling the former, so a fresh agent never shares the old memory."""
    from libcst.metadata import ClassScope, ComprehensionScope, FunctionScope, GlobalScope

    from ..semantic.shared import shared_objects

    binding = shared.binding
    assert binding is not None
    candidates = {
        s.binding.target: s
        for s in shared_objects(model)
        if s.binding is not None
        and s.binding.scope == "module"
        and s.binding.function is None
        and s.factory is None
        and s.owner_class is None
        and "." not in s.binding.target
    }
    candidates.setdefault(binding.target, shared)
    scopes = _scopes(module)

    def span(node: cst.CSTNode) -> tuple[int, int, int, int]:
        return ctx.positions.range(node)

    def inside(node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        r, o = span(node), span(outer)
        return (o[0], o[1]) <= (r[0], r[1]) and (r[2], r[3]) <= (o[2], o[3])

    group: dict[str, _Member] = {}
    assignments: dict[str, object] = {}
    work = [binding.target]
    global_scope = None
    while work:
        name = work.pop()
        if name in group:
            continue
        if len(group) >= 8:
            return None, f"`{binding.target}` is tied to too many other shared objects"
        member = _member(name, candidates[name].binding, module)
        if isinstance(member, str):
            return None, member
        global_scope = scopes.get(member.small)
        if not isinstance(global_scope, GlobalScope):
            return None, f"`{name}` is not bound at module level"
        bound = list(global_scope.assignments[name])
        if len(bound) != 1:
            return None, f"`{name}` is bound {len(bound)} times in this module"
        group[name] = member
        assignments[name] = bound[0]
        for access in bound[0].references:  # type: ignore[attr-defined]
            scope = access.scope
            while isinstance(scope, ComprehensionScope):
                scope = scope.parent
            at = f" (line {_line(ctx, access.node)})"
            if isinstance(scope, FunctionScope) and isinstance(scope.node, cst.FunctionDef):
                member.functions[id(scope.node)] = scope.node
            elif isinstance(scope, FunctionScope):
                param = _getter_param(scope.node, access.node)
                if param is None:
                    return None, f"`{name}` is read in a lambda{at}"
                member.getters[id(access.node)] = param
            elif isinstance(scope, ClassScope):
                return None, f"`{name}` is read in a class body{at}"
            else:
                owner = next(
                    (
                        other
                        for other, s in candidates.items()
                        if other != name and inside(access.node, s.binding.value)
                    ),
                    None,
                )
                if owner is None:
                    return None, f"`{name}` is also read at module level{at}"
                member.value_refs.add(id(access.node))
                work.append(owner)
        # what this one is built from: other stateful module-level objects read in its value
        for other, s in candidates.items():
            if other in group or other == name:
                continue
            value = member.small.value
            for assignment in (
                scopes[s.binding.statement.body[0]].assignments[other]
                if isinstance(s.binding.statement, cst.SimpleStatementLine)
                else ()
            ):
                if any(inside(a.node, value) for a in assignment.references):
                    work.append(other)
    assert global_scope is not None
    functions: dict[int, cst.FunctionDef] = {}
    for member in group.values():
        functions.update(member.functions)
    readers: dict[int, list[str]] = {}
    for member in group.values():
        for key in member.functions:
            readers.setdefault(key, []).append(member.name)
    for key, names in readers.items():
        if len(names) > 1:
            both = " and ".join(f"`{n}`" for n in sorted(names))
            return None, f"`{functions[key].name.value}()` reads both {both}, which are built from each other"
    getters = {ref: param for member in group.values() for ref, param in member.getters.items()}
    if not functions and not getters:
        return None, f"`{binding.target}` is not read by any function"
    for fn in functions.values():
        if not isinstance(fn.body, cst.IndentedBlock):
            return None, f"`{fn.name.value}()` is a one-line function"

    fn_scopes = [scopes.get(fn.body.body[0]) for fn in functions.values()]
    session = _session_params(functions.values()) if len(group) == 1 else None
    name = binding.target
    registry = f"{name}_sessions"
    if session is not None:
        if _taken(registry, global_scope, fn_scopes) or _taken(
            "SessionRegistry",
            global_scope,
            fn_scopes,
            allow=("dupguard.runtime.SessionRegistry", "dupguard.runtime.registry.SessionRegistry"),
            model=model,
        ):
            session = None
    if getters and session is None:
        # a getter can only look the object up by its session: the registry or nothing
        return None, f"`{binding.target}` is returned by a session-history lambda; keep one per session in a store"
    for member in group.values():
        member.factory = f"_make_{member.name.lstrip('_')}" if member.name.startswith("_") else f"make_{member.name}"
        if session is None and _taken(member.factory, global_scope, fn_scopes):
            return None, f"the factory name `{member.factory}` is already used in this module"

    by_stmt = {id(m.stmt): m for m in group.values()}
    value_refs = {ref: m.factory for m in group.values() for ref in m.value_refs}
    local_lines = {}
    for member in group.values():
        for key, fn in member.functions.items():
            if session is None:
                local_lines[key] = f"{member.name} = {member.factory}()"
            else:
                local_lines[key] = f"{name} = {name}_sessions.get({session[key]})"
    others = {id(s.binding.statement) for s in candidates.values()}
    config = module.config_for_parsing

    class Transformer(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            param = getters.get(id(original))
            if param is not None:
                return cst.Call(cst.Attribute(cst.Name(registry), cst.Name("get")), [cst.Arg(cst.Name(param))])
            factory = value_refs.get(id(original))
            return cst.Call(cst.Name(factory)) if factory else updated

        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            line = local_lines.get(id(original))
            if line is None:
                return updated
            body = updated.body
            assert isinstance(body, cst.IndentedBlock)
            statements = list(body.body)
            at = 1 if statements and _is_docstring(statements[0]) else 0
            statements.insert(at, cst.parse_statement(line + config.default_newline, config=config))
            return updated.with_changes(body=body.with_changes(body=statements))

        def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
            body = list(updated.body)
            for index, stmt in enumerate(original.body):
                member = by_stmt.get(id(stmt))
                if member is None:
                    continue
                old = body[index]
                assert isinstance(old, cst.SimpleStatementLine)
                small = old.body[0]
                assert isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None
                if session is None:
                    body[index] = _factory_def(member.factory, small.value, member.annotation, old, index == 0)
                    nxt = index + 1
                    if nxt < len(body) and id(original.body[nxt]) not in others:
                        # PEP 8 spacing after the def, unless the next line is another shared
                        # object (its own fix adds the spacing before it)
                        body[nxt] = _blank_lines_before(body[nxt], 2)
                else:
                    call = cst.Call(
                        cst.Name("SessionRegistry"),
                        [cst.Arg(cst.Lambda(cst.Parameters([cst.Param(cst.Name("_session_id"))]), small.value))],
                    )
                    body[index] = old.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(registry))], call)])
            return updated.with_changes(body=body)

    new = module.visit(Transformer())
    where = ", ".join(filter(None, [_names(functions.values()), "its session-history lambda" if getters else ""]))
    if session is not None:
        new = add_imports(new, [("dupguard.runtime", "SessionRegistry")])
        return (module, new), (
            f"Keep one `{name}` per session: `{name}_sessions = SessionRegistry(...)`, "
            f"`{name}_sessions.get(<session>)` in {where}"
        )
    made = ", ".join(f"`{m.factory}()`" for m in sorted(group.values(), key=lambda m: m.name))
    return (module, new), f"Build {_names_of(group)} per call: {made}, called in {where}"


_SCOPES: list = []


def _scopes(module: cst.Module):
    """ScopeProvider costs several parses: resolve it once per module, for all its findings."""
    from libcst.metadata import ScopeProvider

    if not _SCOPES or _SCOPES[0] is not module:
        _SCOPES[:] = [module, cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)]
    return _SCOPES[1]


def _names_of(group: dict) -> str:
    return " and ".join(f"`{n}`" for n in sorted(group))


def _member(name: str, binding, module: cst.Module) -> _Member | str:
    stmt = binding.statement
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return f"`{name} = ...` shares its line with other statements"
    small = stmt.body[0]
    if isinstance(small, cst.Assign):
        if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
            return f"`{name}` is bound together with other names"
        annotation = None
    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
        annotation = small.annotation
    else:
        return f"`{name}` is not bound by a plain assignment"
    if not any(s is stmt for s in module.body):
        return f"`{name}` is bound inside a block (if/try/with); only a top-level binding is rewritten"
    return _Member(name, stmt, small, annotation)


def _line(ctx: RuleContext, node: cst.CSTNode) -> int | str:
    try:
        return ctx.line(node)
    except KeyError:  # pragma: no cover - every node of the module has a position
        return "?"


def _names(functions) -> str:
    return ", ".join(f"`{fn.name.value}()`" for fn in functions)


def _getter_param(lam: cst.CSTNode, read: cst.CSTNode) -> str | None:
    """``lambda session_id: history``: the one parameter, when ``read`` is the whole body."""
    if not isinstance(lam, cst.Lambda) or lam.body is not read:
        return None
    params = lam.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.kwonly_params:
        return None
    positional = [*params.posonly_params, *params.params]
    return positional[0].name.value if len(positional) == 1 else None


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


def _taken(name: str, global_scope, fn_scopes, allow: tuple[str, ...] = (), model: Model | None = None) -> bool:
    """Is ``name`` bound or read anywhere it would clash (module, or the patched functions)?"""
    if model is not None and model.imports.get(name) in allow:
        return False
    if global_scope.assignments[name] or any(True for _ in global_scope.accesses[name]):
        return True
    return any(scope is not None and scope.assignments[name] for scope in fn_scopes)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
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


def _factory_def(
    factory: str, value: cst.BaseExpression, annotation, old: cst.SimpleStatementLine, first: bool
) -> cst.FunctionDef:
    returns = cst.Return(value=value, whitespace_after_return=cst.SimpleWhitespace(" "))
    body = cst.IndentedBlock([cst.SimpleStatementLine([returns], trailing_whitespace=old.trailing_whitespace)])
    fn = cst.FunctionDef(
        name=cst.Name(factory),
        params=cst.Parameters(),
        body=body,
        returns=annotation.with_changes(whitespace_before_indicator=cst.SimpleWhitespace(" ")) if annotation else None,
        leading_lines=old.leading_lines,
    )
    return fn if first else _blank_lines_before(fn, 2)  # type: ignore[return-value]


class FixSharedAgentSingleton(RuleCodemod):
    DESCRIPTION = "build shared module-level agents per call (or per session); uncache cached factories."


class FixSharedMemorySingleton(RuleCodemod):
    DESCRIPTION = "build shared module-level memories per call (or per session)."
