"""Fan-out: one stateful agent run many times at once by tasks or threads.

For each fan-out call (``asyncio.gather``, ``create_task``, a task group's ``start_soon``,
``executor.map``/``submit``, ``Thread(target=…)``, ``to_thread``, ``run_in_executor``) this
finds the agent runs it starts — directly in its arguments, as a bound method passed by
reference, or through a module-local helper — and whether one agent object is started more
than once (twice in the arguments, inside a comprehension or loop, or by ``map``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .catalog import Entry, Kind
from .catalog_data import ASYNC_FANOUT, ASYNC_WAITS, THREAD_CALLS
from .guards import serialised
from .hosts import host_event_registration
from .model import Binding, Call, Function, Model, analysis
from .vocabulary import ASYNC_SPAWN_METHODS, INHERENTLY_MANY, THREAD_METHODS


@dataclass(eq=False)
class AgentRun:
    """One start of a stateful agent: the run call or the bound-method reference."""

    node: cst.CSTNode
    agent: Binding
    in_comprehension: bool
    shared_state: bool = False


@dataclass(eq=False)
class FanOut:
    call: Call
    agent: Binding  # the stateful agent, or the shared state (ctx/memory) the runs are given
    runs: list[AgentRun]

    shared_state: bool = False  # the runs share a ctx/memory object, not an agent

    @property
    def what(self) -> str:
        """How messages name the shared object."""
        noun = "shared state" if self.shared_state else "stateful agent"
        return f"the {noun} `{self.agent.target}`"


def _entry_kind(model: Model, binding: Binding | None) -> tuple[Kind | None, Entry | None]:
    if binding is None or binding.value_call is None:
        return None, None
    return model.kind_of_expr_call(binding.value_call)


def agent_binding(model: Model, receiver: str | None, fn: Function | None) -> Binding | None:
    """The binding of a stateful agent named ``receiver`` as seen from ``fn``."""
    if not receiver or "(" in receiver or "[" in receiver:
        return None
    if receiver.startswith("self.") and fn is not None and fn.class_name:
        members = model.member_bindings(fn.class_name, receiver)
        binding = members[0] if members else None
    elif "." in receiver:
        return None
    else:
        binding = model.local_binding(receiver, fn)
    kind, _ = _entry_kind(model, binding)
    return binding if kind is Kind.AGENT else None


def _shared_state_arg(model: Model, call: Call) -> Binding | None:
    """A stateless agent run with one state object passed in (``agent.run(q, ctx=ctx)``):
    the shared ``ctx``/``memory`` is then what the concurrent runs share."""
    receiver = model.local_binding(call.receiver or "", call.function) if call.receiver else None
    _, entry = _entry_kind(model, receiver)
    if entry is None or call.method not in entry.run_methods:
        return None
    for name in entry.state_kwargs:
        arg = call.kw(name)
        state = model.local_binding(arg.dotted, call.function) if arg and arg.dotted else None
        kind, _ = _entry_kind(model, state)
        if kind is Kind.MEMORY:
            return state
    return None


def _runs_method(model: Model, binding: Binding, method: str | None) -> bool:
    _, entry = _entry_kind(model, binding)
    methods = entry.run_methods if entry is not None else ()
    return method in methods if methods else method is not None


def _deeper(inner: Call, outer: Call) -> bool:
    """Is ``inner`` inside a comprehension or loop that ``outer`` does not enclose?"""
    return len(inner.loops) > len(outer.loops)


@analysis
def _direct_runs(model: Model, fan: Call) -> list[AgentRun]:
    """Runs started by the calls nested in ``fan``'s arguments (memoised: a spawn is compared
    with every other spawn of its function)."""
    return list(_find_direct_runs(model, fan))


def _find_direct_runs(model: Model, fan: Call) -> Iterator[AgentRun]:
    for call in model.calls_within(fan):
        if call.receiver and call.method:
            binding = agent_binding(model, call.receiver, call.function)
            if binding is not None and _runs_method(model, binding, call.method):
                yield AgentRun(call.node, binding, _deeper(call, fan))
                continue
            state = _shared_state_arg(model, call)
            if state is not None:
                yield AgentRun(call.node, state, _deeper(call, fan), shared_state=True)
                continue
        if call.func and "." not in call.func:
            binding = agent_binding(model, call.func, call.function)
            if binding is not None and _runs_method(model, binding, "__call__"):
                yield AgentRun(call.node, binding, _deeper(call, fan))
                continue
        helper = model.called_function(call)
        if helper is not None:
            for inner in _helper_runs(model, helper):
                yield AgentRun(call.node, inner.agent, _deeper(call, fan))


def _helper_runs(model: Model, helper: Function) -> Iterator[AgentRun]:
    """Unguarded runs, inside a module-local helper, of an agent the helper does not create."""
    for call in helper.calls:
        if serialised(call):
            continue
        target, method = (call.receiver, call.method) if call.method else (call.func, "__call__")
        binding = agent_binding(model, target, helper)
        if binding is not None and binding.function is not helper and _runs_method(model, binding, method):
            yield AgentRun(call.node, binding, False)


def _reference_runs(model: Model, fan: Call) -> Iterator[AgentRun]:
    """Bound methods passed by reference: ``pool.submit(agent.chat, q)``, ``Thread(target=bot.run)``."""
    for arg in fan.args:
        text = arg.dotted or ""
        head, _, method = text.rpartition(".")
        if head:
            binding = agent_binding(model, head, fan.function)
            if binding is not None and _runs_method(model, binding, method):
                yield AgentRun(arg.node, binding, False)
        elif text:
            binding = agent_binding(model, text, fan.function)
            if binding is not None and _runs_method(model, binding, "__call__"):
                yield AgentRun(arg.node, binding, False)  # a callable agent: Strands ``Agent``
                continue
            helper = model.function_named(text, within=fan.function)
            if helper is not None:
                yield from (AgentRun(arg.node, r.agent, False) for r in _helper_runs(model, helper))


def _group(fan: Call, runs: list[AgentRun], many: bool) -> Iterator[FanOut]:
    by_agent: dict[int, list[AgentRun]] = {}
    for run in runs:
        by_agent.setdefault(id(run.agent), []).append(run)
    for group in by_agent.values():
        if many or len(group) > 1 or any(r.in_comprehension for r in group):
            yield FanOut(fan, group[0].agent, group, shared_state=group[0].shared_state)


def _is_async_fanout(call: Call) -> bool:
    return call.callee in ASYNC_FANOUT or (call.callee is None and call.method in ASYNC_SPAWN_METHODS)


def _is_thread_fanout(call: Call) -> bool:
    if call.callee in THREAD_CALLS:
        return True
    # ``textbox.submit(fn, inputs=..., outputs=...)`` is a Gradio event listener (entrypoints.py,
    # HOST_EVENT_REGISTRATIONS), not ``executor.submit(fn, *args)`` (bench/real-apps/baseline-b.toml,
    # juliensimon/smolagents-mcp-demo)
    if call.method == "submit" and (call.kw("inputs") is not None or call.kw("outputs") is not None):
        return False
    return call.callee is None and call.method in THREAD_METHODS


def _repeated(fan: Call, spawns: list[Call]) -> bool:
    """A spawn counts as many when it sits in a loop of its own function, or the same
    function spawns more than once."""
    own_loops = [loop for loop in fan.loops if loop.function is fan.function]
    return bool(own_loops) or sum(1 for s in spawns if s.function is fan.function) > 1


def _by_function(calls: list[Call]) -> dict[Function | None, list[Call]]:
    out: dict[Function | None, list[Call]] = {}
    for call in calls:
        out.setdefault(call.function, []).append(call)
    return out


def async_fanouts(model: Model) -> Iterator[FanOut]:
    spawns = [c for c in model.calls if _is_async_fanout(c) and c.callee not in ASYNC_WAITS]
    is_spawn = set(spawns)
    # ``_repeated`` only counts the spawns of the fan-out's own function
    spawns_in = _by_function(spawns)
    for call in model.calls:
        if not _is_async_fanout(call) or any(_is_async_fanout(o) for o in call.outer):
            continue
        runs = _direct_runs(model, call)
        many = call in is_spawn and _repeated(
            call, [s for s in spawns_in.get(call.function, ()) if _same_agent(model, s, runs)]
        )
        yield from _group(call, runs, many)


def _same_agent(model: Model, spawn: Call, runs: list[AgentRun]) -> bool:
    agents = {id(r.agent) for r in runs}
    return any(id(r.agent) in agents for r in _direct_runs(model, spawn))


@analysis
def _thread_runs(model: Model, call: Call) -> list[AgentRun]:
    return list(_reference_runs(model, call)) + _direct_runs(model, call)


def thread_fanouts(model: Model) -> Iterator[FanOut]:
    candidates = [c for c in model.calls if _is_thread_fanout(c) and not host_event_registration(model, c)]
    # ``_repeated`` only counts the candidates of the fan-out's own function
    candidates_in = _by_function(candidates)
    for call in candidates:
        runs = _thread_runs(model, call)
        if not runs:
            continue
        many = call.method in INHERENTLY_MANY or _repeated(
            call, [c for c in candidates_in.get(call.function, ()) if _same_agent_refs(model, c, runs)]
        )
        yield from _group(call, runs, many)


def _same_agent_refs(model: Model, call: Call, runs: list[AgentRun]) -> bool:
    agents = {id(r.agent) for r in runs}
    return any(id(r.agent) in agents for r in _thread_runs(model, call))
