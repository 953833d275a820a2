"""DUP506 per-turn-id-as-key: a tool-call, invocation or response id used as the key that
decides whether work runs again: an idempotency key, a claim, a lock name, or a process-wide
"already done" set.

A model API mints a new id for every tool call it returns (``call_…``, ``toolu_…``), an agent
framework a new invocation id for every run, and a retried or re-planned turn asks the model
again: the same refund comes back under a new id, a guard keyed by the id has never seen it,
and the refund runs twice (openai/openai-agents-python#4254, google/adk-python#3940,
docs/runtime-adapters.md). The id is right for *correlating* a result with its call (the tool
message's ``tool_call_id``, a pending approval looked up by id) and for dropping the same
response processed twice (a local seen-set, ``ToolCallLedger`` given a stored message, which
the ledger's docs describe); it is wrong as the key of a check meant to survive a retry.

Key sites: ``Idempotency.run/arun(key)``, ``@idempotent(key=...)``, ``turn_lease(store, key)``,
keyword arguments named like an idempotency, deduplication or lock key, an ``Idempotency-Key``
header, idempotency checks and atomic claims (``already_processed(key)``, ``redis.set(key,
nx=True)``, ``setnx``/``sadd``), lock constructors and lock tables (``redis.lock(name)``,
``locks.setdefault(key, asyncio.Lock())``), and membership tests that skip work against a
module-level container (``if call.id in PROCESSED: continue``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ...semantic.effects import is_test_module
from ...semantic.guards import is_guard_call, runtime_name
from ...semantic.model import Call, Function, Model, string_value
from ...semantic.nodes import children, code_of, comparison_parts
from ...semantic.vocabulary import (
    CLAIM_METHODS,
    ID_HOLDERS,
    IDEMPOTENCY_HEADER,
    KEY_KEYWORDS,
    LOCK_NAME_RE,
    LOG_METHODS,
    PER_TURN_NAMES,
    RECORD_ONLY_VERBS,
)
from ..registry import Finding, RuleContext, rule

if TYPE_CHECKING:
    import libcst as cst

RUNTIME_KEYED = {
    # dupguard.runtime: callee suffix → index of the key among the positional arguments
    "Idempotency.run": 0,
    "Idempotency.arun": 0,
    "turn_lease": 1,
    "aturn_lease": 1,
}


def _norm(name: str) -> str:
    return name.lower().replace("_", "")


def _holder(node: cst.CSTNode) -> bool:
    """Is ``node`` (the object whose ``id`` is read) a tool call or a response?"""
    import libcst as cst

    if type(node) is cst.Attribute:
        return _norm(node.attr.value) in ID_HOLDERS
    if type(node) is cst.Name:
        return _norm(node.value) in ID_HOLDERS
    return False


def per_turn_id(model: Model, node: cst.CSTNode, scope: Function | None, follow: bool = True) -> str | None:
    """The text of the first per-turn id read in a key expression (``tool_call.id``,
    ``call["id"]``, ``tool_context.invocation_id``, a parameter ``call_id``), following a
    local name to the value it was bound to in the same function (``key = f"...{call.id}"``)."""
    import libcst as cst

    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name:
            if _norm(n.value) in PER_TURN_NAMES:
                return n.value
            if follow and scope is not None and n.value in scope.local_names:
                binding = model.local_binding(n.value, scope)
                if binding is not None and binding.function is scope:
                    found = per_turn_id(model, binding.value, scope, follow=False)
                    if found is not None:
                        return found
            continue
        if type(n) is cst.Attribute:
            if _norm(n.attr.value) in PER_TURN_NAMES or (n.attr.value == "id" and _holder(n.value)):
                return code_of(n)
            stack.append(n.value)
            continue
        if type(n) is cst.Subscript:
            index = n.slice[0].slice if len(n.slice) == 1 else None
            key = string_value(index.value) if type(index) is cst.Index else None
            if isinstance(key, str) and (_norm(key) in PER_TURN_NAMES or (key == "id" and _holder(n.value))):
                return code_of(n)
        if type(n) is cst.Lambda:
            stack.append(n.body)
            continue
        stack.extend(children(n))
    return None


# ----------------------------------------------------------------------------- key sites


def _positional(call: Call, index: int):
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].node if len(positional) > index else None


def _runtime_key(model: Model, call: Call) -> tuple[cst.CSTNode, str] | None:
    """The key of a ``dupguard.runtime`` once-per-key helper (not ``ToolCallLedger``, which is
    keyed by the call id by design: it drops the same response processed twice)."""
    callee = call.callee or ""
    name = None
    if callee.startswith("dupguard.runtime"):
        name = callee.rsplit(".", 1)[-1]
    elif call.receiver and call.method in ("run", "arun"):
        binding = model.local_binding(call.receiver, call.function) if "." not in call.receiver else None
        built = binding.value_call.callee if binding is not None and binding.value_call is not None else ""
        if built and built.startswith("dupguard.runtime") and built.endswith("Idempotency"):
            name = f"Idempotency.{call.method}"
    if name is None:
        return None
    if name == "idempotent":
        arg = call.kw("key")
        return (arg.node, "`@idempotent(key=...)`") if arg is not None else None
    index = RUNTIME_KEYED.get(name)
    if index is None:
        return None
    arg = call.kw("key")
    node = arg.node if arg is not None else _positional(call, index)
    return (node, f"`{call.func}(...)`") if node is not None else None


def _call_keys(model: Model, call: Call) -> Iterator[tuple[cst.CSTNode, str]]:
    """(key expression, what it keys) for every key this call is given."""
    import libcst as cst

    if not call.args:
        return
    found = _runtime_key(model, call)
    if found is not None:
        yield found
        return
    last = call.method or (call.func or "").rsplit(".", 1)[-1]
    if last == "idempotent" and call.kw("key") is not None:  # a project's own ``@idempotent(key=...)``
        yield call.kw("key").node, "`@idempotent(key=...)`"  # type: ignore[union-attr]
        return
    records_only = _records_only(call)
    for arg in call.args:
        if arg.keyword and _norm(arg.keyword) in KEY_KEYWORDS:
            if not records_only:
                yield arg.node, f"`{arg.keyword}=`"
        elif arg.keyword in ("headers", "extra_headers"):
            yield from _header_keys(model, arg.node, call.function)
    if call.method in CLAIM_METHODS:
        for arg in call.args:
            yield arg.node, f"the claim `{call.func}(...)`"
        return
    if last and "ock" in last and LOCK_NAME_RE.search(last) and "block" not in last.lower():
        yield call.args[0].node, f"the lock `{call.func}(...)`"
        return
    if call.method == "setdefault" and len(call.args) == 2:
        value = model.call_for_node(call.args[1].node) if type(call.args[1].node) is cst.Call else None
        if value is not None and LOCK_NAME_RE.search((value.func or "").rsplit(".", 1)[-1]):
            yield call.args[0].node, f"the lock table `{call.receiver}`"
        return
    if (
        is_guard_call(model, call)
        and not (call.callee or "").startswith("dupguard.runtime")
        and not _ledger(model, call)
    ):
        yield call.args[0].node, f"the check `{call.func}(...)`"


def _records_only(call: Call) -> bool:
    """A call that only writes a log line or an audit row (``repo.log_action(...,
    idempotency_key=tc.id)``, ``logger.info("step", idempotency_key=...)``): a key given to it
    names the row, it decides nothing. Taught by SatuRnBolt/NookIt
    ai-service/app/agent/loop.py:244-272 at b9e4cc9cfd0b7f01c2b37f7ff4785fcd56598211, which logs
    every tool call under its id while the write itself waits for the user's confirmation."""
    last = call.method or (call.func or "").rsplit(".", 1)[-1]
    if last.lstrip("_").split("_", 1)[0].lower() in RECORD_ONLY_VERBS:
        return True
    return last in LOG_METHODS and "log" in (call.receiver or "").lower()


