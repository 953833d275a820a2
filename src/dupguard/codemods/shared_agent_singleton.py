"""DUP101 / DUP102 fix (unsafe): stop sharing one stateful agent (or memory) between requests.

Three shapes are fixed; everything else is left with the reason:

* ``agent = Agent(...)`` at module level, read only inside functions, becomes a factory
  ``def make_agent(): return Agent(...)`` and every function that reads ``agent`` starts
  with ``agent = make_agent()``: one agent per call, the rest of the body unchanged.
* the same, when every one of those functions takes a session parameter (``session_id``,
  ``thread_id``, ``conversation_id``, ``chat_id``): ``agent_sessions =
  SessionRegistry(lambda _session_id: Agent(...))`` and ``agent =
  agent_sessions.get(session_id)``: one agent per conversation. A
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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import libcst as cst

from ..fixes import FixProposal, Replacement, insert_after, insert_before, remove, replace, update
from ..semantic.catalog import Kind
from ..semantic.model import analysis
from ._command import RuleCodemod
from ._common import _is_import_line, add_imports, imports_only_used_by, swap_imports
from ._ids import IdSource, session_id
from ._runtime_setup import STORE, setup
from ._sessions import PARAM, in_fanout, keyed_form, lease_wrap, private_form

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.catalog import Entry
    from ..semantic.model import Binding, Function, Model
    from ..semantic.shared import Shared

SESSION_PARAMS = ("session_id", "thread_id", "conversation_id", "chat_id")
UNCACHE = ("functools.lru_cache", "functools.cache")


def fix(ctx: FixContext, shared: Shared) -> FixProposal:
    model = ctx.model
    if model.is_streamlit:
        return FixProposal.refuse(
            "Streamlit shares cached resources between sessions; keep one per session in `st.session_state`"
        )
    if shared.factory is not None:
        return _uncache(ctx, shared.factory)
    binding = shared.binding
    if binding is None or shared.owner_class is not None:
        return FixProposal.refuse("only a module-level name or a cached factory is rewritten automatically")
    if binding.scope != "module" or binding.function is not None:
        where = "the class" if binding.scope == "class" else "the application state"
        return FixProposal.refuse(f"an object held on {where} is not rewritten automatically; build it per request")
    if "." in binding.target:
        return FixProposal.refuse(f"`{binding.target}` is an attribute; only a plain module-level name is rewritten")
    return _module_name(ctx, shared, binding)


# ----------------------------------------------------------------------------- cached factory


def _uncache(ctx: FixContext, fn: Function) -> FixProposal:
    module = ctx.module
    decorators = [d for d in fn.decorators if d.callee in UNCACHE]
    if not decorators:
        names = ", ".join(d.dotted or "?" for d in fn.decorators)
        return FixProposal.refuse(f"the cache decorator ({names}) is not one dupguard removes automatically")
    drop = {id(d.node) for d in decorators}
    node = fn.node

    def undecorated(updated: cst.FunctionDef) -> cst.FunctionDef:
        # comments between decorators move to the next kept decorator (or the ``def``)
        carry: list[cst.EmptyLine] = []
        kept = []
        for before, dec in zip(node.decorators, updated.decorators):
            if id(before.decorator) in drop:  # updated nodes are copies: match the originals
                carry.extend(dec.leading_lines)
            else:
                kept.append(dec.with_changes(leading_lines=[*carry, *dec.leading_lines]))
                carry = []
        return updated.with_changes(decorators=kept, lines_after_decorators=[*carry, *updated.lines_after_decorators])

    replacements: list[Replacement] = [update(node, undecorated)]
    # the cache decorator's import goes too when nothing else uses it
    unused = imports_only_used_by(ctx, [d.node for d in decorators if d.node is not None])
    lines: list[cst.SimpleStatementLine] = []
    for statement in unused.values():
        line = ctx.parent(statement)
        if isinstance(line, cst.SimpleStatementLine) and all(line is not seen for seen in lines):
            lines.append(line)
    removed: set[int] = set()
    for line in lines:
        if len(line.body) != 1 or not isinstance(line.body[0], (cst.Import, cst.ImportFrom)):
            continue
        statement = line.body[0]
        if isinstance(statement.names, cst.ImportStar):
            continue
        aliases = [alias for alias in statement.names if id(alias) not in unused]
        if len(aliases) == len(statement.names):
            continue
        if not aliases:
            replacements.append(remove(line))
            removed.add(id(line))
            continue
        if isinstance(statement, cst.ImportFrom) and statement.lpar is not None:
            continue  # a parenthesised import: leave its layout alone
        aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        replacements.append(replace(line, line.with_changes(body=[statement.with_changes(names=aliases)])))
    body = module.body
    if (
        len(body) > 1
        and id(body[0]) in removed
        and _is_import_line(body[0])
        and all(r.node is not body[1] for r in replacements)
        and ctx.top_index(node) != 1
    ):
        # the removed import opened the file: do not leave it starting with blank lines
        kept_lines = list(body[1].leading_lines)
        while kept_lines and kept_lines[0].comment is None:
            kept_lines.pop(0)
        replacements.append(update(body[1], lambda first: first.with_changes(leading_lines=kept_lines)))
    return FixProposal(
        f"Remove `@{decorators[0].dotted}` from `{fn.name}()`: a new agent per call", tuple(replacements)
    )


# ----------------------------------------------------------------------------- module-level name


@dataclass(eq=False)
class _Member:
    """One module-level name of the group being turned into factories."""

    name: str
    stmt: cst.SimpleStatementLine
    small: cst.Assign | cst.AnnAssign
    annotation: cst.Annotation | None
    factory: str = ""
    functions: dict[int, cst.FunctionDef] = field(default_factory=dict)  # id → a function that reads it
    reads: dict[int, list[cst.CSTNode]] = field(default_factory=dict)  # id(function) → its reads of the name
    value_refs: list[cst.CSTNode] = field(default_factory=list)  # its reads in other members' values
    # reads that are the whole body of a one-parameter lambda (a session-history getter,
    # ``lambda session_id: history``), with that parameter
    getters: list[tuple[cst.CSTNode, str]] = field(default_factory=list)


class _Candidates:
    """The stateful objects bound to a plain name at module level (those a factory can replace),
    by name in source order, and by the statement that binds them: computed once per model, so
    that each of a module's thousand findings does not scan the thousand others."""

    def __init__(self, model: Model) -> None:
        from ..semantic.shared import shared_objects

        self.by_name: dict[str, Shared] = {
            s.binding.target: s
            for s in shared_objects(model)
            if s.binding is not None
            and s.binding.scope == "module"
            and s.binding.function is None
            and s.factory is None
            and s.owner_class is None
            and "." not in s.binding.target
        }
        self.order = {name: index for index, name in enumerate(self.by_name)}
        self.by_statement: dict[int, list[str]] = {}
        for name, shared in self.by_name.items():
            assert shared.binding is not None
            self.by_statement.setdefault(id(shared.binding.statement), []).append(name)


