"""Per-request values written where every request reads them.

The questions behind DUP104 (a handler reconfigures a shared agent) and DUP106 (a handler
stores "the current user" in module state): does this function run once per request, and
does this value belong to the request that computed it? Both halves must hold for a finding:
a startup hook that configures the agent once, or a handler that writes the same constant
every time, changes nothing another request could notice.

- per request: a request handler or worker task (or a function they call), a method named
  like a run (``run``, ``invoke``, ``execute``…: a wrapper's turn), or a plain function that
  itself runs an agent turn and is not run once (``lifetimes``).
- per-request value: the expression reads a parameter or a local of that function (or of an
  enclosing one): the request's data, a connection opened for it, a value it computed; or
  Flask's/Quart's ``request`` proxy.
- serialised: the write sits in the body of ``with <lock>:`` (``vocabulary.LOCK_WORDS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from . import entrypoints as ep
from .lifetimes import _cached, _function_runs_agent, _runs_once
from .model import Binding, Function, Model
from .nodes import children, dotted, dotted_names_in, names_in
from .vocabulary import LOCK_WORDS

if TYPE_CHECKING:
    import libcst as cst

# Methods whose body is one turn of a wrapper around an agent (CopilotKit's
# ``AgentConfigFrameworkAgent.run``, an A2A executor's ``execute``): they run per request
# whatever calls them.
TURN_METHODS = frozenset(
    {
        "run",
        "arun",
        "run_async",
        "invoke",
        "ainvoke",
        "invoke_async",
        "stream",
        "astream",
        "stream_async",
        "execute",
        "aexecute",
        "chat",
        "achat",
        "handle",
        "ahandle",
        "__call__",
    }
)


# Module-level proxies that stand for the current request (Flask and Quart bind them per request
# context; flask/globals.py, quart/globals.py).
REQUEST_PROXIES = frozenset(
    {"flask.request", "flask.session", "flask.g", "quart.request", "quart.session", "quart.g", "quart.websocket"}
)


@dataclass(frozen=True)
class PerRequest:
    """Why a function runs once per request: ``kind`` is "handler", "worker", "helper" (a
    function a handler or worker calls), "turn" (a run-like method), "runs-agent",
    "session-factory" (see ``session_factory``) or "session" (Streamlit page code: see
    ``page_session``)."""

    kind: str
    function: Function | None  # None: the top level of a Streamlit page script ("session")

    def describe(self) -> str:
        if self.function is None:
            return "the Streamlit page script, which runs for every session"
        name = self.function.name
        if self.kind == "session":
            return f"`{name}`, which the Streamlit page script runs for every session"
        if self.kind == "handler":
            return f"request handler `{name}`"
        if self.kind == "worker":
            return f"worker task `{name}`"
        if self.kind == "helper":
            return f"`{name}`, which runs per request (a handler or worker calls it)"
        if self.kind == "turn":
            return f"`{self.function.qualname}`, which runs once per turn"
        if self.kind == "session-factory":
            return f"`{name}`, which builds one per session"
        return f"`{name}`, which runs the agent on every call"


def per_request(model: Model, fn: Function | None) -> PerRequest | None:
    """Why ``fn`` runs once per request, or None when it runs once (startup, ``__init__``,
    a cached factory, a script) or its callers are unknown and it runs no agent."""
    if fn is None:
        return None
    if _cached(fn):
        return None
    contexts = model.contexts_of(fn)
    if contexts & {ep.HANDLER, ep.WORKER}:
        direct = fn.contexts & {ep.HANDLER, ep.WORKER}
        if direct:
            return PerRequest("handler" if ep.HANDLER in direct else "worker", fn)
        return PerRequest("helper", fn)
    if _runs_once(model, fn):
        return None
    if fn.class_name is not None and fn.name in TURN_METHODS:
        return PerRequest("turn", fn)
    if _function_runs_agent(model, fn):
        return PerRequest("runs-agent", fn)
    return None


# Streamlit widgets whose return value is what this session's visitor typed or chose.
STREAMLIT_INPUTS = frozenset(
    {
        "text_input",
        "text_area",
        "chat_input",
        "number_input",
        "selectbox",
        "multiselect",
        "radio",
        "select_slider",
        "file_uploader",
    }
)


def page_session(model: Model, fn: Function | None) -> PerRequest | None:
    """Code a Streamlit page script runs for every session: its top level (``fn`` None) and
    the functions it calls. Streamlit runs the script in one thread per session, all in one
    process (hosts.py, Streamlit), so what this code writes to *process* state (the
    environment, ``sys.stdout``) is written concurrently by every visitor. Its own module-level
    names are not process state: the page is a fresh module on every run."""
    from .hosts import streamlit_page

    if not model.is_streamlit or not streamlit_page(model):
        return None
    if fn is not None and "streamlit" not in model.contexts_of(fn):
        return None
    return PerRequest("session", fn)


def reads_session_value(model: Model, fn: Function | None, *nodes: cst.CSTNode | None) -> bool:
    """``reads_request_value`` for page code: ``st.session_state`` (this visitor's); in a
    function, its parameters and locals; at the top level of the page, a name bound there from
    an input widget (``st.text_input(...)``)."""
    if any(node is not None and any("session_state" in name for name in dotted_names_in(node)) for node in nodes):
        return True
    if fn is not None:
        return reads_request_value(model, fn, *nodes)
    for node in nodes:
        if node is None:
            continue
        for name in names_in(node):
            # any top-level binding of the name (``key = st.text_input(...)`` in one branch,
            # ``key = os.getenv(...)`` in the other: the widget's value reaches the write)
            for binding in model.bindings_in(name, None):
                call = binding.value_call
                if (
                    call is not None
                    and (call.callee or "").startswith("streamlit.")
                    and call.method in STREAMLIT_INPUTS
                ):
                    return True
    return False


def _scopes(fn: Function) -> list[Function]:
    out = []
    scope: Function | None = fn
    while scope is not None:
        out.append(scope)
        scope = scope.parent
    return out


def request_names(fn: Function) -> set[str]:
    """Names whose value belongs to one call of ``fn``: its parameters and locals, and those of
    the functions it is nested in (a closure sees one call's values too)."""
    names: set[str] = set()
    for scope in _scopes(fn):
        names |= (scope.local_names | set(scope.params)) - scope.global_names
    names.discard("self")
    names.discard("cls")
    return names


def reads_request_value(model: Model, fn: Function, *nodes: cst.CSTNode | None) -> bool:
    """Does any of the expressions read a per-call name of ``fn`` (``request_names``) or a
    framework's request proxy (``flask.request``)?"""
    names = request_names(fn)
    for node in nodes:
        if node is None:
            continue
        for name in names_in(node):
            if name in names or model.imports.get(name) in REQUEST_PROXIES:
                return True
    return False


def _lock_like(node: cst.CSTNode) -> bool:
    text = (dotted(node) or "").lower()
    return any(word in text for word in LOCK_WORDS)


class _Placed(Protocol):
    """Anything placed in a function's blocks like a ``Binding`` (a rule's own store record)."""

    @property
    def branch(self) -> tuple[int, ...]: ...


def under_lock(fn: Function, binding: Binding | _Placed) -> bool:
    """Is the binding in the body of a ``with``/``async with`` over a lock in ``fn``?"""
    import libcst as cst

    if not binding.branch:
        return False
    inside = set(binding.branch)
    stack: list[cst.CSTNode] = [fn.node.body]
    while stack:
        node = stack.pop()
        if (
            isinstance(node, cst.With)
            and id(node.body) in inside
            and any(_lock_like(item.item.func if isinstance(item.item, cst.Call) else item.item) for item in node.items)
        ):
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(children(node))
    return False


def reads_names(fn: Function, names: set[str] | frozenset[str]) -> str | None:
    """The first of the module-level ``names`` that ``fn``'s body reads (not counting names it
    binds itself, attribute names, or nested definitions), or None. Walks the body, so callers
    use it only for the few functions and names a finding is about."""
    import libcst as cst

    wanted = {n for n in names if n in fn.global_names or (n not in fn.local_names and n not in fn.params)}
    if not wanted:
        return None
    stack: list[cst.CSTNode] = [fn.node.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            if node.value in wanted:
                return node.value
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue  # nested definitions are functions of their own
        if type(node) is cst.Attribute:
            stack.append(node.value)
            continue
        stack.extend(children(node))
    return None


SESSION_WORDS = ("session", "user", "thread", "conversation", "chat", "context_id", "tenant")


def session_factory(model: Model, fn: Function) -> PerRequest | None:
    """A function that builds per session: not run once, and it takes a session, user or
    thread id (``def make_agent(session_id): ...``), whoever calls it."""
    if _cached(fn) or _runs_once(model, fn):
        return None
    if any(any(word in param.lower() for word in SESSION_WORDS) for param in fn.params):
        return PerRequest("session-factory", fn)
    return None
