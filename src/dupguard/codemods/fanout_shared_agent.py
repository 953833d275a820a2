"""DUP201 / DUP202 fix (unsafe): each concurrent task gets its own agent from a factory.

``agent = Agent(...)`` becomes ``def make_agent(): return Agent(...)`` (plus ``agent =
make_agent()`` when something else still reads ``agent``), and every run the fan-out starts
uses a fresh one: ``agent.achat(q)`` → ``make_agent().achat(q)``, ``pool.submit(bot, q)``
→ ``pool.submit(make_bot(), q)``, a helper's ``bot(q)`` → ``make_bot()(q)``, and a bound
method handed once to ``pool.map`` is wrapped so that each item builds its own agent:
``pool.map(lambda *args, **kwargs: make_agent().chat(*args, **kwargs), docs)``. A binding
that already is a call of a local zero-argument factory reuses that factory.

Why unsafe: the tasks no longer share the agent's history (the point), and an agent is
built per task. Refused for attributes (``self.agent``), names bound more than once, and
runs this fix cannot find in the source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import FixProposal, Replacement, replace, update
from ..semantic.nodes import contains
from ..semantic.vocabulary import INHERENTLY_MANY
from ._command import RuleCodemod
from ._common import bound_names
from .shared_agent_singleton import _blank_lines_before, _factory_def

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.fanout import FanOut
    from ..semantic.model import Function, Model


def fix(ctx: FixContext, fan: FanOut) -> FixProposal:
    model, module = ctx.model, ctx.module
    binding = fan.agent
    name = binding.target
    if "." in name or binding.scope not in ("module", "function"):
        return FixProposal.refuse(f"`{name}` is not a plain name; give each task its own agent by hand")
    stmt = binding.statement
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return FixProposal.refuse(f"`{name} = ...` shares its line with other statements")
    small = stmt.body[0]
    plain = isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
    annotated = isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)
    value = small.value if (plain or annotated) and isinstance(small, (cst.Assign, cst.AnnAssign)) else None
    if value is None:
        return FixProposal.refuse(f"`{name}` is not bound by a plain assignment")
    if binding.function is None:
        at_top = ctx.body_index(stmt) is not None
    else:
        at_top = any(s is stmt for s in getattr(binding.function.node.body, "body", ()))
    if not at_top:
        return FixProposal.refuse(
            f"`{name}` is bound inside a nested block; only a binding at the top of its scope is rewritten"
        )
    scope = ctx.scope(small)
    assignments = list(scope.assignments[name]) if scope is not None else []
    if len(assignments) != 1:
        return FixProposal.refuse(f"`{name}` is bound more than once")
    accesses: dict[int, cst.CSTNode] = {id(a.node): a.node for a in assignments[0].references}

    # the factory: an existing zero-argument local one, or a new ``make_<name>``
    new_factory = not (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Name)
        and any(f.name == value.func.value and f.parent is None and not f.params for f in model.functions)
    )
    if not new_factory:
        assert isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
        factory = value.func.value
    else:
        factory = f"_make_{name.lstrip('_')}" if name.startswith("_") else f"make_{name}"
        if _taken(model, factory):
            return FixProposal.refuse(f"the factory name `{factory}` is already used in this module")

    per_task: dict[int, cst.CSTNode] = {}  # Name nodes → ``factory()``
    wrapped: dict[int, cst.CSTNode] = {}  # bound-method references → per-item lambda
    # every fan-out of this agent in the file gets the same rewrite, so the fixes of several
    # findings are the same change (applied once) and the leftover binding is known
    from ..semantic.fanout import async_fanouts, thread_fanouts

    fans = [f for f in (*async_fanouts(model), *thread_fanouts(model)) if f.agent is binding] or [fan]
    runs = [(f, run) for f in fans for run in f.runs]
    for this_fan, run in runs:
        many = this_fan.call.method in INHERENTLY_MANY  # the reference is evaluated once for all items
        node = run.node
        direct = (
            isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and id(node.value) in accesses
        ) or (isinstance(node, cst.Name) and id(node) in accesses)
        if many and direct:
            wrapped[id(node)] = node
            continue
        found = _run_refs(model, node, name, accesses)
        if found is None:
            return FixProposal.refuse(f"a run of `{name}` at line {ctx.line(node)} is not one this fix can rewrite")
        per_task.update((id(ref), ref) for ref in found)
    if not per_task and not wrapped:
        return FixProposal.refuse(f"no run of `{name}` found")
    count = len(per_task) + len(wrapped)
    # a reference inside a wrapped one is rewritten by the wrapping lambda
    per_task = {
        i: n for i, n in per_task.items() if i not in wrapped and not any(contains(w, n) for w in wrapped.values())
    }
    remaining = [
        n for i, n in accesses.items() if i not in per_task and not any(contains(w, n) for w in wrapped.values())
    ]
    config = module.config_for_parsing
    replacements: list[Replacement] = [replace(ref, cst.Call(cst.Name(factory))) for ref in per_task.values()]
    replacements += [replace(ref, _lambda(ref, factory, config)) for ref in wrapped.values()]
    if new_factory:
        top = binding.function is None
        annotation = small.annotation if isinstance(small, cst.AnnAssign) else None
        bound_value = value

        def factory_def(updated: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
            fn: cst.BaseStatement = _factory_def(factory, bound_value, annotation, updated, first=not top)
            if not top:
                fn = fn.with_changes(leading_lines=updated.leading_lines)
            if not remaining:
                return fn
            rebind: cst.BaseStatement = cst.parse_statement(
                f"{name} = {factory}(){module.default_newline}", config=config
            )
            if top:
                rebind = _blank_lines_before(rebind, 2)
            return cst.FlattenSentinel([fn, rebind])

        replacements.append(update(stmt, factory_def))
    return FixProposal(
        f"Give each task its own `{name}`: `{factory}()` at {count} run(s) in this file"
        + ("" if new_factory else " (the existing factory)"),
        tuple(replacements),
    )


def _lambda(ref: cst.CSTNode, factory: str, config: cst.PartialParserConfig) -> cst.BaseExpression:
    """``agent.chat`` → ``lambda *args, **kwargs: make_agent().chat(*args, **kwargs)``."""
    target = f"{factory}().{ref.attr.value}" if isinstance(ref, cst.Attribute) else f"{factory}()"
    return cst.parse_expression(f"lambda *args, **kwargs: {target}(*args, **kwargs)", config=config)


def _taken(model: Model, name: str) -> bool:
    return name in bound_names(model)


def _run_refs(model: Model, node: cst.CSTNode, name: str, accesses: dict[int, cst.CSTNode]) -> list[cst.CSTNode] | None:
    """The Name nodes (reads of the agent) that one run of the fan-out goes through."""
    if isinstance(node, cst.Call):
        head = node.func.value if isinstance(node.func, cst.Attribute) else node.func
        if isinstance(head, cst.Name) and id(head) in accesses:
            return [head]  # ``agent.achat(q)`` / ``bot(q)``
        call = model.call_for_node(node)
        helper = model.called_function(call) if call is not None else None
        return _helper_refs(helper, accesses) if helper is not None else None
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and id(node.value) in accesses:
        return [node.value]  # ``pool.submit(agent.chat, q)``: evaluated per task
    if isinstance(node, cst.Name):
        if id(node) in accesses:
            return [node]
        helper = model.function_named(node.value)
        return _helper_refs(helper, accesses) if helper is not None else None
    return None


def _helper_refs(helper: Function, accesses: dict[int, cst.CSTNode]) -> list[cst.CSTNode] | None:
    """Reads of the agent inside a module-local helper that a task runs."""
    found: list[cst.CSTNode] = []
    for call in helper.calls:
        node = call.node
        if not isinstance(node, cst.Call):
            continue
        head = node.func.value if isinstance(node.func, cst.Attribute) else node.func
        if isinstance(head, cst.Name) and id(head) in accesses:
            found.append(head)
    return found or None


class FixGatherSharedAgent(RuleCodemod):
    DESCRIPTION = "give each concurrent task its own agent from a factory."


class FixThreadsSharedAgent(RuleCodemod):
    DESCRIPTION = "give each thread its own agent from a factory."
