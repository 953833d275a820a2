"""One ``tool_calls`` payload executed twice (DUP502) and model↔tool loops with no cap (DUP505).

**Replays.** A tool-execution site executes a *payload*: the iterable of the loop or
comprehension that feeds it (``for call in msg.tool_calls: execute(call)`` executes
``msg.tool_calls``), or the argument of a batch executor (``process_tool_calls(last_message)``
executes ``last_message``). Two sites replay one payload when they execute the same payload
expression in the same function, the second can run after the first (same or nested block,
or the first in a ``try`` body and the second in its ``except``/``finally``; not the two arms
of an ``if``/``else``, and not after a branch that returned), and the payload's name was not
rebound in between. Executing with a seen-id check (``if call["id"] in seen: continue``) or
through ``ToolCallLedger`` makes the second execution skip the ids already run.

**Unbounded loops.** A ``while`` loop that calls the model and executes tools (a hand-written
model↔tool loop) is bounded when its test or an exit ``if`` in it compares a counter, a
length or a deadline (``while steps < MAX_STEPS``, ``if turns >= LIMIT: break``), or when it
dedups per turn (a seen-id check, ``TurnToolGuard.reserve``, ``ToolCallLedger``). Otherwise a
model that keeps asking for the same tool keeps getting it executed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .effects import ToolRef, name_effect
from .guards import idempotent, is_guard_call, is_seen_test, runtime_receiver
from .jobs import takes_jobs
from .model import Call, Function, Loop, Model, analysis, string_value
from .nodes import comparison_parts, descendants, dotted, dotted_names_in, names_in, token_text
from .retries import _loop_targets, loop_iterable, reads_input
from .runs import _last, direct_run, helper_runs, is_model_call, tool_execution
from .vocabulary import BATCH_EXEC_RE, BODY_NOISE, BODY_WRITE_METHODS, CAP_WORDS, MODEL_CALL_SUFFIXES


@dataclass(eq=False)
class Site:
    """Where a payload of tool calls is executed."""

    call: Call  # the tool execution (or the helper call that executes the batch)
    payload: str  # dotted text of what is executed: "msg.tool_calls", "last_message"
    unit: cst.CSTNode  # the loop/comprehension or the call: one execution of the payload
    report: cst.CSTNode  # where a replay of this site is reported
    loop: Loop | None
    what: str


@dataclass(eq=False)
class Replay:
    first: Site
    second: Site


def _sites(model: Model) -> Iterator[Site]:
    for call in model.calls:
        what = tool_execution(model, call)
        batch = False
        if what is None:
            helper = model.called_function(call)
            if helper is None or helper is call.function or not _executes_tools(model, helper):
                continue
            what, batch = f"{helper.name}(...)", True
        else:
            what = what.partition("|")[0]  # "fn|TOOLS[...]": the callable, not where it was picked
            batch = bool(BATCH_EXEC_RE.search(_last(call.method or call.func)))
        args = _arg_names(call)
        own = [lp for lp in call.loops if lp.function is call.function]
        feeding = next((lp for lp in reversed(own) if _loop_targets(lp) & args), None)
        if feeding is not None:
            iterable = loop_iterable(feeding)
            text = dotted(iterable) if iterable is not None else None
            if text and "(" not in text and not _filtered(feeding):
                report = feeding.node if type(feeding.node) is cst.For else call.node
                yield Site(call, text, feeding.node, report, feeding, what)
            continue
        if batch:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if positional and positional[0].dotted and "(" not in positional[0].dotted:
                # the whole argument list is the payload: the same tool object with another
                # call id or input is another call, not a replay
                yield Site(call, f"{positional[0].dotted}\0{_signature(call)}", call.node, call.node, None, what)


def _signature(call: Call) -> str:
    """The call's arguments as text (keywords included), to compare two batch executions."""
    return "|".join(f"{a.keyword or ''}={a.star}{token_text(a.node)}" for a in call.args)


def _arg_names(call: Call) -> set[str]:
    out: set[str] = set()
    for arg in call.args:
        out |= names_in(arg.node)
    return out


def _filtered(loop: Loop) -> bool:
    """A comprehension with ``if`` clauses executes a subset: two of them may partition."""
    comp = getattr(loop.node, "for_in", None)
    return bool(comp is not None and comp.ifs)


def _executes_tools(model: Model, fn: Function) -> bool:
    return any(r.kind == "tool" for r in helper_runs(model, fn))


def _dedups(model: Model, fn: Function | None) -> bool:
    """Does the executing function skip ids it has already run (seen set, ledger)?"""
    return fn is not None and _function_dedups(model, fn)


