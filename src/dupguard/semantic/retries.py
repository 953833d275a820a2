"""Retries around work that runs tools (DUP501).

Two shapes re-execute an agent run or a tool execution when an attempt fails:

- **a retry loop**: ``for attempt in range(3):``/``while True:`` around a ``try`` whose
  ``except`` lets the loop go round again, ``for attempt in Retrying(...)`` (tenacity), or
  the bare ``for _ in range(3): result = await agent.run(message)`` form. The loop
  retries a run only when the run's inputs do not change between iterations: a model↔tool
  loop (``for step in range(MAX_STEPS)``) feeds each iteration a new response, so its tool
  executions are not retries;
- **a retry decorator** (tenacity ``@retry``, ``@backoff.on_exception``/``on_predicate``,
  ``@stamina.retry``, ``retrying``/``retry`` packages) on a function that runs an agent or
  executes a tool.

When the failed attempt had already executed some tools (the refund went through, then the
model call timed out), the next attempt executes them again. A retry is safe when the code
checks an idempotency key or a seen-id set before the run (``already_processed(key)``,
``if call.id in seen: continue``, a user guard from ``extend-idempotency-guards``), or runs
it through ``dupguard.runtime`` (``Idempotency.run/arun``, ``@idempotent``,
``ToolCallLedger``, ``turn_lease``).

Sources for the decorator table: tenacity 9 (``tenacity.retry``), backoff 2.2
(``backoff.on_exception``, ``backoff.on_predicate``), stamina 24 (``stamina.retry``),
retrying 1.3 (``retrying.retry``), retry 0.9 (``retry.retry``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .catalog_data import COUNTED_ITERABLES, INPUT_FUNCS, RETRY_DECORATORS, RETRYING_ITERABLES
from .guards import idempotent, idempotent_in, once_context
from .model import Call, Decorator, Function, Loop, Model, analysis
from .nodes import LEAVING, dotted, loop_parts, names_in, small_statements
from .runs import Run, helper_runs, run_at
from .vocabulary import (
    INPUT_METHODS,
    LIBRARY_ROOTS,
    NOT_RETRY_RE,
    RETRY_NAME_RE,
    RETRY_TARGET_WORDS,
    SINGLE_ATTEMPT,
    TOOL_EXEC_RE,
)


@dataclass(eq=False)
class Retry:
    node: cst.CSTNode  # where the finding is reported: the loop or the decorator
    shape: str  # "loop" | "decorator"
    label: str  # "`for attempt in range(3)`", "`@retry(...)`"
    run: Run


# ----------------------------------------------------------------------------- loops


def _loop_targets(loop: Loop) -> set[str]:
    """The names a ``for`` loop or a comprehension (all its ``for`` clauses) binds."""
    node = loop.node
    if type(node) is cst.For:
        return names_in(node.target)
    if (
        type(node) is cst.ListComp
        or type(node) is cst.SetComp
        or type(node) is cst.GeneratorExp
        or type(node) is cst.DictComp
    ):
        out: set[str] = set()
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            out |= names_in(comp.target)
            comp = comp.inner_for_in
        return out
    return set()


def loop_iterable(loop: Loop) -> cst.BaseExpression | None:
    parts = loop_parts(loop.node)
    return parts[1] if parts is not None else None


def _retry_shaped(loop: Loop) -> str | None:
    """'tenacity' | 'counted' | 'while' when the loop can be a retry loop at all."""
    if loop.kind == "for":
        if loop.iter_callee in RETRYING_ITERABLES:
            return "tenacity"
        if loop.iter_callee in COUNTED_ITERABLES:
            return "counted"
        return None
    if loop.kind == "while":
        return "while"
    return None


def _except_retries(try_node: cst.CSTNode) -> bool:
    """Does some ``except`` of this ``try`` fall through (or ``continue``), going round again?"""
    for handler in getattr(try_node, "handlers", ()):
        body = handler.body.body
        if not body:
            return True
        if not any(type(s) in LEAVING for s in small_statements(body[-1])):
            return True
    return False


def _retry_try(loop: Loop, call: Call) -> bool:
    """Is ``call`` in the body of a ``try`` inside ``loop`` whose ``except`` retries?"""
    body = getattr(loop.node, "body", None)
    if body is None or id(body) not in call.branch:
        return False
    loop_depth = call.branch.index(id(body))
    for frame in call.trys:
        if frame.part != "body":
            continue
        try_body = id(getattr(frame.node, "body", None))
        # the try's suite is nested in the loop's suite: the try is inside the loop
        if try_body in call.branch and call.branch.index(try_body) > loop_depth and _except_retries(frame.node):
            return True
    return False


def _small_count(loop: Loop) -> bool:
    """``range(3)``, ``range(MAX_RETRIES)``: a retry budget, not a work list."""
    iterable = loop_iterable(loop)
    if type(iterable) is not cst.Call or len(iterable.args) != 1:
        return False
    value = iterable.args[0].value
    if type(value) is cst.Integer:
        return int(value.value, 0) <= 10
    text = (dotted(value) or "").lower()
    return any(w in text for w in ("retr", "attempt", "tries"))


@analysis
def _rebound_in_body(model: Model, loop: Loop) -> frozenset[str]:
    """Plain names the loop's body (re)binds in the loop's own function."""
    body = getattr(loop.node, "body", None)
    if body is None:
        return frozenset()
    return frozenset(
        b.target for b in model.bindings_under(body) if b.function is loop.function and "." not in b.target
    )


def _variant_names(model: Model, loop: Loop, call: Call) -> set[str]:
    """Names whose value may differ between iterations of ``loop``, as seen by ``call``."""
    variant = set(_loop_targets(loop)) | _rebound_in_body(model, loop)
    inner = call.loops[call.loops.index(loop) + 1 :] if loop in call.loops else ()
    for sub in inner:
        iterable = loop_iterable(sub)
        if iterable is not None and names_in(iterable) & variant or iterable is None:
            variant |= _loop_targets(sub)
    return variant


def _arg_names(call: Call) -> set[str]:
    out: set[str] = set()
    for arg in call.args:
        out |= names_in(arg.node)
    # the receiver does not count: a fresh agent per attempt still re-runs the same tools; a
    # callable picked per iteration (``fn = TOOLS[name]; fn(**args)``) does
    if call.method is None and call.func and "." not in call.func and "(" not in call.func:
        out.add(call.func.replace("[]", ""))
    return out


def _loop_label(loop: Loop) -> str:
    node = loop.node
    if type(node) is cst.For:
        iterable = node.iter
        text = dotted(iterable.func if type(iterable) is cst.Call else iterable) or "..."
        if type(iterable) is cst.Call:
            args = iterable.args
            shown = [dotted(a.value) or getattr(a.value, "value", None) for a in args]
            inner = (
                ", ".join(str(x) for x in shown)
                if all(isinstance(x, str) for x in shown) and not any(a.keyword for a in args)
                else "..."
            )
            text = f"{text}({inner})"
        return f"for {dotted(node.target) or '...'} in {text}"
    test = getattr(node, "test", None)
    return f"while {dotted(test) or '...'}"


def retry_loops(model: Model) -> Iterator[Retry]:
    for loop in model.loops:
        shape = _retry_shaped(loop)
        if shape is None:
            continue
        found = _retried_run(model, loop, shape)
        if found is not None:
            yield Retry(loop.node, "loop", f"`{_loop_label(loop)}`", found)


def _retried_run(model: Model, loop: Loop, shape: str) -> Run | None:
    fn = loop.function
    target_words = " ".join(_loop_targets(loop)).lower()
    for call in model.calls_in(loop):
        if call.function is not fn:
            continue
        run = run_at(model, call)
        if run is None or idempotent(model, call):
            continue
        if _arg_names(call) & _variant_names(model, loop, call):
            continue  # each iteration runs something new: a work list or a model↔tool loop
        if reads_input(model, loop):
            return None  # a REPL / chat loop: every iteration answers a new message
        if shape == "tenacity" or (_retry_try(loop, call) and (shape != "while" or _exits_on_success(loop, call))):
            return run
        if (
            shape == "counted"
            and _small_count(loop)
            and not _collected(call)
            and not _loop_collects(model, loop)
            and ("_" == target_words or any(w in target_words for w in RETRY_TARGET_WORDS))
        ):
            return run
    return None


@analysis
def reads_input(model: Model, loop: Loop) -> bool:
    """Does each iteration read a new message (``input()``, ``await ws.receive_text()``)?"""
    return any(
        call.function is loop.function
        and (call.func in INPUT_FUNCS or call.callee in INPUT_FUNCS or call.method in INPUT_METHODS)
        for call in model.calls_in(loop)
    )


def _exits_on_success(loop: Loop, call: Call) -> bool:
    """A ``while`` retry stops once an attempt succeeds: ``return agent.run(...)``, a ``break``
    or ``return`` in the ``try`` body, a ``break`` anywhere in the loop, or a counter/flag test.
    Without one it is a periodic job, not a retry."""
    if loop.has_break or _returns(call.statement):
        return True
    for frame in call.trys:
        if frame.part == "body":
            for stmt in getattr(getattr(frame.node, "body", None), "body", ()):
                if _returns(stmt):
                    return True
    test = getattr(loop.node, "test", None)
    return test is not None and type(test) in _FLAG_TESTS and not loop.while_true


_FLAG_TESTS: frozenset[type[cst.CSTNode]] = frozenset({cst.Comparison, cst.UnaryOperation, cst.Name})


def _returns(stmt: cst.CSTNode) -> bool:
    return any(type(s) is cst.Return or type(s) is cst.Break for s in small_statements(stmt))


@analysis
def _loop_collects(model: Model, loop: Loop) -> bool:
    """The loop accumulates results (``translations.append(...)``): sampling N answers, not
    retrying one."""
    return any(
        c.function is loop.function and c.method in ("append", "extend", "add", "insert") for c in model.calls_in(loop)
    )


def _collected(call: Call) -> bool:
    """The run's result is accumulated (``answers.append(agent.run(q))``): sampling, not retrying."""
    return any(o.method in ("append", "extend", "add", "update") for o in call.outer)


