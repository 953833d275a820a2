"""DUP205 unlocked-session-check-then-create: an async function finds a per-session resource
missing, awaits while creating it, and only then stores it, with no lock.

``if sessions.get(sid) is None: sessions[sid] = await create(...)``, the same with the lookup
in a local first, an early ``if sid in sessions: return sessions[sid]``, or a lazy attribute
``if self.conversation_id is None: self.conversation_id = (await client.create()).id``
(openai/openai-agents-python#3820). Every ``await`` lets another task in: two first requests for
one session both see it missing, both create one, and the last store wins, so the session's
history is split between two conversations (or two agents) and one request's turn is lost.

Reported when the store is long-lived (a module-level dict, ``self.<x>``, ``app.state``), its
name says it holds sessions, conversations, threads, chats, histories, memories, agents or
contexts (a pool of stateless clients, whose extra copy is simply dropped, is not), an
``await``, ``async for`` or ``async with`` lies between the check and the store, and no lock is
held. A check and a store with no ``await`` between them cannot interleave on one event loop.

The lookup and the store may go through accessor methods of the same class: a getter that only
returns ``self.<store>.get(key)`` and a setter that stores ``self.<store>[key] = value``
(``existing = self.get_user_thread(uid)`` … ``await client.beta.threads.create()`` …
``self.set_user_thread(uid, thread.id)``; brickflows/twilocall app.py:226-244 at
731e086d7c685479206c868ceb5359f0100ffa78, bench/real-apps/labels-pub16.toml).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...semantic import entrypoints as ep
from ...semantic.lifetimes import _cached, _runs_once
from ...semantic.model import Binding, Function, Model, analysis
from ...semantic.nodes import children, comparison_parts, contains, dotted
from ...semantic.request_state import under_lock
from ..registry import Finding, RuleContext, rule

if TYPE_CHECKING:
    import libcst as cst

RESOURCE_WORDS = ("session", "conversation", "thread", "chat", "history", "memory", "agent", "context", "room")
# A lazily created attribute counts only when it is the conversation itself or its id
# (``self._conversation_id``, ``self._thread``): an agent card, a browser context or a cached
# list of items fetched twice is the same data twice, not a split history.
CONVERSATION_WORDS = ("session", "conversation", "thread", "chat", "history", "memory")
CONVERSATION_TAILS = ("id", *CONVERSATION_WORDS)
STATELESS_WORDS = ("client", "connection", "conn", "http", "pool", "engine", "lock")


@dataclass(frozen=True)
class SetterStore:
    """A call of a same-class setter (``self.set_user_thread(uid, thread.id)``) read as the store
    it makes: the fields of a ``Binding`` that this rule reads."""

    target: str  # "self._user_threads[]"
    value: cst.CSTNode  # the setter call
    statement: cst.CSTNode
    branch: tuple[int, ...]
    function: Function
    in_main: bool


Store = Binding | SetterStore


@dataclass(frozen=True)
class CheckThenCreate:
    write: Store
    store: str  # "sessions", "self.conversation_id"
    check: cst.CSTNode  # the test that found it missing
    suspension: cst.CSTNode  # the await between the check and the store


def _resource_name(text: str) -> bool:
    words = "".join(c if c.isalnum() else " " for c in text.lower()).split()
    joined = " ".join(words)
    return any(w in joined for w in RESOURCE_WORDS) and not any(w in joined for w in STATELESS_WORDS)


def _conversation_attribute(store: str) -> bool:
    words = [w for w in store.rsplit(".", 1)[-1].lower().split("_") if w]
    return bool(words) and words[-1] in CONVERSATION_TAILS and any(w in CONVERSATION_WORDS for w in words)


def _long_lived(model: Model, fn: Function, store: str) -> bool:
    head = store.split(".")[0]
    if head in ("self", "cls"):
        return fn.class_name is not None
    if ".state." in f".{store}.":
        return True
    if "." in store:
        return False
    scope: Function | None = fn
    while scope is not None:
        if store in scope.global_names:
            break
        if store in scope.local_names or store in scope.params:
            return False
        scope = scope.parent
    return model.module_binding(store) is not None


def _is_none(node: cst.CSTNode) -> bool:
    import libcst as cst

    return isinstance(node, cst.Name) and node.value == "None"


def _lookup_texts(store: str, container: bool, getters: frozenset[str] = frozenset()) -> set[str]:
    return {f"{store}[]", f"{store}.get()", *getters} if container else {store}


@analysis
def _accessors(model: Model, class_name: str) -> dict[str, tuple[frozenset[str], dict[str, str]]]:
    """The class's accessor methods, by the ``self.<dict>`` they wrap: (``self.get_x()`` texts of
    the getters that only return ``self.<dict>.get(key)`` / ``self.<dict>[key]``, setter method
    name → the ``self.<dict>[]`` target it stores into). A setter never suspends and stores one
    item; anything else it does (a log line) does not change what it stores."""
    getters: dict[str, set[str]] = {}
    setters: dict[str, dict[str, str]] = {}
    for fn in model.methods_of(class_name):
        if not fn.params or fn.params[0] != "self":
            continue
        if len(fn.returns) == 1:
            text = dotted(fn.returns[0]) or ""
            for suffix in (".get()", "[]"):
                if text.startswith("self.") and text.endswith(suffix) and text.count(".") == 1 + (suffix == ".get()"):
                    getters.setdefault(text[: -len(suffix)], set()).add(f"self.{fn.name}()")
        if fn.is_async or _suspends(fn.node.body) is not None:
            continue
        stores = {b.target for b in model.bindings_under(fn.node.body) if b.function is fn}
        items = [t for t in stores if t.startswith("self.") and t.endswith("[]") and t.count(".") == 1]
        if len(items) == 1 and len(stores) == 1:
            setters.setdefault(items[0][:-2], {})[fn.name] = items[0]
    return {store: (frozenset(getters.get(store, ())), setters.get(store, {})) for store in set(getters) | set(setters)}


def _getters(model: Model, fn: Function, store: str) -> frozenset[str]:
    if not store.startswith("self.") or fn.class_name is None:
        return frozenset()
    return _accessors(model, fn.class_name).get(store, (frozenset(), {}))[0]


def _setter_stores(model: Model, fn: Function) -> Iterator[SetterStore]:
    """The calls in ``fn`` of a same-class setter, as the stores they make."""
    if fn.class_name is None:
        return
    accessors = _accessors(model, fn.class_name)
    setters = {name: target for _, named in accessors.values() for name, target in named.items()}
    if not setters:
        return
    suites = _suites(model, fn)
    for call in fn.calls:
        if call.receiver != "self" or call.method not in setters or call.function is not fn:
            continue
        entry = suites.get(call.block[0])
        if entry is None or not 0 <= call.block[1] < len(entry[0].body):
            continue
        statement = entry[0].body[call.block[1]]
        yield SetterStore(setters[call.method], call.node, statement, call.branch, fn, call.in_main)


def _aliases(model: Model, fn: Function, store: str, container: bool) -> set[str]:
    """Locals bound to the lookup: ``agent = sessions.get(sid)``, ``agent = self.get_agent(sid)``."""
    lookups = _lookup_texts(store, container, _getters(model, fn, store))
    out = set()
    for b in model.bindings_under(fn.node.body):
        if b.function is fn and "." not in b.target and "[" not in b.target and dotted(b.value) in lookups:
            out.add(b.target)
    return out


def _finds_missing(test: cst.CSTNode, store: str, container: bool, aliases: set[str]) -> bool:
    """Does the test succeed when the resource is missing?"""
    import libcst as cst

    looked = _lookup_texts(store, container) | aliases
    for op, left, right in comparison_parts(test):
        if op is cst.NotIn and container and dotted(right) == store:
            return True
        if op in (cst.Is, cst.Equal) and (
            (dotted(left) in looked and _is_none(right)) or (dotted(right) in looked and _is_none(left))
        ):
            return True
    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            if dotted(node.expression) in looked:
                return True
        elif isinstance(node, cst.BooleanOperation):
            stack.extend((node.left, node.right))
    return False


def _finds_present(test: cst.CSTNode, store: str, container: bool, aliases: set[str]) -> bool:
    """Does the test succeed when the resource exists (an early return's test)?"""
    import libcst as cst

    looked = _lookup_texts(store, container) | aliases
    if dotted(test) in looked:
        return True
    for op, left, right in comparison_parts(test):
        if op is cst.In and container and dotted(right) == store:
            return True
        if op in (cst.IsNot, cst.NotEqual) and (
            (dotted(left) in looked and _is_none(right)) or (dotted(right) in looked and _is_none(left))
        ):
            return True
    return False


def _suspends(node: cst.CSTNode, model: Model | None = None, depth: int = 0) -> cst.CSTNode | None:
    """The first ``await`` / ``async for`` / ``async with`` in ``node`` (not in nested defs).

    An ``await`` of a coroutine function of this module whose own body never suspends does not
    either: the coroutine runs to its ``return`` without giving the event loop to anyone
    (``async def make_chatbot(sid): return Chatbot(sid)``; krinya/gen_ai_demo_rag_bot
    app/server.py:168 at 06ddfa104b7fc3afe2c5ed41b470bec1f011316b, bench/real-apps/labels-e.toml)."""
    import libcst as cst

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Await) and (model is None or not _never_suspends(model, current, depth)):
            return current
        if isinstance(current, (cst.For, cst.With)) and current.asynchronous is not None:
            return current
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(children(current)))
    return None


