"""DUP106 current-user-in-module-state: per-request code that stores this request's user,
session, agent or credentials where the whole process reads them.

Four shapes, each written from code that runs per request (``request_state.per_request``) with
a value that belongs to the request (``request_state.reads_request_value``):

- ``global current_user`` then ``current_user = ...``, when another function reads the name
  (a tool, another handler): the next request overwrites it while the first is still running;
- ``STATE["current_user"] = ...`` / ``context.user_id = ...`` on a module-level dict or plain
  object, under a constant key whose name says user, session, tenant or credential;
- ``os.environ["OPENAI_API_KEY"] = ...`` (also ``os.environ.update``/``setdefault``,
  ``os.putenv``): the environment is one per process, and SDK clients read it when they are built;
- ``sys.stdout = ...`` / ``sys.stderr = ...`` and ``contextlib.redirect_stdout(...)``: one
  stream per process, so a concurrent request's output lands in this request's capture.

``threading.local()`` and ``ContextVar`` objects are per thread or per task by design and are
not reported; neither are writes at start-up or at import, nor constants.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...semantic.catalog import Kind
from ...semantic.guards import held_around
from ...semantic.model import Binding, Function, Model
from ...semantic.nodes import children
from ...semantic.request_state import (
    PerRequest,
    page_session,
    per_request,
    reads_names,
    reads_request_value,
    reads_session_value,
)
from ..registry import Finding, RuleContext, rule

if TYPE_CHECKING:
    import libcst as cst

ENVIRON_WRITERS = frozenset({"update", "setdefault", "__setitem__"})
PROCESS_STREAMS = frozenset({"sys.stdout", "sys.stderr", "sys.stdin"})
REDIRECTS = frozenset({"contextlib.redirect_stdout", "contextlib.redirect_stderr"})
# Containers whose entries are per thread or per task by design.
PER_CONTEXT = frozenset({"threading.local", "_thread._local", "contextvars.ContextVar", "werkzeug.local.Local"})
# Key and attribute words that say "whose request this is".
CURRENT_WORDS = (
    "user",
    "session",
    "tenant",
    "account",
    "customer",
    "current",
    "active",
    "conversation",
    "thread_id",
    "chat_id",
    "token",
    "api_key",
    "apikey",
    "credential",
    "secret",
    "email",
)
PLAIN_CONTAINERS = frozenset({"dict", "types.SimpleNamespace", "collections.defaultdict", "collections.OrderedDict"})


@dataclass(frozen=True)
class Leak:
    node: object
    shown: str
    where: str  # "the module global `chatbot`", "the process environment"
    readers: str  # ", read by `chat` (line 15)" or ""
    why: PerRequest


def _reader(model: Model, name: str, writer: Function) -> Function | None:
    """Another function that reads the module global ``name``."""
    for fn in model.functions:
        if fn is not writer and fn.parent is not writer and reads_names(fn, {name}):
            return fn
    return None


def _lazy_init(model: Model, binding: Binding) -> bool:
    """``if client is None: client = ...`` (or an early return when it is set): the global
    is filled once, a cache rather than the current request's value."""
    from ...semantic.nodes import names_in

    fn = binding.function
    tests = []
    scope = fn
    while scope is not None:
        tests.extend(scope.exit_tests)
        scope = scope.parent
    for call in model.calls:
        if call.function is fn and call.statement is binding.statement:
            tests.extend(call.conditions)
    tests.extend(_enclosing_if_tests(binding))
    return any(binding.target in set(names_in(test)) for test in tests)


def _enclosing_if_tests(binding: Binding) -> list:
    """Tests of the ``if`` statements whose body holds the binding."""
    import libcst as cst

    fn = binding.function
    if fn is None or not binding.branch:
        return []
    inside = set(binding.branch)
    out = []
    stack: list[cst.CSTNode] = [fn.node.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.If) and id(node.body) in inside:
            out.append(node.test)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(children(node))
    return out


def _global_rebinds(model: Model) -> Iterator[Leak]:
    for b in model.bindings:
        fn = b.function
        if fn is None or b.scope != "module" or b.target not in fn.global_names or b.in_main:
            continue
        why = per_request(model, fn)
        if why is None or not reads_request_value(model, fn, b.value) or _lazy_init(model, b):
            continue
        if model.kind_of_expr_call(b.value_call)[0] in (Kind.AGENT, Kind.MEMORY) and _shared_and_used(model, b):
            continue  # a stateful agent or memory in a global: DUP101/DUP102 report it
        reader = _reader(model, b.target, fn)
        if reader is None:
            continue
        yield Leak(b.statement, f"{b.target} = ...", f"the module global `{b.target}`", f"`{reader.name}`", why)


def _shared_and_used(model: Model, binding: Binding) -> bool:
    """Do DUP101/DUP102 report this binding (a shared object per-request code uses)? Only then is
    it theirs: an agent another module's factory builds for this request and stores in a global
    that a later module-level binding hides from them is still this rule's."""
    from ...semantic.shared import shared_objects, uses_in_concurrent_code

    return any(s.binding is binding and uses_in_concurrent_code(model, s) for s in shared_objects(model))