@analysis
def _candidates(model: Model) -> _Candidates:
    return _Candidates(model)


def _module_name(ctx: FixContext, shared: Shared, binding: Binding) -> FixProposal:
    """Factory (or session registry) for a module-level name, together with the stateful
    module-level objects it is built from or that are built from it: ``memory = Memory()`` +
    ``agent = Agent(memory=memory)`` become ``make_memory()`` and ``make_agent()``, the latter
    calling the former, so a fresh agent never shares the old memory."""
    from libcst.metadata import ClassScope, ComprehensionScope, FunctionScope, GlobalScope

    model, module = ctx.model, ctx.module
    known = _candidates(model)
    # the finding's own object is one of them, last when the model's list does not have it
    extra = binding.target not in known.by_name

    def candidate(name: str) -> Shared:
        return shared if extra and name == binding.target else known.by_name[name]

    def in_order(names: Iterable[str]) -> list[str]:
        found = {n for n in names if n in known.by_name or (extra and n == binding.target)}
        return sorted(found, key=lambda n: known.order.get(n, len(known.order)))

    def binding_around(node: cst.CSTNode) -> list[str]:
        """The candidates whose binding statement holds ``node``, in order."""
        names: list[str] = []
        for above in ctx.ancestors(node):
            names.extend(known.by_statement.get(id(above), ()))
            if extra and above is binding.statement:
                names.append(binding.target)
        return in_order(names)

    scopes = ctx.scopes

    def span(node: cst.CSTNode) -> tuple[int, int, int, int]:
        return ctx.positions.range(node)

    def inside(node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        r, o = span(node), span(outer)
        return (o[0], o[1]) <= (r[0], r[1]) and (r[2], r[3]) <= (o[2], o[3])

    group: dict[str, _Member] = {}
    work = [binding.target]
    global_scope = None
    while work:
        name = work.pop()
        if name in group:
            continue
        if len(group) >= 8:
            return FixProposal.refuse(f"`{binding.target}` is tied to too many other shared objects")
        member = _member(name, candidate(name).binding, ctx)
        if isinstance(member, str):
            return FixProposal.refuse(member)
        global_scope = scopes.get(member.small)
        if not isinstance(global_scope, GlobalScope):
            return FixProposal.refuse(f"`{name}` is not bound at module level")
        bound = list(global_scope.assignments[name])
        if len(bound) != 1:
            return FixProposal.refuse(f"`{name}` is bound {len(bound)} times in this module")
        group[name] = member
        # in source order (libcst keeps references in a set: the message must not change from run to run)
        for access in sorted(bound[0].references, key=lambda a: ctx.positions.range(a.node)):
            scope = access.scope
            while isinstance(scope, ComprehensionScope):
                scope = scope.parent
            at = f" (line {_line(ctx, access.node)})"
            if isinstance(scope, FunctionScope) and isinstance(scope.node, cst.FunctionDef):
                member.functions[id(scope.node)] = scope.node
                member.reads.setdefault(id(scope.node), []).append(access.node)
            elif isinstance(scope, FunctionScope):
                param = _getter_param(scope.node, access.node)
                if param is None:
                    return FixProposal.refuse(f"`{name}` is read in a lambda{at}")
                member.getters.append((access.node, param))
            elif isinstance(scope, ClassScope):
                return FixProposal.refuse(f"`{name}` is read in a class body{at}")
            else:
                owner = next(
                    (
                        other
                        for other in binding_around(access.node)
                        if other != name
                        and (holder := candidate(other).binding) is not None
                        and holder.value is not None
                        and inside(access.node, holder.value)
                    ),
                    None,
                )
                if owner is None:
                    return FixProposal.refuse(f"`{name}` is also read at module level{at}")
                member.value_refs.append(access.node)
                work.append(owner)
        # what this one is built from: other stateful module-level objects read in its value
        # (only a name that occurs in the value can be read there: checked first, so that a
        # module with thousands of agents costs each fix the size of its value)
        value = member.small.value
        assert value is not None
        for other in in_order(_names_in(value)):
            built_from = candidate(other).binding
            if other in group or other == name or built_from is None:
                continue
            statement = built_from.statement
            for assignment in (
                scopes[statement.body[0]].assignments[other] if isinstance(statement, cst.SimpleStatementLine) else ()
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
            return FixProposal.refuse(
                f"`{functions[key].name.value}()` reads both {both}, which are built from each other"
            )
    getters = [getter for member in group.values() for getter in member.getters]
    if not functions and not getters:
        return FixProposal.refuse(f"`{binding.target}` is not read by any function")
    for fn in functions.values():
        if not isinstance(fn.body, cst.IndentedBlock):
            return FixProposal.refuse(f"`{fn.name.value}()` is a one-line function")

    fn_scopes = [scopes.get(fn.body.body[0]) for fn in functions.values()]
    # reads inside a fan-out (gather, create_task, executor.submit): each task gets its own object
    fanout = {
        id(node)
        for member in group.values()
        for key, nodes in member.reads.items()
        for node in nodes
        if in_fanout(ctx, node, member.functions[key])
    }
    if len(group) == 1 and not getters and shared.kind is Kind.MEMORY:
        keyed = _keyed(ctx, shared, next(iter(group.values())), fanout, global_scope, fn_scopes)
        if keyed is not None:
            return keyed
    session = _session_params(functions.values()) if len(group) == 1 else None
    name = binding.target
    registry = f"{name}_sessions"
    if session is not None and (
        _taken(registry, global_scope, fn_scopes)
        or _taken(
            "SessionRegistry",
            global_scope,
            fn_scopes,
            allow=("dupguard.runtime.SessionRegistry", "dupguard.runtime.registry.SessionRegistry"),
            model=model,
        )
    ):
        session = None
    if getters and session is None:
        # a getter can only look the object up by its session: the registry or nothing
        return FixProposal.refuse(
            f"`{binding.target}` is returned by a session-history lambda; keep one per session in a store"
        )
    for member in group.values():
        member.factory = f"_make_{member.name.lstrip('_')}" if member.name.startswith("_") else f"make_{member.name}"
        if session is None and _taken(member.factory, global_scope, fn_scopes):
            return FixProposal.refuse(f"the factory name `{member.factory}` is already used in this module")

    config = module.config_for_parsing
    replacements: list[Replacement] = []
    # a getter looks the object up by its session; a member's value calls the factory of the
    # member it was built from
    getter_ids = {id(ref) for ref, _ in getters}
    for ref, param in getters:
        call = cst.Call(cst.Attribute(cst.Name(registry), cst.Name("get")), [cst.Arg(cst.Name(param))])
        replacements.append(replace(ref, call))
    for member in group.values():
        for ref in member.value_refs:
            if id(ref) not in getter_ids:
                replacements.append(replace(ref, cst.Call(cst.Name(member.factory))))
    # one object per call (or per session) at the top of every function that reads it; a read
    # in a fan-out gets one per task (then the function needs no binding for it if that was all)
    for member in group.values():
        private = _private_value(member, candidate(member.name)) if session is not None else None
        for key, fn in member.functions.items():
            for node in member.reads.get(key, ()):
                if id(node) in fanout:
                    fresh = private.deep_clone() if private is not None else cst.Call(cst.Name(member.factory))
                    replacements.append(replace(node, fresh))
            if all(id(node) in fanout for node in member.reads.get(key, ())):
                continue
            if session is None:
                line = f"{member.name} = {member.factory}()"
            else:
                line = f"{name} = {name}_sessions.get({session[key]})"
            new_line = cst.parse_statement(line + module.default_newline, config=config)
            assert isinstance(fn.body, cst.IndentedBlock)
            statements = fn.body.body
            first = 1 if statements and _is_docstring(statements[0]) else 0
            if first < len(statements):
                replacements.append(insert_before(statements[first], new_line))
            else:
                replacements.append(insert_after(statements[first - 1], new_line))
    # the bindings themselves: a factory (PEP 8 spacing after it, unless the next line is
    # another shared object, whose own fix adds the spacing before it), or a registry
    others = set(known.by_statement) | {id(binding.statement)}
    body = module.body
    # every member is a top-level statement (``_member``)
    position = {id(m): ctx.body_index(m.stmt) or 0 for m in group.values()}
    for rebound in sorted(group.values(), key=lambda m: position[id(m)]):
        index = position[id(rebound)]
        entry = candidate(rebound.name).entry
        replacements.append(update(rebound.stmt, _rebinding(rebound, index == 0, session is not None, registry, entry)))
        nxt = index + 1
        if session is None and nxt < len(body) and id(body[nxt]) not in others:
            replacements.append(update(body[nxt], _spaced))
    where = ", ".join(filter(None, [_names(functions.values()), "its session-history lambda" if getters else ""]))
    if session is not None:
        return FixProposal(
            f"Keep one `{name}` per session: `{name}_sessions = SessionRegistry(...)`, "
            f"`{name}_sessions.get(<session>)` in {where}",
            (*replacements, *add_imports(ctx, [("dupguard.runtime", "SessionRegistry")])),
        )
    made = ", ".join(f"`{m.factory}()`" for m in sorted(group.values(), key=lambda m: m.name))
    return FixProposal(f"Build {_names_of(group)} per call: {made}, called in {where}", tuple(replacements))


def _rebinding(member: _Member, first: bool, per_session: bool, registry: str, entry: Entry | None = None) -> Any:
    """What ``member``'s binding becomes (from the statement as the fix's other replacements
    left it: its value may call another member's factory)."""

    def rebind(old: cst.SimpleStatementLine) -> cst.BaseStatement:
        small = old.body[0]
        assert isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None
        if not per_session:
            return _factory_def(member.factory, _per_call_value(small.value, entry), member.annotation, old, first)
        call = cst.Call(
            cst.Name("SessionRegistry"),
            [cst.Arg(cst.Lambda(cst.Parameters([cst.Param(cst.Name("_session_id"))]), small.value))],
        )
        return old.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(registry))], call)])

    return rebind