def _never_suspends(model: Model, awaited: cst.Await, depth: int) -> bool:
    """Is ``await f(...)`` a call of an ``async def`` that never suspends itself: one of this module,
    or one another module of the project defines (``project.NEVER_SUSPENDS``)?"""
    import libcst as cst

    if depth > 3 or type(awaited.expression) is not cst.Call:
        return False
    call = model.call_for_node(awaited.expression)
    if any(isinstance(arg.value, cst.Await) for arg in awaited.expression.args):
        return False
    fn = model.called_function(call) if call is not None else None
    if fn is None:
        # a coroutine function of another module of the project (the project index's fact)
        from ...project import NEVER_SUSPENDS

        fact = model.project.get(call.callee) if model.project is not None and call is not None else None
        return fact is not None and fact.role == NEVER_SUSPENDS
    if not fn.is_async:
        return False
    return _suspends(fn.node.body, model, depth + 1) is None


def _suspension_before(statements, write: Store, model: Model) -> cst.CSTNode | None:
    """An await in the statements before the one holding the write, or in the write itself."""
    for stmt in statements:
        if stmt is write.statement or contains(stmt, write.statement):
            return _suspends(write.value, model) or _suspends_before_in(stmt, write, model)
        found = _suspends(stmt, model)
        if found is not None:
            return found
    return None


