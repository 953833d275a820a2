"""DUP508 tool-recalled-in-except: a tool called again in the ``except`` of the ``try`` that
called it first.

An ``except`` cannot tell whether the tool failed before or after its side effect: a reply
that timed out after the email went out, a validation of the result that failed after the row
was written. A fallback that calls the same tool again (with other arguments, or the same
ones) then runs it twice, and no retry counter or log sees the second run; under a retry loop
the runs multiply (crewAIInc/crewAI#7449: CrewAI's ``ToolUsage`` called a failing tool again
with unfiltered arguments, 6 runs for 3 attempts).

A call counts as a tool when ``semantic.runs.tool_execution`` says it executes one (a tool
object's ``invoke``/``run``, a tool executor, a dispatch table, an MCP ``call_tool``) or when
it calls a function of this module registered as a tool. The two calls must have the same
callee and share an argument (a fallback that sends the failure to an admin with the same
``send_email`` is another action). A payload of tool calls executed again (``for call in
msg.tool_calls``, ``execute_tool_calls(msg)``) is DUP502's, not this rule's. Handlers that only catch errors raised before a tool body
runs (argument validation, a bad signature) are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ...semantic.effects import is_test_module
from ...semantic.model import Call, Model
from ...semantic.nodes import code_of, names_in
from ...semantic.runs import tool_execution
from ...semantic.vocabulary import BEFORE_THE_BODY, MORE_TOOL_METHODS, TOOL_DECORATORS, TOOL_OBJECT_METHODS
from ..registry import Finding, RuleContext, rule

if TYPE_CHECKING:
    import libcst as cst


def _registered_tools(model: Model) -> set[str]:
    """Names of this module's functions that are tools: decorated as one, or given in a tools list."""
    from ...semantic.catalog import Kind
    from ...semantic.toolsets import tool_sets

    names = set()
    for fn in model.functions:
        for dec in fn.decorators:
            entry = model.catalog.lookup(dec.callee) if dec.callee else None
            if (entry is not None and entry.kind is Kind.TOOL) or (dec.dotted or "").rsplit(".", 1)[
                -1
            ] in TOOL_DECORATORS:
                names.add(fn.name)
    for tool_set in tool_sets(model):
        names.update(text for text, _ in tool_set.elements if text and "." not in text)
    return names


def _is_tool_call(model: Model, call: Call, registered: set[str]) -> bool:
    if call.method == "call_tool" or tool_execution(model, call) is not None:
        return True
    if call.method in MORE_TOOL_METHODS and call.receiver and "tool" in call.receiver.lower():
        return True
    if call.method in TOOL_OBJECT_METHODS | MORE_TOOL_METHODS and call.receiver in registered:
        return True  # ``send_invoice.invoke({...})`` on a ``@tool`` function of this module
    return bool(call.func and "." not in call.func and call.func in registered and model.called_function(call))


def _caught(handler: cst.CSTNode) -> set[str]:
    """Last names of the exception types an ``except`` clause catches (empty: everything)."""
    import libcst as cst

    kind = getattr(handler, "type", None)
    if kind is None:
        return set()
    parts = [e.value for e in kind.elements] if type(kind) is cst.Tuple else [kind]
    out = set()
    for value in parts:
        if type(value) is cst.Name:
            out.add(value.value)
        elif type(value) is cst.Attribute:
            out.add(value.attr.value)
        else:
            return set()
    return out


def _shares_arguments(first: Call, second: Call) -> bool:
    left: set[str] = set()
    right: set[str] = set()
    for arg in first.args:
        left |= names_in(arg.node)
    for arg in second.args:
        right |= names_in(arg.node)
    if left & right:
        return True
    if left or right:
        return False
    return [code_of(a.node) for a in first.args] == [code_of(a.node) for a in second.args]


def recalls(model: Model) -> Iterator[tuple[Call, Call]]:
    """(first call in the ``try`` body, the same tool called again in one of its ``except`` clauses)."""
    bodies: dict[int, list[Call]] = {}
    owner: dict[int, int] = {}  # id(except clause) → id(its try)
    in_except: list[tuple[Call, cst.CSTNode]] = []
    for call in model.calls:
        for frame in call.trys:
            if frame.part == "body":
                bodies.setdefault(id(frame.node), []).append(call)
                for handler in getattr(frame.node, "handlers", ()):
                    owner[id(handler)] = id(frame.node)
            elif frame.part == "except":
                in_except.append((call, frame.node))
    if not in_except:
        return
    from ...semantic.toolcalls import payload_executions

    payloads = payload_executions(model)  # a tool_calls payload executed again is DUP502's
    registered: set[str] | None = None
    for second, handler in in_except:
        if id(second) in payloads:
            continue
        firsts = [
            c
            for c in bodies.get(owner.get(id(handler), 0), ())
            if c.func == second.func and c.function is second.function
        ]
        if not firsts:
            continue
        if registered is None:
            registered = _registered_tools(model)
        if not _is_tool_call(model, second, registered):
            continue
        first = next((c for c in firsts if _shares_arguments(c, second)), None)
        if first is None:
            continue
        caught = _caught(handler)
        if caught and caught <= BEFORE_THE_BODY:
            continue
        yield first, second


@rule("DUP508", name="tool-recalled-in-except")
def tool_recalled_in_except(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    if is_test_module(model):
        return
    for first, second in recalls(model):
        yield Finding(
            second.node,
            f"`{(second.func or '').replace('[]', '[...]')}(...)` runs again in the `except` of the `try` that called it at line "
            f"{ctx.line(first.node)}: an error raised after the tool's side effect (the email went out, "
            "then the reply timed out) runs it a second time that no retry count or log sees, and a retry "
            "loop around it doubles every attempt (crewAIInc/crewAI#7449); keep only what may fail before "
            "the tool starts (argument parsing) in the `try`, call the tool once after it, and let its "
            "errors reach one retry policy that checks an idempotency key",
        )
