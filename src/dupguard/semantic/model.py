"""The per-file semantic model that every rule queries.

Built in one traversal (``builder.py``). It answers the questions that decide whether a
pattern is a bug: what a name refers to (imports → qualified names), what object a
binding holds (catalog kind), where code runs (request handler, worker, startup hook,
script) and whether a use is guarded (a lock, a session store, an idempotency check).
Rules never walk the tree themselves; they read these records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import entrypoints as ep
from .catalog import Catalog, Entry, Kind

if TYPE_CHECKING:
    import libcst as cst


def string_value(node: cst.CSTNode | None) -> str | bytes | None:
    """A string literal's value (libcst's ``evaluated_value``), else None; the common literals
    without the compile ``evaluated_value`` costs (a shortcut kept in ``dupguard.cstfast``)."""
    from ..cstfast import string_value as value

    return value(node)


@dataclass(eq=False)
class Loop:
    node: cst.CSTNode = field(repr=False)
    kind: str  # "for" | "while" | "comprehension"
    iter_callee: str | None = None  # resolved callee of a ``for`` loop's iterable (e.g. "range")
    while_true: bool = False
    has_break: bool = False
    has_try: bool = False
    capped: bool = False  # a ``while`` whose test compares a counter, or a ``for`` over range()
    function: Function | None = None
    # tests of ``if`` statements directly in this loop whose body leaves it (break/return/raise):
    # iteration caps such as ``if turns >= MAX_TURNS: break`` (DUP505)
    exit_tests: list[cst.BaseExpression] = field(default_factory=list)


@dataclass(eq=False)
class TryFrame:
    node: cst.CSTNode = field(repr=False)
    part: str  # "body" | "except" | "else" | "finally"


@dataclass(eq=False)
class Arg:
    keyword: str | None
    dotted: str | None  # "agent.chat" when the argument is a name/attribute chain
    node: cst.BaseExpression = field(repr=False)
    star: str = ""


@dataclass(eq=False)
class Call:
    """One call expression and everything around it that a rule may ask about."""

    node: cst.Call = field(repr=False)
    func: str | None  # dotted text of the callee expression: "agent.achat", "get_agent().run"
    callee: str | None  # resolved qualified name when the head is imported: "asyncio.gather"
    receiver: str | None  # dotted text of the object a method is called on: "agent"
    method: str | None  # the attribute called: "achat"
    args: tuple[Arg, ...]
    function: Function | None
    loops: tuple[Loop, ...]
    withs: tuple[str, ...]  # dotted text of the enclosing context managers
    trys: tuple[TryFrame, ...]
    outer: tuple[Call, ...]  # enclosing calls, innermost last
    statement: cst.CSTNode = field(repr=False)
    block: tuple[int, int]  # (id of the enclosing suite, index of the statement in it)
    branch: tuple[int, ...]  # ids of enclosing if/else/match bodies (statement nesting)
    in_main: bool
    awaited: bool = False
    # tests of the enclosing ``if`` bodies, outermost first (guards such as ``h not in cm.handlers``)
    conditions: tuple[cst.BaseExpression, ...] = ()
    # (suite id, statement index) at every nesting level, outermost first: statement order
    # between calls in different suites
    path: tuple[tuple[int, int], ...] = ()

    def kw(self, name: str) -> Arg | None:
        for arg in self.args:
            if arg.keyword == name:
                return arg
        return None

    def arg(self, key: str) -> Arg | None:
        """The argument the catalog names by ``key``: a keyword, or a positional index as a
        string ("1"), the catalog's convention for parameters that are usually positional."""
        if not key.isdigit():
            return self.kw(key)
        positional = [a for a in self.args if a.keyword is None and not a.star]
        return positional[int(key)] if len(positional) > int(key) else None


@dataclass(eq=False)
class Binding:
    """``target = value``: a name, ``self.x``, ``Cls.x`` or ``app.state.x`` bound to an expression."""

    target: str
    value: cst.BaseExpression = field(repr=False)
    value_call: Call | None  # the Call record when the value is a call
    value_dotted: str | None  # dotted text when the value is a name or attribute (an alias)
    statement: cst.CSTNode = field(repr=False)
    scope: str  # "module" | "class" | "function"
    function: Function | None
    class_name: str | None
    block: tuple[int, int]
    branch: tuple[int, ...]
    in_main: bool
    seq: int = 0  # how many calls precede it in source order (orders bindings against ``Model.calls``)


@dataclass(eq=False)
class Decorator:
    dotted: str | None  # "app.post", "lru_cache"
    callee: str | None  # resolved: "functools.lru_cache"
    call: Call | None  # when the decorator is called: @app.post("/chat") (linked after the walk)
    node: cst.BaseExpression | None = None


@dataclass(eq=False)
class Function:
    node: cst.FunctionDef = field(repr=False)
    name: str
    qualname: str
    class_name: str | None
    parent: Function | None
    is_async: bool
    params: tuple[str, ...]
    param_defaults: dict[str, cst.BaseExpression]
    param_annotations: dict[str, cst.BaseExpression]
    decorators: tuple[Decorator, ...]
    local_names: set[str] = field(default_factory=set)
    global_names: set[str] = field(default_factory=set)
    returns: list[cst.BaseExpression] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    contexts: set[str] = field(default_factory=set)  # direct: handler / worker / startup / script
    reached_from: set[str] = field(default_factory=set)  # contexts that reach it through calls
    # tests of ``if`` statements whose body leaves (return/raise/continue/break): early-exit guards
    exit_tests: list[cst.BaseExpression] = field(default_factory=list)


@dataclass(eq=False)
class ListLiteral:
    node: cst.List = field(repr=False)
    elements: tuple[tuple[str | None, cst.BaseExpression], ...]