def _suspends_before_in(stmt: cst.CSTNode, write: Store, model: Model) -> cst.CSTNode | None:
    """For a write nested deeper in ``stmt`` (a ``try``, a ``with``): awaits before it there."""
    if stmt is write.statement:
        return None
    for child in _child_statements(stmt):
        if child is write.statement or contains(child, write.statement):
            return _suspends_before_in(child, write, model) if child is not write.statement else None
        found = _suspends(child, model)
        if found is not None:
            return found
    return None


def _child_statements(stmt: cst.CSTNode) -> list:
    import libcst as cst

    body = getattr(stmt, "body", None)
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    return []


@analysis
def _suites(model: Model, fn: Function) -> dict[int, tuple[cst.IndentedBlock, cst.If | None]]:
    """Every block in ``fn`` (not in nested definitions): id → (block, the ``if`` whose body it
    is, or None). One walk per function, however many writes it holds."""
    import libcst as cst

    out: dict[int, tuple[cst.IndentedBlock, cst.If | None]] = {}
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(fn.node.body, None)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, cst.IndentedBlock):
            out[id(node)] = (node, parent if isinstance(parent, cst.If) and parent.body is node else None)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend((child, node) for child in children(node))
    return out


def _enclosing(model: Model, fn: Function, write: Store) -> list[tuple[list, cst.If | None]]:
    """(the statements of each block that holds the write, the ``if`` it is the body of),
    innermost first."""
    suites = _suites(model, fn)
    found = []
    for suite_id in reversed(write.branch):
        entry = suites.get(suite_id)
        if entry is not None:
            block, parent = entry
            found.append((list(block.body), parent))
    return found


def _exits(if_node: cst.CSTNode) -> bool:
    """Can the ``if``'s body leave the function: a ``return``/``raise`` in it, also one nested in
    an inner ``if`` (``if existing: if await still_valid(existing): return existing``). When the
    resource is missing, the body is skipped either way and creation follows."""
    import libcst as cst

    body = getattr(if_node, "body", None)
    stack = list(body.body) if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (cst.Return, cst.Raise)):
            return True
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            stack.extend(stmt.body)
        elif isinstance(stmt, (cst.If, cst.Else, cst.IndentedBlock)):
            stack.extend(children(stmt))
    return False


