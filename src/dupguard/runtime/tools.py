"""Small fixes the safe autofixes insert: duplicate tools and repeated handler registration.

* ``tools = [search_tool, search_tool]`` (rule DUP301) makes the model see one tool twice, and some
  frameworks then emit or execute its calls twice: :func:`dedupe_tools` keeps the first of
  each name.
* ``llm.callback_manager.add_handler(MyHandler())`` inside a request handler (rule DUP401,
  "callbacks registered twice") adds one more handler per request, so every event is processed N times:
  :func:`register_once` registers a handler on a long-lived object only once.
"""

from __future__ import annotations

import functools
import threading
import types
import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import Any

__all__ = ["dedupe_tools", "register_once", "tool_name"]


def tool_name(tool: Any) -> str | None:
    """The name a framework shows the model for ``tool``, or ``None`` if it has none.

    Looks at, in order: a ``name`` attribute (LangChain, Strands, openai-agents, AutoGen
    tools), ``metadata.name`` (LlamaIndex), dict specs ``{"name": ...}`` and OpenAI's
    ``{"type": "function", "function": {"name": ...}}``, then ``__name__`` (plain functions).
    """
    if isinstance(tool, dict):
        name = tool.get("name")
        if not isinstance(name, str):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else None
        return name if isinstance(name, str) else None
    name = getattr(tool, "name", None)
    if isinstance(name, str) and name:
        return name
    metadata = getattr(tool, "metadata", None)
    name = getattr(metadata, "name", None)
    if isinstance(name, str) and name:
        return name
    name = getattr(tool, "__name__", None)
    return name if isinstance(name, str) and name else None


def dedupe_tools(
    tools: Iterable[Any],
    *,
    key: Callable[[Any], Hashable] | None = None,
    strict: bool = False,
) -> list:
    """Return ``tools`` without duplicates, keeping the first of each name, in order.

    ``key(tool)`` overrides how a tool is named (default :func:`tool_name`). A tool with no
    name is only dropped when the very same object appeared before. With ``strict=True`` two
    *different* objects with one name raise ``ValueError`` (rule DUP302: probably a naming bug,
    not a harmless repeat) instead of silently keeping the first.
    """
    seen: dict[Hashable, Any] = {}
    out = []
    for tool in tools:
        name = key(tool) if key is not None else tool_name(tool)
        marker: Hashable = ("name", name) if name is not None else ("id", id(tool))
        if marker in seen:
            if strict and seen[marker] is not tool:
                raise ValueError(f"two different tools are both named {name!r}")
            continue
        seen[marker] = tool
        out.append(tool)
    return out


# -- register_once ---------------------------------------------------------------------------

_lock = threading.RLock()  # re-entrant: a registration method may itself call register_once
# id(target) -> (reference to target, registered handler keys). A weak reference when the
# target allows it (the entry disappears with the target), a strong one otherwise.
_registered: dict[int, tuple[Any, set]] = {}


_BY_IDENTITY = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodWrapperType,
    functools.partial,
    type,
)


def _handler_key(handler: Any) -> Hashable:
    """What counts as "the same handler".

    Functions, lambdas, builtins and classes: identity. Bound methods: the same function on the
    same object (``obj.on_event`` creates a new bound-method object on every access, so identity
    would never match). Any other object — a handler *instance* such as ``MyHandler()`` — by its
    type: a fresh ``MyHandler()`` per request is exactly the bug, and two instances of one
    handler class on one callback manager almost always double-process events. Register
    deliberately different instances of one class directly, without this helper.
    """
    self_obj = getattr(handler, "__self__", None)
    func = getattr(handler, "__func__", None)
    if self_obj is not None and func is not None:
        return ("method", id(self_obj), func)
    if isinstance(handler, _BY_IDENTITY):
        return ("id", id(handler))
    return ("type", type(handler))


def _existing_keys(target: Any) -> set:
    """Handlers already on the target by other paths (e.g. LlamaIndex ``CallbackManager``
    keeps them in ``.handlers``)."""
    handlers = getattr(target, "handlers", None)
    if isinstance(handlers, (list, tuple)):
        return {_handler_key(h) for h in handlers}
    return set()


def register_once(target: Any, handler: Any, *, method: str = "add_handler") -> bool:
    """Call ``target.<method>(handler)`` unless the same handler was registered on ``target``
    before (by this function, or already present in ``target.handlers``).

    Returns True if it registered now. Thread-safe: two threads racing to register the same
    handler register it once. "Same" is defined by :func:`_handler_key` — identity for
    functions, (object, function) for bound methods, the class for handler instances. If the
    registration method raises, nothing is recorded.
    """
    register = getattr(target, method, None)
    if not callable(register):
        raise AttributeError(f"{type(target).__name__} has no method {method!r}")  # noqa: TRY004 (a missing attribute)
    handler_key = _handler_key(handler)
    with _lock:
        entry = _registered.get(id(target))
        if entry is not None and _deref(entry[0]) is not target:
            entry = None  # a dead target's id was reused
        keys = entry[1] if entry is not None else set()
        if handler_key in keys or handler_key in _existing_keys(target):
            return False
        register(handler)
        keys.add(handler_key)
        if entry is None:
            _registered[id(target)] = (_reference(target), keys)
        return True


def _reference(target: Any) -> Any:
    target_id = id(target)
    try:
        return weakref.ref(target, lambda _ref: _forget(target_id, _ref))
    except TypeError:
        return target


def _deref(reference: Any) -> Any:
    return reference() if isinstance(reference, weakref.ref) else reference


def _forget(target_id: int, ref: Any) -> None:
    with _lock:
        entry = _registered.get(target_id)
        if entry is not None and entry[0] is ref:
            del _registered[target_id]
