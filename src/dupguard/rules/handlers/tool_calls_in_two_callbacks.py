"""DUP403 tool-calls-in-two-callbacks: event callbacks that each execute the same tool calls.

A streaming client delivers the same tool call twice: once as it streams (deltas, a
"tool call done" event) and once in the final assembled message or the catch-all event. When
two callbacks of one handler each execute the tools they see, every tool runs twice (a handler
that listens to both streaming deltas and final completion events processes tools on both
paths). This module groups callbacks (``on_*`` methods of one class, or
module-level ``on_*`` functions), finds the calls in each that execute a tool call, and pairs
callbacks that see the same tool call from two different events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import libcst as cst

from ...semantic.model import Call, Function, Model, string_value
from ...semantic.nodes import dotted_names_in, has_membership_test
from ...semantic.vocabulary import (
    BARE_VERBS,
    CATCH_ALL,
    EXEC_VERBS,
    FINAL_WORDS,
    NAME_KEYS,
    NOT_EXECUTING,
    SEEN_WORDS,
    SKIP_WORDS,
    STREAM_WORDS,
    TOOL_EXECUTOR_NOUNS,
)
from ..registry import Finding, RuleContext, rule


@dataclass(frozen=True)
class ToolCallback:
    function: Function
    execution: Call  # the first call in it that executes a tool call
    category: str  # "stream" | "final" | "any"


def _words(name: str) -> list[str]:
    return [w for w in name.lower().strip("_").split("_") if w]


def _category(name: str) -> str | None:
    if name in CATCH_ALL:
        return "any"
    words = _words(name)[1:]  # drop "on"
    if any(w in STREAM_WORDS for w in words):
        return "stream"
    if any(w in FINAL_WORDS for w in words):
        return "final"
    return None


def _names_tool_call(node: cst.CSTNode) -> bool:
    """``block["name"]``, ``tc.function.name``, ``call.tool_name``: a tool call's name."""
    if type(node) is cst.Subscript and len(node.slice) == 1:
        index = node.slice[0].slice
        value = string_value(index.value if type(index) is cst.Index else None)
        return value in NAME_KEYS
    if type(node) is cst.Attribute:
        return node.attr.value in NAME_KEYS
    return False


def executes_tool(call: Call) -> bool:
    """Does this call execute a tool call (by the callee's name or by dispatching on a name)?"""
    text = call.func or ""
    if "[]" in text and any(w in text.lower() for w in ("tool", "function", "registry", "handlers")):
        return True  # self.tools[name](**args)
    last = text.rsplit(".", 1)[-1].replace("()", "")
    words = _words(last)
    while words and words[0] in SKIP_WORDS:
        words = words[1:]
    if (
        words
        and words[0] in EXEC_VERBS
        and any(w in TOOL_EXECUTOR_NOUNS for w in words[1:])
        and not any(w in NOT_EXECUTING for w in words[1:])
    ):
        return True
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if last in BARE_VERBS and len(call.args) >= 2 and positional and _names_tool_call(positional[0].node):
        return True
    receiver = (call.receiver or "").lower()
    return bool(
        call.method in BARE_VERBS and any(w in receiver for w in ("tool", "executor", "dispatcher", "registry"))
    )


def _deduplicated(call: Call, fn: Function) -> bool:
    """``if tc.id in self.seen: continue`` / ``if call_id not in done:`` around the execution."""
    tests = list(call.conditions) + list(fn.exit_tests)
    for test in tests:
        if not has_membership_test(test):
            continue
        if any(
            any(w in n.lower() for w in SEEN_WORDS) or n.lower().endswith((".id", "_id", "ids"))
            for n in dotted_names_in(test)
        ):
            return True
    return False


def _execution(model: Model, fn: Function, depth: int = 0) -> Call | None:
    for call in fn.calls:
        if executes_tool(call) and not _deduplicated(call, fn):
            return call
        if depth == 0:
            target = model.called_function(call)
            if target is not None and target is not fn and _execution(model, target, 1) is not None:
                return call
    return None


def tool_callbacks(model: Model) -> Iterator[list[ToolCallback]]:
    """Per class (or the module's top level): callbacks that execute tool calls, in source order."""
    groups: dict[str | None, list[ToolCallback]] = {}
    for fn in model.functions:
        if fn.parent is not None or not fn.name.startswith(("on_", "handle_event")):
            continue
        category = _category(fn.name)
        if category is None:
            continue
        execution = _execution(model, fn)
        if execution is not None:
            groups.setdefault(fn.class_name, []).append(ToolCallback(fn, execution, category))
    yield from (group for group in groups.values() if len(group) > 1)
    # callbacks handed to one stream by keyword: ``stream(on_delta=show, on_done=finish)``
    for call in model.calls:
        group = []
        for arg in call.args:
            if not arg.keyword or not arg.dotted or not (arg.keyword.startswith("on_") or arg.keyword in CATCH_ALL):
                continue
            category = _category(arg.keyword)
            target = _function_for(model, arg.dotted, call)
            if category is None or target is None:
                continue
            execution = _execution(model, target)
            if execution is not None:
                group.append(ToolCallback(target, execution, category))
        if len(group) > 1:
            group.sort(key=lambda cb: model.function_order(cb.function))
            yield group


def _function_for(model: Model, text: str, call: Call) -> Function | None:
    if "." not in text:
        return model.function_named(text)
    head, _, name = text.partition(".")
    if head == "self" and call.function is not None and call.function.class_name and "." not in name:
        return model.function_named(name, call.function.class_name)
    return None


def double_executions(model: Model) -> Iterator[tuple[ToolCallback, ToolCallback]]:
    """(earlier, later) callbacks of one handler that both execute the tool calls they see,
    fed by two different events (a streaming one and a final one, or a catch-all)."""
    reported: set[int] = set()
    for group in tool_callbacks(model):
        for i, later in enumerate(group):
            for earlier in group[:i]:
                if earlier.category != later.category or "any" in (earlier.category, later.category):
                    if id(later.execution.node) not in reported:
                        reported.add(id(later.execution.node))
                        yield earlier, later
                    break


@rule("DUP403", name="tool-calls-in-two-callbacks")
def tool_calls_in_two_callbacks(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for earlier, later in double_executions(model):
        owner = f" of `{later.function.class_name}`" if later.function.class_name else ""
        yield Finding(
            later.execution.node,
            f"`{later.function.name}` executes tool calls, and so does `{earlier.function.name}` "
            f"(line {ctx.line(earlier.execution.node)}){owner}: both events carry the same tool call, "
            "so each tool runs twice; execute tools from one canonical event (the final assembled "
            "message) or skip ids already run (`dupguard.runtime.ToolCallLedger`)",
        )
