"""What "guarded" means. Three different protections make three different patterns safe, and
each rule family asks for exactly one of them:

1. ``serialised(call)``: **concurrent runs wait for each other.** The call sits inside
   ``with <lock>:`` / ``async with guard.hold():`` or in a function decorated ``@synchronized``.
   One shared agent or memory is then used by one request at a time (DUP101, DUP102, DUP201,
   DUP202). It says nothing about a second run: a retry behind a lock still runs the tools twice.
2. ``once_only(model, call, *targets)``: **the call runs once however often its code runs.**
   It sits under (or after an early return on) a membership test (``if h not in cm.handlers``),
   a register-once flag (``if not _installed:``, ``global _ready``) or a test of the mutated
   object itself (``if not cm.handlers:``). A registration or a tool-list mutation made per
   request is then made once (DUP303, DUP401).
3. ``idempotent(model, call)``: **running it again is harmless.** The call sits under a seen-id
   condition (``if call.id in seen: continue``), inside a once-context (``with turn_lease(...)``,
   ``@idempotent``, a ledger), or after an idempotency check in its function
   (``already_processed(key)``, ``redis.set(k, v, nx=True)``, a user guard from
   ``extend-idempotency-guards``). A retried, replayed or redelivered run is then skipped the
   second time (DUP501, DUP502, DUP504, DUP505). Of ``dupguard.runtime`` only the helpers that
   key the work by an id the caller passes count (:data:`KEYED_RUNTIME`: ``Idempotency.run``
   with a key that is not a constant, ``ledger.begin(call_id, ...)``, ``turn_lease``, an
   adapter's ``guard.turn(request_id)``...): ``register_once``, ``SessionRegistry.ause``,
   ``InvocationGuard`` or ``session_lease`` serialise or deduplicate something else, and a
   retry under them still runs its tools again.

The words each test looks for are in ``vocabulary.py``.
"""

from __future__ import annotations

import re

import libcst as cst

from .model import Call, Function, Model, analysis
from .nodes import comparison_parts, dotted, dotted_names_in, has_membership_test, strings_in, token_text
from .vocabulary import (
    FLAG_WORDS,
    GUARD_CALL_RE,
    GUARD_DECORATOR_WORDS,
    GUARD_METHODS,
    IDEMPOTENCY_WORDS,
    LOCK_WORDS,
    ONCE_WORDS,
    SEEN_WORDS,
)

# ----------------------------------------------------------------------------- 1. serialised


def _lock_like(text: str) -> bool:
    lowered = text.lower()
    if any(word in lowered for word in LOCK_WORDS) and any(
        # a name holding a lock word, but not ``gr.Blocks()``, ``block`` or ``clock``
        word in part and "block" not in part and "clock" not in part
        for part in lowered.replace("(", ".").replace(")", ".").replace("[", ".").split(".")
        for word in LOCK_WORDS
    ):
        return True
    tail = lowered.rsplit(".", 1)[-1]
    return tail.rstrip("()") in GUARD_METHODS and tail.endswith("()")


def serialised(call: Call) -> bool:
    """Is the call inside ``with <lock>:`` / ``async with guard.hold():`` or in a function (or
    one it is nested in) decorated ``@guarded`` / ``@synchronized``?"""
    if any(_lock_like(w) for w in call.withs):
        return True
    fn = call.function
    while fn is not None:
        for dec in fn.decorators:
            text = (dec.dotted or "").lower()
            if any(word in text for word in GUARD_DECORATOR_WORDS):
                return True
        fn = fn.parent
    return False


# Constructors of a new lock: ``with threading.Lock():`` or a ``lock = asyncio.Lock()`` made by the
# call that then holds it serialises nothing (every run has its own).
_NEW_LOCKS = frozenset({"lock", "rlock", "semaphore", "boundedsemaphore", "condition"})


def _builds_lock(call: Call) -> bool:
    return (call.callee or call.func or "").rsplit(".", 1)[-1].lower() in _NEW_LOCKS