@analysis
def _function_dedups(model: Model, fn: Function) -> bool:
    if any(is_seen_test(t) for t in fn.exit_tests):
        return True
    for call in fn.calls:
        if any(is_seen_test(t) for t in call.conditions):
            return True
        if is_guard_call(model, call) or runtime_receiver(model, call):
            return True
    return False


def _site_dedups(model: Model, site: Site) -> bool:
    if idempotent(model, site.call) or _dedups(model, site.call.function):
        return True
    helper = model.called_function(site.call)
    return helper is not None and _dedups(model, helper)


def _branch_of(site: Site) -> tuple[int, ...]:
    branch = site.call.branch
    if site.loop is not None and type(site.loop.node) is cst.For:
        body = id(site.loop.node.body)
        if body in branch:
            branch = branch[: branch.index(body)]
    return branch


def _try_then_handler(first: Site, second: Site) -> bool:
    """First in a ``try`` body, second in one of that ``try``'s handlers or its ``finally``."""
    for frame in first.call.trys:
        if frame.part != "body":
            continue
        handlers = getattr(frame.node, "handlers", ())
        for other in second.call.trys:
            if other.part == "except" and any(other.node is h for h in handlers):
                return True
            if other.part == "finally" and other.node is frame.node:
                return True
    return False


def _can_follow(model: Model, first: Site, second: Site) -> bool:
    if _try_then_handler(first, second):
        return True
    own_first = [t for t in first.call.conditions if not any(t is u for u in second.call.conditions)]
    own_second = [t for t in second.call.conditions if not any(t is u for u in first.call.conditions)]
    if own_first and own_second:
        return False  # each under its own condition: most likely a partition (read-only / writes)
    a, b = _branch_of(first), _branch_of(second)
    shorter = min(len(a), len(b))
    if a[:shorter] != b[:shorter]:
        return False  # different arms of an if/else, or a try body and an unrelated handler
    fn = first.call.function
    exits = fn.exit_tests if fn is not None else []
    own = [t for t in first.call.conditions if not any(t is u for u in second.call.conditions)]
    return not any(any(t is e for e in exits) for t in own)


@analysis
def _binding_seqs(model: Model) -> dict[tuple[Function | None, str], list[int]]:
    """(function, head of the target) → the ``seq`` of each binding, ascending (source order)."""
    out: dict[tuple[Function | None, str], list[int]] = {}
    for b in model.bindings:
        out.setdefault((b.function, b.target.split(".")[0]), []).append(b.seq)
    return out


def _rebound_between(model: Model, site: Site, first: Site, second: Site) -> bool:
    """Is the payload's head rebound, in the first site's function, between the two calls?"""
    head = site.payload.split("\0")[0].split(".")[0].split("[")[0]
    lo, hi = model.order(first.call), model.order(second.call)
    seqs = _binding_seqs(model).get((first.call.function, head), [])
    at = bisect_right(seqs, lo)
    return at < len(seqs) and seqs[at] <= hi


def replays(model: Model) -> Iterator[Replay]:
    sites = sorted(_sites(model), key=lambda s: model.order(s.call))
    reported: set[int] = set()
    # a replay is two sites with one payload in one function: only those are compared
    earlier: dict[tuple[str, Function | None], list[Site]] = {}
    for second in sites:
        group = earlier.setdefault((second.payload, second.call.function), [])
        for first in group if id(second.unit) not in reported else ():
            if first.unit is second.unit:
                continue
            if not _can_follow(model, first, second) or _rebound_between(model, second, first, second):
                continue
            if _site_dedups(model, first) or _site_dedups(model, second):
                continue
            reported.add(id(second.unit))
            yield Replay(first, second)
            break
        group.append(second)


# ----------------------------------------------------------------------------- DUP505

_ORDERINGS: frozenset[type[cst.BaseCompOp]] = frozenset(
    {cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual}
)
_EQUALITIES: frozenset[type[cst.BaseCompOp]] = frozenset({cst.Equal, cst.NotEqual, cst.Is, cst.IsNot})


def _is_cap(test: cst.CSTNode) -> bool:
    """``steps < MAX_STEPS``, ``turns >= LIMIT``, ``len(messages) > 40``, ``time.monotonic() < deadline``."""
    for op, left, right in comparison_parts(test):
        if op in _ORDERINGS:
            return True
        if op in _EQUALITIES:
            for side in (left, right):
                if type(side) is cst.Integer:
                    return True
                text = (dotted(side) or "").rsplit(".", 1)[-1]
                if text and (text.isupper() and len(text) > 1 or any(w in text.lower() for w in CAP_WORDS)):
                    return True
    return False


@dataclass(eq=False)
class ToolLoop:
    loop: Loop
    model_call: Call
    execution: Call
    what: str