def _spaced(stmt: cst.BaseStatement) -> cst.BaseStatement:
    return _blank_lines_before(stmt, 2)


def _names_in(node: cst.CSTNode) -> set[str]:
    """Every name read or written anywhere in ``node``."""
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    node.visit(Names())
    return found


def _names_of(group: dict) -> str:
    return " and ".join(f"`{n}`" for n in sorted(group))


def _member(name: str, binding: Binding | None, ctx: FixContext) -> _Member | str:
    assert binding is not None
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
    if ctx.body_index(stmt) is None:
        return f"`{name}` is bound inside a block (if/try/with); only a top-level binding is rewritten"
    return _Member(name, stmt, small, annotation)


def _line(ctx: FixContext, node: cst.CSTNode) -> int | str:
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


def _per_call_value(value: cst.BaseExpression, entry: Entry | None) -> cst.BaseExpression:
    """What a per-call factory builds: ``value``, except that a memory keyed by a constant in a
    shared store (``SQLiteSession("support", "chats.db")``) would still be one conversation for
    every call (DUP103): it gets a store of its own instead (``SQLiteSession("support")``)."""
    if entry is None or not entry.session_kwargs or not isinstance(value, cst.Call):
        return value
    keys = [a for k in entry.session_kwargs if (a := _catalog_arg(value, k)) is not None]
    if all(isinstance(a.value, (cst.SimpleString, cst.Integer)) for a in keys):
        return private_form(value, entry)
    return value