def shared_lock(model: Model, text: str, fn: Function | None) -> bool:
    """Is the context manager ``text`` (as in ``Call.withs``), entered in ``fn``, a lock that
    concurrent runs share? Not when it is built where it is held: ``with threading.Lock():``, a
    ``lock = threading.Lock()`` of the same function, or one bound at the top of a page script
    that its host runs again for every session (hosts.py, Streamlit: a fresh module per run).
    A lock the module cannot see being built (a parameter, ``self._lock``, an import) counts as
    shared, as ``serialised`` assumes."""
    from .hosts import reruns_per_session

    if not _lock_like(text):
        return False
    if text.endswith("()"):
        return text[:-2].rsplit(".", 1)[-1].lower() not in _NEW_LOCKS
    if "." in text or "[" in text or "(" in text:
        return True
    binding = model.local_binding(text, fn)
    if binding is None or binding.value_call is None or not _builds_lock(binding.value_call):
        return True
    if binding.scope == "function":
        return binding.function is not fn
    return not (binding.scope == "module" and reruns_per_session(model))


def held_around(model: Model, fn: Function | None, withs: tuple[str, ...], after: int) -> bool:
    """Does a lock that concurrent runs share (``shared_lock``) stay held, in ``fn``, from a write
    until code that runs after it (a call of ``model.calls`` from index ``after`` on, inside the
    same lock)? A lock around the write alone lets another run in between the write and its use."""
    held = [w for w in withs if shared_lock(model, w, fn)]
    if not held:
        return False
    return any(c.function is fn and any(w in c.withs for w in held) for c in model.calls[after:])


# ----------------------------------------------------------------------------- 2. once only


def _mentions(test: cst.CSTNode, texts: tuple[str, ...], flags: set[str]) -> bool:
    if has_membership_test(test):
        return True
    if any(any(word in text.lower() for word in FLAG_WORDS) for text in strings_in(test)):
        return True
    for name in dotted_names_in(test):
        lowered = name.lower()
        if any(word in lowered for word in FLAG_WORDS):
            return True
        if name in flags:
            return True
        if any(t and (name == t or name.startswith(t + ".")) for t in texts):
            return True
    return False


def once_only(model: Model, call: Call, *texts: str) -> bool:
    """Is ``call`` behind a check that makes it run once: a membership test, a register-once
    flag, a test of the mutated object itself (``texts``: ``if not cm.handlers:``), or a
    module-level flag the function rebinds (``global _ready``)? The checks are the tests of
    the ``if`` bodies around the call and of the early exits of its function and the
    functions it is nested in."""
    fn = call.function
    flags = set(fn.global_names) if fn is not None else set()
    tests = list(call.conditions)
    scope = fn
    while scope is not None:
        tests.extend(scope.exit_tests)
        scope = scope.parent
    return any(_mentions(test, texts, flags) for test in tests)


# ----------------------------------------------------------------------------- 3. idempotent

_ID_ITEM_RE = re.compile(r"(\bid\b|_id\b|\.id\b|'id'|\"id\")")


def is_seen_test(test: cst.CSTNode) -> bool:
    """``call.id in seen``, ``block.id not in done``, ``key in processed_ids``."""
    for op, left, right in comparison_parts(test):
        if op is not cst.In and op is not cst.NotIn:
            continue
        container = token_text(right).lower()
        item = token_text(left).lower()
        if any(w in container for w in SEEN_WORDS) or _ID_ITEM_RE.search(item):
            return True
    return False


def is_idempotency_test(test: cst.CSTNode) -> bool:
    """The test of an early exit that checks a key: ``if record.processed: return``,
    ``if Event.objects.filter(id=eid).exists(): return``, ``if not created: return``
    (``get_or_create``), ``if not cache.add(key, 1): return`` and ``if not r.sadd("seen", key)``
    (atomic claims)."""
    tokens = set(token_text(test).lower().split())
    if any(word in token for token in tokens for word in IDEMPOTENCY_WORDS):
        return True
    if "created" in tokens or ".setnx" in tokens or ".sadd" in tokens or ".set_if_absent" in tokens:
        return True
    if ".exists" in tokens and (".filter" in tokens or ".objects" in tokens):
        return True
    return ".add" in tokens and any("cache" in token for token in tokens)