def _ledger(model: Model, call: Call) -> bool:
    """A method of a ``dupguard.runtime`` object (the ledger's ``begin(call_id)`` included), built
    here or given as a parameter annotated with its class (``ledger: ToolCallLedger``)."""
    if not call.receiver or "." in call.receiver:
        return False
    return runtime_name(model, call) is not None


def _header_keys(model: Model, node: cst.CSTNode, scope: Function | None) -> Iterator[tuple[cst.CSTNode, str]]:
    import libcst as cst

    if type(node) is cst.Name:
        binding = model.local_binding(node.value, scope)
        node = binding.value if binding is not None else node
    if type(node) is not cst.Dict:
        return
    for element in node.elements:
        key = string_value(getattr(element, "key", None))
        if isinstance(key, str) and IDEMPOTENCY_HEADER.search(key):
            yield element.value, f"the `{key}` header"


# ----------------------------------------------------------------------------- membership tests


def _process_wide(model: Model, container: cst.CSTNode, scope: Function | None) -> str | None:
    """The name of a container that outlives the call: bound at module level (and not
    rebound in the function), or a lock table."""
    import libcst as cst

    if type(container) is not cst.Name:
        return None
    name = container.value
    if scope is not None and name in scope.local_names and name not in scope.global_names:
        return None
    if scope is not None and name in scope.params:
        return None
    if model.module_binding(name) is None:
        return None
    return name


