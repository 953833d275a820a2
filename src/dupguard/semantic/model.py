"""The per-file semantic model that every rule queries.

Built in one traversal (``builder.py``). It answers the questions that decide whether a
pattern is a bug: what a name refers to (imports → qualified names), what object a
binding holds (catalog kind), where code runs (request handler, worker, startup hook,
script) and whether a use is guarded (a lock, a session store, an idempotency check).
Rules never walk the tree themselves; they read these records.

The model owns the facts derived from its records, so that every query costs the same
whatever the size of the file (bench/sizes.py: 1k to 100k lines):

* **indexes**, built once when the walk is over (``finalize``) or on first use: functions by
  name and scope, bindings by name and scope, calls by node, by source order, by loop and by
  enclosing call. A query is a dictionary lookup, never a scan of every record;
* **analyses** that rules share (does this call run an agent? which calls reach this
  function?) are declared with ``@analysis`` and memoised in the model (``Model.memo``), one
  value per model and arguments, so that no module attaches caches to the model from outside.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import libcst as cst

from . import entrypoints as ep
from .catalog import Catalog, Entry, Kind

if TYPE_CHECKING:
    from ..project import Fact, ProjectFacts


def string_value(node: cst.CSTNode | None) -> str | bytes | None:
    """A string literal's value (libcst's ``evaluated_value``), else None; the common literals
    without the compile ``evaluated_value`` costs (a shortcut kept in ``dupguard.cstfast``)."""
    from ..cstfast import string_value as value

    return value(node)


def is_literal(node: cst.CSTNode | None) -> bool:
    """A string or integer literal, or implicitly concatenated string literals. Adjacent strings
    with an f-string among them (``f"{name}" f"-{uuid4()}"``) are no literal: their parts decide."""
    kind = type(node)
    if kind is cst.SimpleString or kind is cst.Integer:
        return True
    if kind is cst.ConcatenatedString:
        return is_literal(node.left) and is_literal(node.right)  # type: ignore[union-attr]
    return False


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
    """One call expression and everything around it that a rule may ask about.

    ``node`` is the ``cst.Call`` for the records in ``Model.calls``; ``Model.augmented`` holds
    ``x += y`` as calls of ``__iadd__`` whose node is the ``cst.AugAssign``, and DUP401/402
    make records for bare registration decorators (``@agent.tool``) whose node is the
    decorator expression."""

    node: cst.BaseExpression | cst.AugAssign = field(repr=False)
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
    withs: tuple[str, ...] = ()  # dotted text of the enclosing context managers (as ``Call.withs``)


@dataclass(eq=False)
class Decorator:
    dotted: str | None  # "app.post", "lru_cache"
    callee: str | None  # resolved: "functools.lru_cache"
    call: Call | None  # when the decorator is called: @app.post("/chat") (linked after the walk)
    node: cst.BaseExpression  # the decorator expression


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
    # for a value that is not a literal where it is written (``Model.key_values``): what makes it
    # one, in words ("the module constant `SESSION_ID`"), set by the rule that resolves it
    source: str = ""


SESSION_KEYS = ("thread_id", "session_id", "chat_store_key", "conversation_id")

F = TypeVar("F", bound=Callable[..., Any])
_BUSY = object()  # marks an analysis whose value is being computed (a cycle in the call graph)


def analysis(func: F) -> F:
    """Declare ``func(model, *args)`` an analysis of the model: computed once per model and
    arguments, and kept in ``Model.memo`` (the one place a derived fact is stored).

    Arguments are keys as they are: the model's records (``Call``, ``Function``, ``Loop``…) and
    libcst nodes hash by identity, strings and ``None`` by value."""

    def memoised(model: Model, *args: Hashable) -> Any:
        key = (func, *args)
        memo = model.memo
        try:
            return memo[key]
        except KeyError:
            value = memo[key] = func(model, *args)
            return value

    return cast(F, functools.wraps(func)(memoised))


def recursive_analysis(on_cycle: Callable[[], Any]) -> Callable[[F], F]:
    """``analysis`` for one that follows the module's call graph: while ``func(model, x)`` is
    being computed, a nested request for the same ``x`` (a call cycle) gets ``on_cycle()``
    instead of recursing forever; the cycle then contributes nothing."""

    def declare(func: F) -> F:
        def memoised(model: Model, *args: Hashable) -> Any:
            key = (func, *args)
            memo = model.memo
            value = memo.get(key, None)
            if value is _BUSY:
                return on_cycle()
            if value is None and key not in memo:
                memo[key] = _BUSY
                try:
                    value = memo[key] = func(model, *args)
                except BaseException:
                    del memo[key]
                    raise
            return value

        return cast(F, functools.wraps(func)(memoised))

    return declare


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
    # the other values of those keys (names, attributes, f-strings): DUP103 decides which are
    # constants all the same (a module constant, a config attribute, a parameter's default)
    key_values: list[ConstantKey] = field(default_factory=list)
    dict_roles: dict[int, str] = field(default_factory=dict)  # id(cst.Dict) → its literal "role"
    is_streamlit: bool = False
    imports_django: bool = False
    # ``from x import *`` somewhere: names this file never binds may still be defined
    star_import: bool = False
    # names bound by a relative import the project index cannot place (no ``imports`` entry)
    unplaced_imports: set[str] = field(default_factory=set)
    # qualified names of the user's idempotency checks (``extend-idempotency-guards``)
    idempotency_guards: frozenset[str] = frozenset()
    # what the project index knows about the names this file imports from the project's own
    # modules (``dupguard.project``); None when the file imports none that matter
    project: ProjectFacts | None = None
    # the values of ``@analysis`` functions, by (function, *arguments)
    memo: dict[tuple[Hashable, ...], Any] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ indexes (finalize)

    # id(cst.Call) → its record
    _call_index: dict[int, Call] = field(default_factory=dict, repr=False)
    # (target, function or None) → the bindings of ``target`` made in that function, in order
    _scoped_bindings: dict[tuple[str, Function | None], list[Binding]] = field(default_factory=dict, repr=False)
    # target → the latest module-level binding outside ``if __name__ == "__main__":``
    _module_bindings: dict[str, Binding] = field(default_factory=dict, repr=False)
    # (class name, target) → bindings of ``target`` in that class's body or methods, in order
    _member_bindings: dict[tuple[str, str], list[Binding]] = field(default_factory=dict, repr=False)
    # name → the first top-level function; (name, enclosing function) → the first nested one;
    # (name, class name) → the first method
    _top_functions: dict[str, Function] = field(default_factory=dict, repr=False)
    _nested_functions: dict[tuple[str, Function], Function] = field(default_factory=dict, repr=False)
    _methods: dict[tuple[str, str], Function] = field(default_factory=dict, repr=False)

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
        """What calling ``call``'s callee builds: a catalog entry, or a project factory or
        class that another module defines (the project index)."""
        if call is None or call.callee is None:
            return None
        return self.catalog.lookup(call.callee) or self.project_entry(call.callee)

    def fact(self, qualified: str | None) -> Fact | None:
        """The project index's fact about a qualified name (``app.agent.agent``), or None."""
        return self.project.get(qualified) if self.project is not None and qualified else None

    def project_entry(self, qualified: str) -> Entry | None:
        """A project factory or class that builds a stateful object, as a catalog entry."""
        from ..project import FACTORY, SHARED_FACTORY, STATEFUL

        fact = self.fact(qualified)
        if fact is None or fact.role not in (FACTORY, SHARED_FACTORY) or fact.kind not in STATEFUL:
            return None
        return fact_entry(self, qualified)

    # ------------------------------------------------------------------ functions

    def function_named(
        self, name: str, class_name: str | None = None, within: Function | None = None
    ) -> Function | None:
        """A function by name: nested in ``within`` (or its parents) first, then top level
        (or the method of ``class_name``); the first one in source order at each level."""
        scope = within
        nested = self._nested_functions
        while scope is not None:
            fn = nested.get((name, scope))
            if fn is not None:
                return fn
            scope = scope.parent
        if class_name is None:
            return self._top_functions.get(name)
        return self._methods.get((name, class_name))

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

    def callers(self, fn: Function) -> list[Call]:
        """The calls that reach ``fn`` (``called_function``), in source order."""
        return _callers(self).get(fn, [])

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
                found = self._scoped_bindings.get((name, fn))
                return found[-1] if found else None
            fn = fn.parent
        return self._module_bindings.get(name)

    def module_binding(self, target: str) -> Binding | None:
        return self._module_bindings.get(target)

    def bindings_in(self, target: str, fn: Function | None) -> list[Binding]:
        """Every binding of ``target`` made in ``fn`` (at module or class level when None),
        in source order."""
        return self._scoped_bindings.get((target, fn), [])

    def bindings_under(self, suite: cst.CSTNode) -> list[Binding]:
        """The bindings made in the block ``suite`` (an ``IndentedBlock``) or in a block nested
        in it, in source order."""
        return _bindings_by_suite(self).get(id(suite), [])

    def member_bindings(self, class_name: str, target: str) -> list[Binding]:
        """Bindings of ``target`` (``x`` in a class body, ``self.x`` in a method) in the class
        ``class_name``, in source order."""
        return self._member_bindings.get((class_name, target), [])

    def binding_of(self, text: str, fn: Function | None) -> Binding | None:
        """The binding ``text`` refers to in ``fn``: the latest ``self.x = ...`` of ``fn``'s
        class for ``self.x``, the visible binding for a plain name, else None."""
        if text.startswith("self.") and fn is not None and fn.class_name:
            found = self._member_bindings.get((fn.class_name, text))
            return found[-1] if found else None
        if "." in text or "(" in text or "[" in text:
            return None
        return self.local_binding(text, fn)

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
                ret_call = self.returned_call(ret, fn)
                found_kind, found_entry = self.kind_of_expr_call(ret_call, depth + 1)
                if found_kind is not None:
                    return found_kind, found_entry
        return None, None

    def returned_call(self, ret: cst.BaseExpression, fn: Function) -> Call | None:
        """The call a ``return`` value is: the call itself, or the call bound to the name it
        returns (``agent = Agent(...); return agent``)."""
        call = self._call_index.get(id(ret))
        if call is None and type(ret) is cst.Name:
            binding = self.local_binding(ret.value, fn)
            call = binding.value_call if binding else None
        return call

    def call_for_node(self, node: cst.CSTNode) -> Call | None:
        return self._call_index.get(id(node))

    # ------------------------------------------------------------------ order

    def order(self, call: Call) -> int:
        """Source order of a call among ``calls`` (-1 for a record that is not one of them)."""
        return _call_order(self).get(call, -1)

    def function_order(self, fn: Function) -> int:
        """Source order of a function among ``functions``."""
        return _function_order(self)[fn]

    def calls_in(self, loop: Loop) -> list[Call]:
        """The calls inside ``loop`` (in any function), in source order."""
        return _calls_by_loop(self).get(loop, [])

    def methods_of(self, class_name: str) -> list[Function]:
        """The functions defined in the body of classes named ``class_name`` (not nested in a method),
        in source order."""
        return _methods_by_class(self).get(class_name, [])

    def calls_within(self, call: Call) -> list[Call]:
        """The calls nested in ``call``'s arguments (at any depth), in source order."""
        return _calls_by_outer(self).get(call, [])

    def finalize(self) -> None:
        """Index the records once the walk is over (queries run many times per file)."""
        self._call_index = {id(c.node): c for c in self.calls}
        scoped: dict[tuple[str, Function | None], list[Binding]] = {}
        members: dict[tuple[str, str], list[Binding]] = {}
        module: dict[str, Binding] = {}
        for b in self.bindings:
            scoped.setdefault((b.target, b.function), []).append(b)
            if b.class_name is not None:
                members.setdefault((b.class_name, b.target), []).append(b)
            if b.scope == "module" and not b.in_main:
                module[b.target] = b
        self._scoped_bindings, self._member_bindings, self._module_bindings = scoped, members, module
        top: dict[str, Function] = {}
        nested: dict[tuple[str, Function], Function] = {}
        methods: dict[tuple[str, str], Function] = {}
        for fn in self.functions:
            if fn.class_name is not None:
                methods.setdefault((fn.name, fn.class_name), fn)
            elif fn.parent is None:
                top.setdefault(fn.name, fn)
            else:
                nested.setdefault((fn.name, fn.parent), fn)
        self._top_functions, self._nested_functions, self._methods = top, nested, methods