# The dupguard.runtime helpers that run the work they guard once per key, and where that key
# is: a positional index and a keyword (``None``: the helper keys the work itself, as
# ``celery_once`` does with the task's own id). Methods are named by their class; the run entry
# points of the framework adapters (``runtime.adapters.*Guard``) by ``adapter``.
KEYED_RUNTIME: dict[str, tuple[int | None, str] | None] = {
    "Idempotency.run": (0, "key"),
    "Idempotency.arun": (0, "key"),
    "idempotent": (None, "key"),
    "ToolCallLedger.begin": (0, "call_id"),
    "ToolCallLedger.abegin": (0, "call_id"),
    "turn_lease": (1, "key"),
    "aturn_lease": (1, "key"),
    "handle_once": (1, "message_id"),
    "ahandle_once": (1, "message_id"),
    "celery_once": None,
    "adapter.turn": (0, "turn_id"),
    "adapter.attempt": (0, "turn_id"),
    "adapter.sync_turn": (0, "turn_id"),
    "adapter.sync_attempt": (0, "turn_id"),
    "adapter.run": (None, "turn_id"),
    "adapter.run_sync": (None, "turn_id"),
    "adapter.stream": (None, "turn_id"),
}
_CONSTANTS = frozenset({"None", "True", "False"})


@analysis
def runtime_name(model: Model, call: Call) -> str | None:
    """What a call of ``dupguard.runtime`` is, in :data:`KEYED_RUNTIME`'s terms
    (``"turn_lease"``, ``"Idempotency.arun"``, ``"adapter.attempt"``), or ``None`` for a call
    of anything else."""
    callee = call.callee or ""
    if callee.startswith("dupguard.runtime"):
        return callee.rsplit(".", 1)[-1]
    if not call.receiver or not call.method:
        return None
    fn = call.function
    annotation = fn.param_annotations.get(call.receiver) if fn is not None else None
    if annotation is not None:  # ``def execute_once(ledger: ToolCallLedger, call):``
        built = model.resolve(dotted(annotation)) or ""
    else:
        binding = model.binding_of(call.receiver, fn)
        vc = binding.value_call if binding is not None else None
        built = (vc.callee or "") if vc is not None else ""
    if not built.startswith("dupguard.runtime"):
        return None
    owner = "adapter" if built.startswith("dupguard.runtime.adapters.") else built.rsplit(".", 1)[-1]
    return f"{owner}.{call.method}"


def _varies(node: cst.CSTNode) -> bool:
    """A key that can differ between requests: not a literal, ``None``, ``True`` or ``False``."""
    if type(node) is cst.Name:
        return node.value not in _CONSTANTS
    if type(node) is cst.FormattedString:
        return any(type(part) is cst.FormattedStringExpression for part in node.parts)
    if type(node) is cst.ConcatenatedString:
        return _varies(node.left) or _varies(node.right)
    return type(node) not in (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)


def keyed_runtime_call(model: Model, call: Call) -> bool:
    """A ``dupguard.runtime`` call that runs its work once per key, given a key that varies
    (see :data:`KEYED_RUNTIME`)."""
    name = runtime_name(model, call)
    if name is None or name not in KEYED_RUNTIME:
        return False
    where = KEYED_RUNTIME[name]
    if where is None:
        return True
    index, keyword = where
    arg = call.kw(keyword)
    if arg is None and index is not None:
        arg = call.arg(str(index))
    return arg is not None and _varies(arg.node)


def _last(text: str | None) -> str:
    return (text or "").replace("[]", "").replace("()", "").rsplit(".", 1)[-1]


@analysis
def is_guard_call(model: Model, call: Call) -> bool:
    """An idempotency check or claim: ``already_processed(key)``, ``redis.set(k, v, nx=True)``,
    a keyed ``dupguard.runtime`` helper (:func:`keyed_runtime_call`), or a user guard from
    ``extend-idempotency-guards``."""
    if runtime_name(model, call) is not None:
        return keyed_runtime_call(model, call)
    callee = call.callee or ""
    func = call.func or ""
    guards = model.idempotency_guards
    if guards and (
        callee in guards
        or func in guards
        or ("." not in func and call.callee is None and any(g.rsplit(".", 1)[-1] == func for g in guards))
    ):
        return True
    if GUARD_CALL_RE.search(_last(func)):
        return True
    nx = call.kw("nx")
    return nx is not None and getattr(nx.node, "value", None) == "True"