def _catalog_arg(call: cst.Call, key: str) -> cst.Arg | None:
    if not key.isdigit():
        return next((a for a in call.args if a.keyword is not None and a.keyword.value == key), None)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[int(key)] if len(positional) > int(key) else None


def _private_value(member: _Member, shared: Shared) -> cst.BaseExpression | None:
    value = member.small.value
    return private_form(value, shared.entry) if value is not None else None


def _keyed(
    ctx: FixContext, shared: Shared, member: _Member, fanout: set[int], global_scope: Any, fn_scopes: list
) -> FixProposal | None:
    """The memory kept per session in the framework's persistent history, each turn under a
    session lease (``_sessions.py``); None when it does not apply: no keyed form is known for
    the memory, or a function that uses it has no session or user id."""
    model, module = ctx.model, ctx.module
    value = member.small.value
    if value is None:
        return None
    form = keyed_form(value, shared.entry)
    if form is None:
        return None
    expression, needs, imports = form
    records = {id(f.node): f for f in model.functions}
    ids: dict[int, IdSource] = {}
    for key, nodes in member.reads.items():
        if all(id(node) in fanout for node in nodes):
            continue
        record = records.get(key)
        found = session_id(module, model, record) if record is not None else None
        if found is None or found.optional:
            return None
        ids[key] = found
    if not ids:
        return None
    factory = f"_make_{member.name.lstrip('_')}" if member.name.startswith("_") else f"make_{member.name}"
    if _taken(factory, global_scope, fn_scopes):
        return FixProposal.refuse(f"the factory name `{factory}` is already used in this module")
    lease_names = {True: "asession_lease", False: "session_lease"}
    prepared = setup(ctx, STORE, *needs)
    if isinstance(prepared, str):
        return FixProposal.refuse(prepared)
    placed, setup_imports = prepared
    config = module.config_for_parsing
    replacements: list[Replacement] = []
    private = private_form(value, shared.entry)
    used_async = set()
    for key, nodes in member.reads.items():
        fn = member.functions[key]
        for node in nodes:
            if id(node) in fanout:
                replacements.append(replace(node, private.deep_clone()))
        source = ids.get(key)
        if source is None:
            continue
        is_async = fn.asynchronous is not None
        used_async.add(is_async)
        line = cst.parse_statement(f"{member.name} = {factory}({source.expr}){config.default_newline}", config=config)
        lease = f"{lease_names[is_async]}({STORE.name}, {source.expr})"
        assert isinstance(fn.body, cst.IndentedBlock)
        replacements.append(update(fn.body, lease_wrap(fn, line, lease, is_async, config)))

    def rebind(old: cst.SimpleStatementLine) -> cst.BaseStatement:
        returns = cst.Return(value=expression, whitespace_after_return=cst.SimpleWhitespace(" "))
        body = cst.IndentedBlock([cst.SimpleStatementLine([returns], trailing_whitespace=old.trailing_whitespace)])
        made = cst.FunctionDef(
            name=cst.Name(factory),
            params=cst.Parameters([cst.Param(cst.Name(PARAM))]),
            body=body,
            leading_lines=old.leading_lines,
        )
        return _blank_lines_before(made, 2)

    replacements.append(update(member.stmt, rebind))
    index = next(i for i, s in enumerate(module.body) if s is member.stmt)
    if index + 1 < len(module.body):
        replacements.append(update(module.body[index + 1], _spaced))
    needed = [*setup_imports, *imports, *(("dupguard.runtime", lease_names[a]) for a in sorted(used_async))]
    if not fanout and imports:
        # the class the factory no longer builds (ChatMemoryBuffer → Memory): its import goes
        # when nothing else reads it, or becomes the new one when it comes from the same module
        swapped, needed = swap_imports(ctx, imports_only_used_by(ctx, [value]), needed)
        replacements.extend(swapped)
    replacements[:0] = [*add_imports(ctx, needed), *placed]
    where = _names(fn for key, fn in member.functions.items() if key in ids)
    return FixProposal(
        f"Keep one `{member.name}` per session in the framework's history: `{factory}(<session>)` in {where}, "
        f"each turn under `{lease_names[True] if True in used_async else lease_names[False]}(_store, <session>)`",
        tuple(replacements),
    )


class FixSharedAgentSingleton(RuleCodemod):
    DESCRIPTION = "build shared module-level agents per call (or per session); uncache cached factories."


class FixSharedMemorySingleton(RuleCodemod):
    DESCRIPTION = "build shared module-level memories per call (or per session)."