# ----------------------------------------------------------------------------- decorators


def _single_attempt(dec: Decorator) -> bool:
    call = dec.call
    if call is None:
        return False
    for arg in call.args:
        limit = SINGLE_ATTEMPT.get(arg.keyword or "")
        if limit is not None and getattr(arg.node, "value", None) == str(limit):
            return True
        if arg.keyword == "stop":
            text = dotted(getattr(arg.node, "func", None)) or ""
            inner = getattr(arg.node, "args", ())
            if text.endswith("stop_after_attempt") and inner and getattr(inner[0].value, "value", None) == "1":
                return True
    return False


def retry_decorators(model: Model) -> Iterator[Retry]:
    for fn in model.functions:
        for dec in fn.decorators:
            last = (dec.dotted or "").rsplit(".", 1)[-1]
            named = bool(RETRY_NAME_RE.search(last)) and not NOT_RETRY_RE.match(last) and dec.dotted is not None
            if (
                dec.callee not in RETRY_DECORATORS and not (named and _project_decorator(model, dec))
            ) or _single_attempt(dec):
                continue
            run = _decorated_run(model, fn)
            if run is not None:
                label = f"@{dec.dotted}(...)" if dec.call is not None else f"@{dec.dotted}"
                yield Retry(dec.node, "decorator", f"`{label}`", run)
            break