def _membership_keys(model: Model) -> Iterator[tuple[cst.CSTNode, str, Function | None]]:
    """(item, what, scope) for ``id in CONTAINER`` tests that skip work: the test of an early
    exit (``if call.id in PROCESSED: continue``) or of an ``if`` whose body does the work
    (``if call.id not in PROCESSED: run(...)``). The other way round (``if id not in
    PENDING: raise``) looks an id up, which is correlation."""
    import libcst as cst

    seen: set[int] = set()
    tests: list[tuple[cst.CSTNode, type, Function | None]] = []
    for fn in model.functions:
        tests += [(t, cst.In, fn) for t in fn.exit_tests]
    for call in model.calls:
        tests += [(t, cst.NotIn, call.function) for t in call.conditions]
    for test, operator, scope in tests:
        if id(test) in seen:
            continue
        seen.add(id(test))
        for op, left, right in comparison_parts(test):
            if op is not operator:
                continue
            name = _process_wide(model, right, scope)
            if name is not None:
                yield left, f"the process-wide set `{name}`", scope


# ----------------------------------------------------------------------------- the rule


def per_turn_keys(model: Model) -> Iterator[tuple[cst.CSTNode, str, str]]:
    """(key expression, per-turn id text, what it keys) for every key site keyed by a per-turn id."""
    reported: set[int] = set()
    for call in model.calls:
        if call.in_main:
            continue
        for node, what in _call_keys(model, call):
            found = per_turn_id(model, node, call.function)
            if found is not None and id(node) not in reported:
                reported.add(id(node))
                yield node, found, what
    for node, what, scope in _membership_keys(model):
        found = per_turn_id(model, node, scope)
        if found is not None and id(node) not in reported:
            reported.add(id(node))
            yield node, found, what


@rule("DUP506", name="per-turn-id-as-key")
def per_turn_id_as_key(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    if is_test_module(model):
        return
    for node, text, what in per_turn_keys(model):
        yield Finding(
            node,
            f"`{text}` is the key of {what}: a model mints a new tool-call id for every response (and a framework a "
            "new invocation id for every run), so a retried or re-planned turn comes back under a new key "
            "and the tool runs again; key it by the user's action — the request or turn id with the tool "
            "name and its arguments (`dupguard.runtime` adapters with `turn_id=`, or `Idempotency` keyed "
            '`f"{turn_id}:refund:{order_id}"`)',
        )