@analysis
def fact_entry(model: Model, qualified: str) -> Entry | None:
    """The project index's fact about ``qualified`` as a catalog entry (one per model and name)."""
    fact = model.fact(qualified)
    if fact is None or fact.kind not in ("agent", "memory"):
        return None
    return Entry(
        names=(qualified,),
        kind=Kind(fact.kind),
        framework=fact.framework or "project",
        version="",
        source=fact.where,
        why=f"built at {fact.where}",
        run_methods=fact.run_methods,
    )


# indexes that only some rules need: built on first use


@analysis
def _call_order(model: Model) -> dict[Call, int]:
    return {c: i for i, c in enumerate(model.calls)}


@analysis
def _function_order(model: Model) -> dict[Function, int]:
    return {fn: i for i, fn in enumerate(model.functions)}


@analysis
def _callers(model: Model) -> dict[Function, list[Call]]:
    out: dict[Function, list[Call]] = {}
    for call in model.calls:
        fn = model.called_function(call)
        if fn is not None:
            out.setdefault(fn, []).append(call)
    return out


@analysis
def _bindings_by_suite(model: Model) -> dict[int, list[Binding]]:
    out: dict[int, list[Binding]] = {}
    for b in model.bindings:
        for suite in b.branch:
            out.setdefault(suite, []).append(b)
    return out


@analysis
def _calls_by_loop(model: Model) -> dict[Loop, list[Call]]:
    out: dict[Loop, list[Call]] = {}
    for call in model.calls:
        for loop in call.loops:
            out.setdefault(loop, []).append(call)
    return out


@analysis
def _methods_by_class(model: Model) -> dict[str, list[Function]]:
    out: dict[str, list[Function]] = {}
    for fn in model.functions:
        if fn.class_name is not None and fn.parent is None:
            out.setdefault(fn.class_name, []).append(fn)
    return out


@analysis
def _calls_by_outer(model: Model) -> dict[Call, list[Call]]:
    out: dict[Call, list[Call]] = {}
    for call in model.calls:
        for outer in call.outer:
            out.setdefault(outer, []).append(call)
    return out