def unbounded_tool_loops(model: Model) -> Iterator[ToolLoop]:
    for loop in model.loops:
        if loop.kind != "while":
            continue
        test = getattr(loop.node, "test", None)
        if test is not None and _is_cap(test):
            continue
        inside = model.calls_in(loop)
        nested = [loop, *_nested_loops(model).get(loop, ())]
        if any(_is_cap(t) for lp in nested for t in lp.exit_tests):
            continue
        if _budgeted(loop, [t for lp in nested for t in lp.exit_tests]):
            continue
        model_call = next((c for c in inside if is_model_call(model, c) or _calls_model(model, c)), None)
        if (
            model_call is None
            or reads_input(model, loop)
            or any(takes_jobs(model, c) for c in inside if c.function is loop.function)
        ):
            continue  # no model, or a chat/REPL/worker loop: every round starts from a new message
        execution = what = None
        for call in inside:
            run = direct_run(model, call)
            if run is None or run.kind != "tool":
                helper = model.called_function(call)
                if helper is None or helper is call.function:
                    continue
                runs = [r for r in helper_runs(model, helper) if r.kind == "tool"]
                if not runs or _dedups(model, helper):
                    continue
                execution, what = call, f"{runs[0].what} inside `{helper.name}()`"
                break
            if idempotent(model, call):
                continue
            execution, what = call, run.what
            break
        if execution is None or _never_defined(model, execution):
            continue
        if any(_dedups_call(model, c) for c in inside) or _dedups(model, loop.function):
            continue
        if _only_reads(model, _dispatched(model, execution)):
            continue
        yield ToolLoop(loop, model_call, execution, what or "")


# ----------------------------------------------------------------------------- what the loop runs


def _never_defined(model: Model, call: Call) -> bool:
    """Is the executor a bare name that nothing in the file defines (no ``def``, class, binding,
    import, parameter or builtin of that name, and no ``import *``)? The loop raises NameError
    before it runs a tool, so it replays nothing: a reference fragment, such as a notebook cell
    that shows the loop of an earlier lesson without its tools. Taught by
    bstraehle/ai-ml-dl@9f0a595f21 mcp/L5.ipynb cell 7 (``execute_tool`` is defined only in
    mcp/L3.ipynb)."""
    import builtins

    name = call.func or ""
    if not name.isidentifier() or call.callee is not None or model.star_import or hasattr(builtins, name):
        return False
    if name in model.imports or name in model.unplaced_imports or name in model.classes:
        return False
    if model.function_named(name, within=call.function):
        return False
    if model.local_binding(name, call.function) is not None or any(b.target == name for b in model.bindings):
        return False
    fn = call.function
    while fn is not None:
        if name in fn.params or name in fn.local_names or name in fn.global_names:
            return False
        fn = fn.parent
    return True


def _dispatched(model: Model, call: Call, depth: int = 0) -> list[ToolRef] | None:
    """The tools a tool execution can run, when the code says all of them: the entries of the
    module-level dispatch table it indexes (``TOOLS[name](**args)``, ``fn = TOOLS[name]; fn(...)``,
    ``TOOLS.get(name)``), followed through the module-local helper that does the indexing
    (``handle_tool_calls(calls, messages)``, ``execute_tool(name, args)``). None when any part
    cannot be followed (a parameter, an import, a table built at run time)."""
    if depth > 2:
        return None
    what = tool_execution(model, call)
    if what is not None:
        table = _table_name(call, what)
        if table is not None:
            return _table_tools(model, table, call.function)
    helper = model.called_function(call)
    if helper is None or helper is call.function:
        return None
    found: list[ToolRef] = []
    for inner in helper.calls:
        if inner.function is not helper or tool_execution(model, inner) is None:
            continue
        tools = _dispatched(model, inner, depth + 1)
        if tools is None:
            return None
        found += tools
    return found or None


def _table_name(call: Call, what: str) -> str | None:
    func = call.func or ""
    if func.endswith("[]") and "(" not in func:
        return func[:-2]
    _, bar, picked = what.partition("|")  # "fn|TOOLS[...]", "fn|TOOLS.get(...)"
    if bar:
        return picked.removesuffix("[...]").removesuffix(".get(...)")
    return None


def _table_tools(model: Model, table: str, scope: Function | None) -> list[ToolRef] | None:
    """``{"lookup_sales_data": lookup_sales_data, ...}``: one tool per entry, named by its key,
    implemented by the module's function of that name."""
    binding = model.local_binding(table, scope) if "." not in table else None
    if binding is None or type(binding.value) is not cst.Dict:
        return None
    out: list[ToolRef] = []
    for element in binding.value.elements:
        key = string_value(getattr(element, "key", None))
        value = getattr(element, "value", None)
        if not isinstance(key, str) or type(value) is not cst.Name:
            return None  # ``**more``, a computed key, a lambda: not all of them are known
        out.append(ToolRef(key, model.function_named(value.value, within=binding.function), value))
    return out