def _check_then_create(model: Model, fn: Function, write: Store) -> CheckThenCreate | None:
    import libcst as cst

    container = write.target.endswith("[]")
    store = write.target[:-2] if container else write.target
    if "[" in store or not _resource_name(store) or not _long_lived(model, fn, store):
        return None
    if not container and not (store.startswith("self.") and store.count(".") == 1 and _conversation_attribute(store)):
        return None
    aliases = _aliases(model, fn, store, container)
    for statements, parent in _enclosing(model, fn, write):
        if parent is not None and _finds_missing(parent.test, store, container, aliases):
            suspension = _suspension_before(statements, write, model)
            if suspension is not None:
                return CheckThenCreate(write, store, parent.test, suspension)
            return None
        # an early return before the write: ``if sid in sessions: return sessions[sid]``
        for index, stmt in enumerate(statements):
            if stmt is write.statement or contains(stmt, write.statement):
                break
            if isinstance(stmt, cst.If) and _exits(stmt) and _finds_present(stmt.test, store, container, aliases):
                suspension = _suspension_before(statements[index + 1 :], write, model)
                if suspension is not None:
                    return CheckThenCreate(write, store, stmt.test, suspension)
                return None
    return None


def _demo_only(model: Model, fn: Function, depth: int = 0) -> bool:
    """Is ``fn`` reached in this module only from its ``if __name__ == "__main__":`` block (a demo of
    an importable module)? Such a function is what other modules import and call per request:
    senylar/latoken_hack chat_gpt_api/assistant.py:38-41 at 84576907ec57e0b3116a556bea9de97558bd2eea
    (bench/real-apps/labels-pub16.toml), whose ``get_response`` the module's demo calls once and
    aiogram handlers elsewhere call for every message."""
    if depth > 4 or fn.contexts & {ep.STARTUP, ep.HANDLER, ep.WORKER} or _cached(fn):
        return False
    sites = model.callers(fn)
    return bool(sites) and all(
        c.in_main or (c.function is not None and c.function is not fn and _demo_only(model, c.function, depth + 1))
        for c in sites
    )


def _keyed_by_parameter(fn: Function, write: Store) -> bool:
    """Is the store an item keyed by one of the function's parameters (``self.threads[user_id] = ...``)?"""
    import libcst as cst

    if not write.target.endswith("[]"):
        return False
    statement = write.statement
    if isinstance(statement, cst.SimpleStatementLine) and statement.body:
        statement = statement.body[0]
    targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else []
    for target in targets:
        if isinstance(target, cst.Subscript) and len(target.slice) == 1:
            index = target.slice[0].slice
            if isinstance(index, cst.Index) and dotted(index.value) in fn.params:
                return True
    return False


def _start_up(model: Model, fn: Function, write: Store) -> bool:
    """Does ``fn`` run once (start-up code), so that nothing can interleave with it? A function
    that only its module's ``__main__`` demo calls, storing an item keyed by its parameter, is
    a per-session accessor that other modules call, not start-up code."""
    if not _runs_once(model, fn):
        return False
    if fn.name in ("__init__", "__post_init__", "setup", "startup", "on_startup", "lifespan", "main"):
        return True
    return not (_keyed_by_parameter(fn, write) and _demo_only(model, fn))


def unlocked_check_then_create(model: Model) -> Iterator[CheckThenCreate]:
    reported: set[tuple[int, str]] = set()
    writes: list[Store] = list(model.bindings)
    writes += [s for fn in model.functions if fn.is_async and fn.class_name for s in _setter_stores(model, fn)]
    for write in writes:
        fn = write.function
        if fn is None or not fn.is_async or write.in_main or _start_up(model, fn, write):
            continue
        if not (write.target.endswith("[]") or write.target.startswith("self.")):
            continue
        found = _check_then_create(model, fn, write)
        if found is not None and not under_lock(fn, write) and (id(found.check), found.store) not in reported:
            reported.add((id(found.check), found.store))  # one report per check, however many branches store
            yield found


@rule("DUP205", name="unlocked-session-check-then-create")
def unlocked_session_check_then_create(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for found in unlocked_check_then_create(model):
        fn = found.write.function
        yield Finding(
            found.write.statement,
            f"`{found.store}` is checked (line {ctx.line(found.check)}) and filled here only after an "
            f"`await` (line {ctx.line(found.suspension)}) in `{fn.name if fn else ''}`, with no lock: two "
            "first requests for one session both find it missing and both create it, and the last "
            "store wins, splitting the session's history; create under an `asyncio.Lock` and check "
            "again inside it, store the pending task before awaiting it, or use "
            "`dupguard.runtime.SessionRegistry` (builds each session's object once)",
        )