@dataclass(eq=False)
class ConstantKey:
    """A literal conversation key: ``thread_id="default"`` or ``{"thread_id": "1"}``."""

    key: str  # "thread_id", "session_id"…
    value: cst.BaseExpression  # the literal
    function: Function | None
    statement: cst.CSTNode = field(repr=False)
    call: Call | None  # the innermost enclosing call
    in_main: bool


SESSION_KEYS = ("thread_id", "session_id", "chat_store_key", "conversation_id")


@dataclass
class Model:
    catalog: Catalog
    imports: dict[str, str] = field(default_factory=dict)  # local name → qualified name
    calls: list[Call] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    classes: dict[str, list[str]] = field(default_factory=dict)  # class name → resolved bases
    loops: list[Loop] = field(default_factory=list)
    lists: dict[int, ListLiteral] = field(default_factory=dict)  # id(cst.List) → literal
    # ``x += y`` as Call-shaped records (method "__iadd__", node the AugAssign); kept out of
    # ``calls`` so rules that expect a ``cst.Call`` never see them
    augmented: list[Call] = field(default_factory=list)
    constant_keys: list[ConstantKey] = field(default_factory=list)
    dict_roles: dict[int, str] = field(default_factory=dict)  # id(cst.Dict) → its literal "role"
    is_streamlit: bool = False
    imports_django: bool = False
    # qualified names of the user's idempotency checks (``extend-idempotency-guards``)
    idempotency_guards: frozenset[str] = frozenset()
    # indexes built by finalize()
    _call_index: dict[int, Call] = field(default_factory=dict, repr=False)
    _by_target: dict[str, list[Binding]] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ names

    def resolve(self, dotted: str | None) -> str | None:
        """Qualified name of a dotted expression whose head is imported, else None."""
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        base = self.imports.get(head)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def entry_for_call(self, call: Call | None) -> Entry | None:
        if call is None or call.callee is None:
            return None
        return self.catalog.lookup(call.callee)

    # ------------------------------------------------------------------ functions

    def function_named(
        self, name: str, class_name: str | None = None, within: Function | None = None
    ) -> Function | None:
        """A function by name: nested in ``within`` (or its parents) first, then top level."""
        scope = within
        while scope is not None:
            for fn in self.functions:
                if fn.name == name and fn.parent is scope and fn.class_name is None:
                    return fn
            scope = scope.parent
        for fn in self.functions:
            if fn.name == name and fn.class_name == class_name and (fn.parent is None or class_name):
                return fn
        return None

    def called_function(self, call: Call) -> Function | None:
        """The module-local function or method a call reaches (the light call graph)."""
        if call.callee is not None or not call.func:
            return None
        if "." not in call.func:
            return self.function_named(call.func, within=call.function)
        if call.receiver in ("self", "cls") and call.function and call.function.class_name:
            return self.function_named(call.method or "", call.function.class_name)
        if call.receiver and "." not in call.receiver and "(" not in call.receiver:
            # ``service.plan()`` on a module-level instance of a class defined here
            binding = self.local_binding(call.receiver, call.function)
            cls = binding.value_call.func if binding and binding.value_call else None
            if cls in self.classes:
                return self.function_named(call.method or "", cls)
        return None

    def contexts_of(self, fn: Function | None, *, in_main: bool = False) -> set[str]:
        if fn is None:
            return {ep.SCRIPT} if in_main else ({"streamlit"} if self.is_streamlit else set())
        return fn.contexts | fn.reached_from

    def is_concurrent_context(self, fn: Function | None, in_main: bool = False) -> bool:
        """Does code here run once per request or job, many at a time?"""
        ctx = self.contexts_of(fn, in_main=in_main)
        return bool(ctx & {ep.HANDLER, ep.WORKER})

    # ------------------------------------------------------------------ objects

    def local_binding(self, name: str, fn: Function | None) -> Binding | None:
        """The latest binding of ``name`` visible in ``fn``: its own scope, the enclosing
        functions' (closures), then the module."""
        while fn is not None:
            if name in fn.global_names:
                break
            if name in fn.local_names:
                found = None
                for b in self._by_target.get(name, ()):
                    if b.function is fn:
                        found = b
                return found
            fn = fn.parent
        return self.module_binding(name)

    def module_binding(self, target: str) -> Binding | None:
        found = None
        for b in self._by_target.get(target, ()):
            if b.scope == "module" and not b.in_main:
                found = b
        return found

    def kind_of_expr_call(self, call: Call | None, depth: int = 0) -> tuple[Kind | None, Entry | None]:
        """What a call builds: a catalog entry directly, or through a module-local factory."""
        if call is None or depth > 3:
            return None, None
        entry = self.entry_for_call(call)
        if entry is not None:
            kind = entry.kind
            if kind is Kind.STATELESS and any(call.kw(k) for k in entry.stateful_if_kwargs):
                kind = Kind.AGENT
            return kind, entry
        fn = self.called_function(call)
        if fn is not None:
            for ret in fn.returns:
                ret_call = self.call_for_node(ret)
                if ret_call is None and _is_name(ret):
                    b = self.local_binding(ret.value, fn)  # type: ignore[attr-defined]
                    ret_call = b.value_call if b else None
                kind, entry = self.kind_of_expr_call(ret_call, depth + 1)
                if kind is not None:
                    return kind, entry
        return None, None

    def call_for_node(self, node: cst.CSTNode) -> Call | None:
        return self._call_index.get(id(node))

    def finalize(self) -> None:
        """Index the records once the walk is over (queries run many times per file)."""
        self._call_index = {id(c.node): c for c in self.calls}
        self._by_target = {}
        for b in self.bindings:
            self._by_target.setdefault(b.target, []).append(b)


def _is_name(node: cst.CSTNode) -> bool:
    return type(node).__name__ == "Name"
