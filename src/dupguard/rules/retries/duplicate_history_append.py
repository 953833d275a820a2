"""DUP503 duplicate-history-append: the same message object appended twice to one history in
straight-line code, so the next turn sees its ``tool_calls`` twice and executes them twice.
What counts as a history is ``dupguard.semantic.history`` (DUP203 uses it too); the fix is
``dupguard.codemods.duplicate_history_append``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...semantic.history import APPEND_METHODS, looks_like_history
from ...semantic.model import Call, Model
from ..registry import Finding, RuleContext, rule


def repeated_appends(model: Model) -> Iterator[tuple[Call, Call]]:
    """(first, second) appends of the same message name to the same history: the second in
    the first's suite after it, or nested in a later statement of that suite (``if`` body),
    with neither the message nor the history rebound in between, and no loop of its own."""
    rebinds: dict[tuple[int, str], list[int]] = {}
    for b in model.bindings:
        rebinds.setdefault((b.block[0], b.target), []).append(b.block[1])
    appends = [c for c in model.calls if _is_append(model, c)]
    # a second append lies in a suite of the first's: each append under every suite on its
    # path, in source order, so that a first append looks only at the appends of its own suite
    # (not at every append of the file: a module of thousands of handlers stays linear)
    under: dict[tuple[int, str | None, str | None], list[tuple[int, Call]]] = {}
    for i, call in enumerate(appends):
        for suite, _ in call.path:
            under.setdefault((suite, call.receiver, call.args[0].dotted), []).append((i, call))
    reported: set[int] = set()
    for i, first in enumerate(appends):
        message = first.args[0].dotted
        for k, second in under.get((first.block[0], first.receiver, message), ()):
            if k <= i or id(second) in reported:
                continue
            later = _index_in(second, first.block[0])
            if later is None or later <= first.block[1] or _loop_between(first, second):
                continue
            rebound = any(
                first.block[1] < j < later or (j == later and second.block[0] != first.block[0])
                for name in (message, first.receiver)
                for j in rebinds.get((first.block[0], name or ""), ())
            )
            if not rebound and not _rebound_inside(model, second, first, {message, first.receiver}):
                reported.add(id(second))
                yield first, second
            break


def _is_append(model: Model, call: Call) -> bool:
    if call.method not in APPEND_METHODS or not call.receiver or len(call.args) != 1:
        return False
    message = call.args[0].dotted
    return (
        bool(message)
        and "(" not in (message or "")
        and not call.outer
        and looks_like_history(model, call.receiver, call)
    )


def _index_in(call: Call, suite: int) -> int | None:
    """The index, in ``suite``, of the statement that contains ``call``."""
    for suite_id, index in call.path:
        if suite_id == suite:
            return index
    return None


def _rebound_inside(model: Model, second: Call, first: Call, names: set) -> bool:
    """A rebinding in a nested suite on the way to ``second`` (``if x: msg = other``)."""
    nested = {suite for suite, _ in second.path} - {suite for suite, _ in first.path}
    return any(b.block[0] in nested and b.target in names for b in model.bindings)


def _loop_between(first: Call, second: Call) -> bool:
    return first.loops != second.loops


@rule("DUP503", name="duplicate-history-append", fix="duplicate_history_append", safety="safe")
def duplicate_history_append(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for first, second in repeated_appends(model):
        message = second.args[0].dotted
        yield Finding(
            second.node,
            f"`{message}` is appended to `{second.receiver}` again (first at line {ctx.line(first.node)}): "
            "a message with tool_calls in the history twice makes the next turn execute them twice; "
            "append it once",
            fix=ctx.fix(second),
        )
