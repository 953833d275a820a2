"""DUP101 shared-agent-singleton and DUP102 shared-memory-singleton: a stateful agent or memory
bound once (module level, class attribute, app state, cached factory) and used by concurrent
requests. Which objects are shared and where they are used is ``dupguard.semantic.shared``;
the fix is ``dupguard.codemods.shared_agent_singleton``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...fixes import FixProposal
from ...semantic.catalog import Kind
from ...semantic.model import Model
from ...semantic.shared import Shared, shared_objects, uses_in_concurrent_code, uses_through_history_getter
from ..registry import Finding, ProposesFix, RuleContext, rule

if TYPE_CHECKING:
    from ...project import Fact


def _what(shared: Shared) -> str:
    entry = shared.entry
    if entry is not None and entry.framework == "project" and shared.fact is None:
        # a wrapper class of this file (``shared.run_state_entry``)
        runs = ", ".join(f"`{m}()`" for m in entry.run_methods)
        return f"a `{entry.names[0]}`, an agent wrapper whose {runs} keep(s) each run's state on the instance,"
    noun = "agent" if shared.kind is Kind.AGENT else "memory"
    framework = f"{shared.entry.framework} " if shared.entry is not None else ""
    call = shared.binding.value_call if shared.binding is not None else None
    built = f" (`{call.func}(...)`)" if call is not None and call.func else ""
    if shared.fact is not None:
        built = f" (`{shared.fact.built}`)"
    return f"a stateful {framework}{noun}{built}"


_HOW = {
    "module": "bound at module level in {where}",
    "state": "stored on the application state by a startup hook at {where}",
    "attribute": "assigned to this module at startup by {where}",
    "cached": "returned by a cached factory at {where}",
}


def _where(shared: Shared) -> str:
    fact = shared.fact
    if fact is not None:
        if fact.role == "shared-factory":
            return f"returned by the cached factory `{shared.name}()` ({fact.where})"
        return _HOW.get(fact.how, "built at {where}").format(where=fact.where)
    if shared.factory is not None:
        return f"returned by the cached factory `{shared.factory.name}()`"
    holder = shared.holder
    if holder is not None and holder.value_call is not None:
        once = (
            "bound at module level" if holder.scope == "module" else "built once by `{}` for the handlers defined in it"
        )
        once = once.format(holder.function.name if holder.function is not None else "")
        return f"held by `{holder.target}`, a `{holder.value_call.func}` {once},"
    if shared.owner_class is not None:
        return f"held by the single module-level `{shared.owner_class}` instance"
    if shared.binding is not None and shared.binding.scope == "class":
        return "bound on the class"
    if shared.binding is not None and ".state." in f".{shared.binding.target}":
        return "stored on the application state"
    if shared.binding is not None and shared.binding.scope == "function" and shared.binding.function is not None:
        return f"built once by `{shared.binding.function.name}` for the handlers defined in it"
    return "bound at module level"


def _shared_findings(model: Model, ctx: RuleContext, kind: Kind, advice: str) -> Iterable[Finding]:
    objects = list(shared_objects(model))
    uses = {id(s): uses_in_concurrent_code(model, s) for s in objects}
    reported: set[int] = set()  # one finding per place: ``self.agent`` seen from inside and outside
    holders: dict[str, list[Shared]] | None = None
    for shared in objects:
        if shared.kind is not kind or (shared.report_node is not None and id(shared.report_node) in reported):
            continue
        via = ""
        found = uses[id(shared)]
        if not found and kind is Kind.MEMORY:
            if holders is None:
                holders = _agents_by_memory(objects, uses)
            found, via = _indirect_uses(model, shared, holders, uses)
        if not found:
            elsewhere = _run_from_another_module(model, shared)
            if elsewhere is not None:
                assert shared.report_node is not None
                yield Finding(
                    shared.report_node,
                    f"`{shared.label}` is {_what(shared)} {_where(shared)} and shared by every request: "
                    f"{elsewhere.built}; {advice}",
                    fix=FixProposal.refuse(f"used from another module ({elsewhere.built.rpartition(' at ')[2]})"),
                )
            continue
        first = found[0]
        where = first.function.name if first.function else "the Streamlit script"
        more = f" and {len(found) - 1} more place(s)" if len(found) > 1 else ""
        if shared.fact is not None:
            yield _elsewhere(shared, ctx, found, via, where, more, advice)
            continue
        assert shared.report_node is not None  # bound in this file
        called = model.project.called(where) if model.project is not None and first.function else None
        caller = f", which is {called.built} at {called.where}" if called is not None else ""
        binding = shared.binding
        closure = binding is not None and binding.scope == "function" and "." not in binding.target
        fix: ProposesFix
        if shared.holder is not None:
            fix = FixProposal.refuse(f"held by `{shared.holder.target}`: build it per request there")
        elif closure:  # the codemod moves a module-level binding into the handler
            fix = FixProposal.refuse("closed over by handlers: build it in each handler")
        else:
            fix = ctx.fix(shared)
        reported.add(id(shared.report_node))
        yield Finding(
            shared.report_node,
            f"`{shared.label}` is {_what(shared)} {_where(shared)} and shared by every request: "
            f"used{via} in `{where}` (line {ctx.line(first.node)}){caller}{more}; {advice}",
            fix=fix,
        )


def _run_from_another_module(model: Model, shared: Shared) -> Fact | None:
    """A module-level object of this file that a project function of another module runs per
    request (the project index's "@runs." fact): this file has no use to report, the object's
    binding is the place to fix."""
    binding = shared.binding
    if model.project is None or shared.fact is not None or binding is None or shared.factory is not None:
        return None
    if binding.scope != "module" or binding.in_main or shared.owner_class is not None:
        return None
    return model.project.runs(binding.target)


def _elsewhere(shared: Shared, ctx: RuleContext, found: list, via: str, where: str, more: str, advice: str) -> Finding:
    """A finding about an object another module builds (the project index): reported where
    this file uses it (or names it), and fixed where it is built."""
    fact = shared.fact
    assert fact is not None
    first = found[0]
    label = f"`{shared.label}`"
    if shared.through:
        holder = f"`{shared.through}`" if fact.role != "runner" else f"the agent `{shared.through}` runs"
        what = f"is a stateful memory held by {holder} (`{fact.built}`, {_where(shared)})"
        used, via, label = "used here", f" through `{shared.through}`", shared.label
    elif fact.role == "runner":
        what = f"runs {fact.via}, {_what(shared)} {_where(shared)}"
        used = "called here"
    else:
        what = f"is {_what(shared)} {_where(shared)}"
        used = "used here" if shared.binding is None else "used"
    return Finding(
        shared.report_node if shared.report_node is not None else first.node,
        f"{label} {what}, shared by every request: {used}{via} in `{where}` (line {ctx.line(first.node)})"
        f"{more}; {advice}",
        fix=FixProposal.refuse(f"built in another module ({fact.where}): fix it there"),
    )


def _agents_by_memory(objects: list[Shared], uses: dict) -> dict[str, list[Shared]]:
    """Name → the used shared agents built with that name as an argument (``ReActAgent(...,
    memory=memory)``), in source order: one pass, so that a module with a thousand memories and
    a thousand agents does not compare every pair."""
    out: dict[str, list[Shared]] = {}
    for agent in objects:
        call = agent.binding.value_call if agent.binding is not None else None
        if agent.kind is not Kind.AGENT or not uses[id(agent)] or call is None:
            continue
        for name in dict.fromkeys(arg.dotted for arg in call.args if arg.dotted):
            out.setdefault(name, []).append(agent)
    return out


def _indirect_uses(model: Model, memory: Shared, holders: dict[str, list[Shared]], uses: dict) -> tuple[list, str]:
    """Uses of a memory through something else, and the words that say through what: a shared
    agent built with it runs it, and so does a runnable whose history getter returns it for
    every session (LangChain ``get_session_history``)."""
    agents = holders.get(memory.label)
    if agents:
        return uses[id(agents[0])], f" through `{agents[0].label}`"
    found, wrapper = uses_through_history_getter(model, memory)
    return found, (f" through `{wrapper}` (its history getter returns it for every session id)" if found else "")


@rule("DUP101", name="shared-agent-singleton", fix="shared_agent_singleton", safety="unsafe")
def shared_agent_singleton(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    return _shared_findings(
        model,
        ctx,
        Kind.AGENT,
        "build the agent per request, or keep one per session with "
        "`dupguard.runtime.SessionRegistry` and serialise it with `InvocationGuard`",
    )


@rule("DUP102", name="shared-memory-singleton", fix="shared_agent_singleton", safety="unsafe")
def shared_memory_singleton(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    return _shared_findings(
        model,
        ctx,
        Kind.MEMORY,
        "every user writes to one history; create the memory per request or keep one per "
        "session id with `dupguard.runtime.SessionRegistry`",
    )