def _only_reads(model: Model, tools: list[ToolRef] | None) -> bool:
    """Does every tool only read? Its name says so (``lookup_…``, ``search_…``, the effect
    vocabulary of ``semantic.effects``), or, for a name with no known verb, its body makes no
    write: no write call (``semantic.effects``: ``requests.post``, a verb that makes something new;
    ``text.replace(...)`` is no write), and the module's helpers it calls make none either (a model
    call is an answer, not a side effect). A name that says it sets a state (``restart_service``,
    ``update_…``) is not a read: a stuck model repeats the restart. A tool the code does not show
    is not known to read."""
    if not tools:
        return False
    for tool in tools:
        effect = name_effect(tool.name) if tool.name else None
        if effect is None and tool.function is not None:
            effect = "write" if _body_writes(model, tool.function, 0) else "read"
        if effect != "read":
            return False
    return True


def _body_writes(model: Model, fn: Function, depth: int) -> bool:
    if depth > 3:
        return True
    for call in fn.calls:
        if call.function is not fn or (call.func or "").endswith(MODEL_CALL_SUFFIXES):
            continue
        helper = model.called_function(call)
        if helper is not None and helper is not fn:
            if _body_writes(model, helper, depth + 1):
                return True
            continue
        last = call.method or (call.func or "").rsplit(".", 1)[-1]
        if last in BODY_WRITE_METHODS or (last not in BODY_NOISE and name_effect(last) == "write"):
            return True
    return False


_BUDGET_WORDS = ("budget", "quota", "remaining", "exhausted", "allowance", "credits", "limit", "left")


def _budgeted(loop: Loop, exit_tests: list[cst.BaseExpression]) -> bool:
    """A loop bounded by a tool-call budget rather than an iteration cap: its test or an exit
    test reads a counter the loop itself counts (``remaining -= len(calls)`` and
    ``while remaining:`` / ``if not remaining: break``), or asks a budget object
    (``if budget.exhausted(): return``, ``while not tracker.over_limit:``)."""
    tests = [*exit_tests]
    test = getattr(loop.node, "test", None)
    if test is not None:
        tests.append(test)
    if not tests:
        return False
    counters: set[str] = set()
    for node in descendants(loop.node):
        if type(node) is cst.AugAssign and type(node.operator) in (cst.AddAssign, cst.SubtractAssign):
            target = dotted(node.target)
            if target and _numeric(node.value):
                counters.add(target)
    for test in tests:
        read = set(dotted_names_in(test))
        if read & counters:
            return True
        words = " ".join(read).lower() + " " + token_text(test).lower()
        if any(word in words for word in _BUDGET_WORDS):
            return True
    return False


def _numeric(value: cst.BaseExpression) -> bool:
    """``1``, ``n``, ``usage.total_tokens``, ``len(calls)``: what a counter is advanced by (not
    ``messages += [reply]``)."""
    kind = type(value)
    if kind is cst.Integer or kind is cst.Name or kind is cst.Attribute:
        return True
    return isinstance(value, cst.Call) and dotted(value.func) == "len"


def _calls_model(model: Model, call: Call) -> bool:
    """A module-local helper (``self._call_model(messages)``) that calls the model itself."""
    helper = model.called_function(call)
    return helper is not None and helper is not call.function and _makes_model_call(model, helper)


@analysis
def _makes_model_call(model: Model, fn: Function) -> bool:
    return any(is_model_call(model, c) for c in fn.calls if c.function is fn)


@analysis
def _nested_loops(model: Model) -> dict[Loop, list[Loop]]:
    """Loop → the loops nested in it. A loop's enclosing loops are read off the first call
    inside it (the loops around that call, up to the loop itself); a loop with no call inside
    is nested in nothing."""
    enclosing: dict[Loop, tuple[Loop, ...]] = {}
    for call in model.calls:
        for i, lp in enumerate(call.loops):
            enclosing.setdefault(lp, call.loops[:i])
    out: dict[Loop, list[Loop]] = {}
    for inner in model.loops:
        for outer in enclosing.get(inner, ()):
            out.setdefault(outer, []).append(inner)
    return out


def _dedups_call(model: Model, call: Call) -> bool:
    """A per-turn dedup inside the loop: a seen-id condition, a guard call, a runtime guard."""
    if any(is_seen_test(t) for t in call.conditions):
        return True
    if is_guard_call(model, call) or runtime_receiver(model, call):
        return True
    return bool(re.search(r"reserve|should_skip|record_execution", call.method or ""))


@analysis
def payload_executions(model: Model) -> frozenset[int]:
    """``id`` of every call that executes a payload of tool calls (the sites DUP502 compares):
    DUP508, which looks at one tool called again, leaves these to DUP502."""
    return frozenset(id(site.call) for site in _sites(model))