def runtime_receiver(model: Model, call: Call) -> bool:
    """A method called on an object built from ``dupguard.runtime`` (``ledger.begin(...)``)."""
    if not call.receiver:
        return False
    binding = model.binding_of(call.receiver, call.function)
    vc = binding.value_call if binding is not None else None
    return vc is not None and (vc.callee or "").startswith("dupguard.runtime")


@analysis
def _with_items(model: Model) -> dict[int, list[Call]]:
    """id(body of a ``with``) → the calls that are its items (``with turn_lease(b, k):``)."""
    out: dict[int, list[Call]] = {}
    for call in model.calls:
        statement = call.statement
        if (type(statement) is cst.With) and any(item.item is call.node for item in statement.items):
            out.setdefault(id(statement.body), []).append(call)
    return out


def once_context(call: Call, model: Model | None = None) -> bool:
    """Inside ``with turn_lease(...)`` / ``with ledger...`` / a function decorated ``@idempotent``.

    With the ``model``, the context managers and decorators that are ``dupguard.runtime`` calls
    count only when keyed (:func:`keyed_runtime_call`): ``async with asession_lease(...)`` or
    ``with registry.use(...)`` holds a session, it does not make a retry run once."""
    runtime: set[str] = set()
    if model is not None:
        items = _with_items(model)
        for suite in call.branch:
            for item in items.get(suite, ()):
                if runtime_name(model, item) is not None:
                    if keyed_runtime_call(model, item):
                        return True
                    runtime.add(dotted(item.node) or "")
    if any(text not in runtime and any(w in text.lower() for w in ONCE_WORDS) for text in call.withs):
        return True
    fn = call.function
    while fn is not None:
        for dec in fn.decorators:
            if model is not None and dec.call is not None and runtime_name(model, dec.call) is not None:
                if keyed_runtime_call(model, dec.call):
                    return True
                continue
            text = f"{dec.dotted or ''} {dec.callee or ''}".lower()
            if "idempot" in text or "dupguard.runtime" in text or "once" in text:
                return True
        fn = fn.parent
    return False


@analysis
def _checks_keys_on_exit(model: Model, fn: Function) -> bool:
    """Does an early exit of ``fn`` test a seen-id set or an idempotency key?"""
    return any(is_seen_test(test) or is_idempotency_test(test) for test in fn.exit_tests)


@analysis
def _first_guard_call(model: Model, fn: Function) -> int | None:
    """Source order of the first idempotency check made directly in ``fn``, if any."""
    for call in fn.calls:
        if is_guard_call(model, call):
            return model.order(call)
    return None


def idempotent_in(model: Model, fn: Function | None, before: Call | None = None) -> bool:
    """Does ``fn`` (or a function it is nested in) check an idempotency key or a seen-id set
    before ``before`` (anywhere when ``before`` is None)?"""
    limit = model.order(before) if before is not None else None
    while fn is not None:
        if _checks_keys_on_exit(model, fn):
            return True
        first = _first_guard_call(model, fn)
        if first is not None and (limit is None or first < limit):
            return True
        fn = fn.parent
    return False


@analysis
def _tested_calls(model: Model) -> dict[int, list[Call]]:
    """id(test) → the calls in the test of an ``if`` / ``while`` statement, in source order."""
    out: dict[int, list[Call]] = {}
    for call in model.calls:
        test = getattr(call.statement, "test", None)
        if test is not None:
            out.setdefault(id(test), []).append(call)
    return out


def _guard_in_test(model: Model, call: Call, test: cst.CSTNode) -> bool:
    """A guard call inside the test of an enclosing ``if`` (``if not first_time(key):``)."""
    fn = call.function
    return any(
        (fn is None or c.function is fn) and is_guard_call(model, c) for c in _tested_calls(model).get(id(test), ())
    )


@analysis
def idempotent(model: Model, call: Call) -> bool:
    """Is this particular run made safe to repeat: under a seen-id condition, inside a
    once-context, or after an idempotency check in its function? A keyed ``dupguard.runtime``
    run (``guard.run(agent, msg, turn_id=request_id)``) is one itself."""
    if keyed_runtime_call(model, call) or once_context(call, model):
        return True
    if any(is_seen_test(t) or _guard_in_test(model, call, t) for t in call.conditions):
        return True
    return idempotent_in(model, call.function, call)
