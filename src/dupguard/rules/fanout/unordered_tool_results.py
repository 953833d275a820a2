"""DUP203 unordered-tool-results: tool results written to a history as they finish, not as
requested.

Two shapes: a loop over ``as_completed(...)`` that appends to a history, and a
task function started by ``asyncio.gather``/``create_task``/an executor that appends to a
history it does not own. Either way the history's order depends on timing, and a result can
land after the next model call has started.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...semantic.catalog_data import COMPLETION_ORDER
from ...semantic.fanout import _is_async_fanout, _is_thread_fanout
from ...semantic.history import APPEND_METHODS, looks_like_history
from ...semantic.hosts import host_event_registration
from ...semantic.model import Call, Function, Model
from ...semantic.vocabulary import TOOL_MESSAGE_CLASSES
from ..registry import Finding, RuleContext, rule


def _history_append(model: Model, call: Call) -> bool:
    return (
        call.method in APPEND_METHODS | {"extend", "insert"}
        and bool(call.receiver)
        and looks_like_history(model, call.receiver or "", call)
    )


def _appends_tool_message(model: Model, call: Call) -> bool:
    """The appended value is a tool result message: a ``ToolMessage(...)``-like constructor
    or a ``{"role": "tool", ...}`` dict (whatever the list is called)."""
    if not call.args:
        return False
    node = call.args[-1].node
    inner = model.call_for_node(node)
    if inner is not None:
        return (inner.func or "").rsplit(".", 1)[-1] in TOOL_MESSAGE_CLASSES
    return model.dict_roles.get(id(node)) == "tool"


def _task_functions(model: Model) -> dict[int, Function]:
    tasks: dict[int, Function] = {}
    for fan in model.calls:
        if not (_is_async_fanout(fan) or _is_thread_fanout(fan)) or host_event_registration(model, fan):
            continue
        for call in model.calls_within(fan):
            fn = model.called_function(call)
            if fn is not None:
                tasks[id(fn)] = fn
        for arg in fan.args:
            if arg.dotted and "." not in arg.dotted:
                fn = model.function_named(arg.dotted)
                if fn is not None:
                    tasks[id(fn)] = fn
    return tasks


def unordered_writes(model: Model) -> Iterator[tuple[Call, str]]:
    """(append call, why) for history writes whose order is completion order."""
    tasks = _task_functions(model)
    for call in model.calls:
        if call.method not in APPEND_METHODS | {"extend", "insert"} or not call.receiver:
            continue
        if any(loop.kind == "for" and loop.iter_callee in COMPLETION_ORDER for loop in call.loops) and (
            _history_append(model, call) or _appends_tool_message(model, call)
        ):
            yield call, "in completion order (a loop over `as_completed`)"
            continue
        fn = call.function
        if fn is not None and id(fn) in tasks and _history_append(model, call):
            receiver = (call.receiver or "").split(".")[0]
            local = model.local_binding(receiver, fn)
            owned = local is not None and local.function is fn
            if not owned:
                yield call, f"from inside the parallel task `{fn.name}`"


@rule("DUP203", name="unordered-tool-results")
def unordered_tool_results(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for call, why in unordered_writes(model):
        yield Finding(
            call.node,
            f"`{call.receiver}.{call.method}(...)` writes parallel results {why}: the history's order "
            "depends on timing and a late result can be injected into the next turn; collect the batch "
            "with `dupguard.runtime.run_batch` (results in request order, late ones to the orphan buffer)",
        )