def _project_decorator(model: Model, dec: Decorator) -> bool:
    """A retry decorator of the project (defined here or imported from a non-library module),
    not a library decorator that merely mentions retries (``celery``'s ``autoretry``…)."""
    callee = dec.callee or ""
    if not callee:
        return "." not in (dec.dotted or "")
    root = callee.split(".")[0]
    return root not in LIBRARY_ROOTS


def _decorated_run(model: Model, fn: Function) -> Run | None:
    """The run a retried function repeats: its own body's, or itself when it is a tool executor."""
    runs = helper_runs(model, fn)
    if runs:
        return runs[0]
    if TOOL_EXEC_RE.match(fn.name) and not idempotent_in(model, fn):
        # the decorated function *is* the tool execution (``execute_tool_call(call)``)
        first = next((c for c in fn.calls if c.function is fn), None)
        if first is not None and not once_context(first):  # ``@idempotent`` on the executor itself
            return Run(first, f"tool execution `{fn.name}(...)` (the decorated function)", "tool", first, fn.node.name)
    return None


def retries(model: Model) -> Iterator[Retry]:
    """Every retry loop and retry decorator that repeats an unguarded agent run or tool
    execution, except runs of an agent with no tools or only read-only ones (``tool_effects``):
    repeating those repeats nothing but model calls and reads."""
    from .tool_effects import read_only_run

    for retry in (*retry_loops(model), *retry_decorators(model)):
        if not read_only_run(model, retry.run):
            yield retry


__all__ = ["Retry", "loop_iterable", "retries", "retry_decorators", "retry_loops"]