def _module_container(model: Model, head: str, fn: Function) -> Binding | None:
    """The module-level dict or plain object ``head`` refers to in ``fn``, if it is one."""
    scope: Function | None = fn
    while scope is not None:
        if head in scope.global_names:
            break
        if head in scope.local_names or head in scope.params:
            return None
        scope = scope.parent
    binding = model.module_binding(head)
    if binding is None or model.is_streamlit:
        return None
    import libcst as cst

    if isinstance(binding.value, cst.Dict):
        return binding
    call = binding.value_call
    if call is None:
        return None
    callee = call.callee or call.func or ""
    if callee in PER_CONTEXT:
        return None
    if callee in PLAIN_CONTAINERS or call.func in ("dict", "SimpleNamespace"):
        return binding
    if call.func in model.classes and not model.classes[call.func]:
        return binding  # ``state = AppState()`` of a plain class defined here
    return None


def _constant_key(statement: object) -> str | None:
    """The literal key of ``X["key"] = ...`` in a one-target assignment statement."""
    import libcst as cst

    from ...semantic.model import string_value

    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    for small in statement.body:
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            if isinstance(target, cst.Subscript) and len(target.slice) == 1:
                index = target.slice[0].slice
                if isinstance(index, cst.Index):
                    value = string_value(index.value)
                    return value if isinstance(value, str) else None
    return None


def _current(word: str) -> bool:
    lowered = word.lower()
    return any(w in lowered for w in CURRENT_WORDS)


def _container_writes(model: Model) -> Iterator[Leak]:
    for b in model.bindings:
        fn = b.function
        if fn is None or b.scope != "function" or b.in_main:
            continue
        target = b.target
        head, _, rest = target.partition(".")
        if target.endswith("[]") and "." not in target:
            key = _constant_key(b.statement)
            if key is None or not _current(key):
                continue
            name, shown = target[:-2], f'{target[:-2]}["{key}"] = ...'
        elif rest and "." not in rest and "[]" not in rest and head not in ("self", "cls"):
            if not _current(rest):
                continue
            name, shown = head, f"{target} = ..."
        else:
            continue
        if head == "os" or _module_container(model, name, fn) is None:
            continue
        why = per_request(model, fn)
        if why is None or not reads_request_value(model, fn, b.value):
            continue
        yield Leak(b.statement, shown, f"the module-level `{name}`", "", why)


def _process_write(model: Model, fn: Function | None, in_main: bool, *values: cst.CSTNode) -> PerRequest | None:
    """Why a write to process state (the environment, ``sys.stdout``) at this place is made per
    request with a value of that request: a handler's code (``per_request``), or a Streamlit page
    script's code, top level included (``page_session``: every session runs it, in one process)."""
    why = page_session(model, fn)
    if why is not None:
        return why if reads_session_value(model, fn, *values) else None
    if fn is None or in_main:
        return None
    why = per_request(model, fn)
    if why is None or not reads_request_value(model, fn, *values):
        return None
    return why


def _environ_and_streams(model: Model) -> Iterator[Leak]:
    for b in model.bindings:
        fn = b.function
        qualified = model.resolve(b.target.replace("[]", ""))
        if qualified == "os.environ" and b.target.endswith("[]"):
            where, shown = "the process environment", f"{b.target[:-2]}[...] = ..."
        elif qualified in PROCESS_STREAMS and b.target.count(".") == 1:
            where, shown = f"the process-wide `{qualified}`", f"{b.target} = ..."
        else:
            continue
        why = _process_write(model, fn, b.in_main, b.value)
        # written and used under one lock every request shares (set the key, run, delete it):
        # one request at a time sees the environment (guards.held_around)
        if why is None or held_around(model, fn, b.withs, b.seq):
            continue
        yield Leak(b.statement, shown, where, "", why)
    for index, call in enumerate(model.calls):
        fn = call.function
        if call.callee in REDIRECTS:
            where, shown = "the process-wide `sys.stdout`", f"{call.func}(...)"
            values = [a.node for a in call.args]
        elif call.callee == "os.putenv" or (
            call.method in ENVIRON_WRITERS and model.resolve(call.receiver) == "os.environ"
        ):
            where, shown = "the process environment", f"{call.func}(...)"
            values = [a.node for a in call.args]
        else:
            continue
        why = _process_write(model, fn, call.in_main, *values)
        if why is None or held_around(model, fn, call.withs, index + 1):
            continue
        yield Leak(call.node, shown, where, "", why)


def module_state_leaks(model: Model) -> Iterator[Leak]:
    yield from _global_rebinds(model)
    yield from _container_writes(model)
    yield from _environ_and_streams(model)


@rule("DUP106", name="current-user-in-module-state")
def current_user_in_module_state(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for leak in module_state_leaks(model):
        read = f", which {leak.readers} reads," if leak.readers else ""
        yield Finding(
            leak.node,  # type: ignore[arg-type]
            f"`{leak.shown}` stores this request's value in {leak.where}{read} inside "
            f"{leak.why.describe()}: the process serves every user at once, so a concurrent request "
            "overwrites it and runs with another user's session, agent or credentials; pass the value "
            "along (a parameter, the tool's run context), or keep it per session (a dict keyed by the "
            "session id, `contextvars.ContextVar`, `gr.State`, `cl.user_session`)",
        )
