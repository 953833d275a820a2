"""The ids a fix keys its work by, found where real handlers keep them.

Two kinds, never mixed up:

* a **request id** names one user action, and a retry or a re-sent request of it carries the
  same one (DUP501 keys the retried run by it): a parameter (``request_id``,
  ``idempotency_key``, ``message_id``, ``event_id``, ``delivery_id``, ``job_id``, ``task_id``,
  ``turn_id``, ``run_id``, a FastAPI ``x_request_id: str = Header(...)``), a field of the
  request body model (``req.request_id`` for ``req: ChatRequest``, a pydantic model or dataclass
  of this module), a header the handler reads (``request.headers["Idempotency-Key"]``,
  ``request.headers.get("x-request-id")``), a body key it reads (``payload["request_id"]``), the
  id of a bound Celery task (``self.request.id``), or the id of the queue message it handles
  (``message.message_id``, ``job.id``: read by the handler already). A LangGraph run is keyed by
  its ``thread_id`` plus its ``run_id``. Never a tool-call id (``tool_call_id``, ``call_id``):
  the model issues a new one on every response, so a retried turn would not find it;
* a **session id** names a conversation that outlives the request (DUP101/DUP102 keep one
  state per session by it): ``session_id``, ``conversation_id``, ``thread_id``, ``chat_id``,
  else ``user_id``, as a parameter or a body field.

Each is returned as the source text that reads it in the function, with whether it may be
``None`` (an ``Optional`` annotation or default, a ``.get(...)``), which the fixes refuse to key by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ..semantic.nodes import dotted, token_text

if TYPE_CHECKING:
    from ..semantic.model import Function, Model

# in the order they are preferred: the client's own key first
REQUEST_ID_NAMES = (
    "idempotency_key",
    "request_id",
    "x_request_id",
    "x_idempotency_key",
    "message_id",
    "event_id",
    "delivery_id",
    "job_id",
    "task_id",
    "turn_id",
    "correlation_id",
    "x_correlation_id",
)
# ids the model issues per response: keying a retried turn by one keys nothing (issue 16)
TOOL_CALL_IDS = (
    "tool_call_id",
    "call_id",
    "tool_use_id",
    "invocation_id",
    "function_call_id",
    "response_id",
    "tool_id",
)
HEADERS = ("idempotency-key", "x-idempotency-key", "x-request-id", "request-id", "x-correlation-id")
MESSAGE_NAMES = ("message", "msg", "job", "event", "delivery", "record", "envelope")
MESSAGE_ID_ATTRS = ("message_id", "id", "delivery_tag", "event_id", "messageId")
SESSION_ID_NAMES = ("session_id", "conversation_id", "thread_id", "chat_id", "user_id")
MODEL_BASES = ("BaseModel", "pydantic", "SQLModel", "Schema", "Struct")


@dataclass(frozen=True)
class IdSource:
    expr: str  # the code that reads the id inside the function: ``req.request_id``
    what: str  # how a message names it: "the body field `request_id`"
    optional: bool = False  # may be None


def _optional(annotation: cst.BaseExpression | None, default: cst.BaseExpression | None) -> bool:
    if isinstance(default, cst.Name) and default.value == "None":
        return True
    if isinstance(default, cst.Call) and default.args:  # ``Header(None)``, ``Header(default=None)``
        first = next((a for a in default.args if a.keyword is None or a.keyword.value == "default"), None)
        if first is not None and isinstance(first.value, cst.Name) and first.value.value == "None":
            return True
    if annotation is None:
        return False
    code = cst.Module([]).code_for_node(annotation).replace(" ", "").strip("\"'")
    if code.startswith(("Optional[", "typing.Optional[")):
        return True
    if code.startswith(("Union[", "typing.Union[")):
        return "None" in code[code.index("[") + 1 : -1].split(",")
    return "None" in code.split("|")


def _body_fields(module: cst.Module, model: Model, class_name: str) -> dict[str, bool]:
    """name → optional, for the annotated fields of a request-body class of this module (a
    pydantic model, a dataclass, an attrs/msgspec class): ``request_id: str``."""
    bases = model.classes.get(class_name)
    if bases is None:
        return {}
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and stmt.name.value == class_name:
            decorated = any(
                "dataclass" in (dotted(d.decorator) or dotted(getattr(d.decorator, "func", None)) or "")
                or "define" in (dotted(d.decorator) or "")
                for d in stmt.decorators
            )
            if not decorated and not any(any(word in base for word in MODEL_BASES) for base in bases):
                return {}
            fields: dict[str, bool] = {}
            for line in stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ():
                if isinstance(line, cst.SimpleStatementLine):
                    for small in line.body:
                        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                            fields[small.target.value] = _optional(small.annotation.annotation, small.value)
            return fields
    return {}


def _params(fn: Function) -> list[tuple[str, cst.BaseExpression | None, cst.BaseExpression | None]]:
    return [(p, fn.param_annotations.get(p), fn.param_defaults.get(p)) for p in fn.params]


def _from_params(module: cst.Module, model: Model, fn: Function, names: tuple[str, ...]) -> IdSource | None:
    """The first of ``names`` (in their order) that is a parameter, or a field of a body-model
    parameter (``req.user_id`` for ``req: ChatRequest``)."""
    params = _params(fn)
    bodies = []
    for name, annotation, _default in params:
        head = dotted(annotation) if annotation is not None else None
        if head is not None and "." not in head:
            fields = _body_fields(module, model, head)
            if fields:
                bodies.append((name, head, fields))
    for wanted in names:
        for name, annotation, default in params:
            if name == wanted:
                return IdSource(name, f"the parameter `{name}`", _optional(annotation, default))
        for name, head, fields in bodies:
            if wanted in fields:
                return IdSource(f"{name}.{wanted}", f"the body field `{wanted}` of `{name}: {head}`", fields[wanted])
    return None


class _Reads(cst.CSTVisitor):
    """What the function body reads: ``x["key"]`` / ``x.get("key")`` with a string key (headers
    and body keys), and ``name.attr`` chains."""

    def __init__(self) -> None:
        self.keyed: list[tuple[cst.BaseExpression, str, bool]] = []  # (node, key, via .get)
        self.attributes: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # nested functions read their own ids

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = node.slice[0].slice.value
            if isinstance(key, cst.SimpleString):
                self.keyed.append((node, key.evaluated_value if isinstance(key.evaluated_value, str) else "", False))

    def visit_Call(self, node: cst.Call) -> None:
        if (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "get"
            and node.args
            and isinstance(node.args[0].value, cst.SimpleString)
        ):
            value = node.args[0].value.evaluated_value
            self.keyed.append((node, value if isinstance(value, str) else "", len(node.args) < 2))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        text = dotted(node)
        if text:
            self.attributes.add(text)


def _reads(fn: Function) -> _Reads:
    reads = _Reads()
    fn.node.body.visit(reads)
    return reads


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def request_id(module: cst.Module, model: Model, fn: Function) -> IdSource | None:
    """The request id of ``fn`` (see the module docstring), or None."""
    found = _from_params(module, model, fn, REQUEST_ID_NAMES)
    if found is not None:
        return found
    reads = _reads(fn)
    for node, key, via_get in reads.keyed:
        lowered = key.lower()
        if lowered in HEADERS and "header" in token_text(node).lower():
            return IdSource(_code(node), f"the header `{key}`", via_get)
    for node, key, via_get in reads.keyed:
        if key in REQUEST_ID_NAMES:
            return IdSource(_code(node), f"the body key `{key}`", via_get)
    if fn.params and fn.params[0] == "self" and _bound_celery_task(model, fn):
        return IdSource("self.request.id", "the Celery task's id (`self.request.id`)")
    for name in MESSAGE_NAMES:
        if name in fn.params or name in fn.local_names:
            for attr in MESSAGE_ID_ATTRS:
                if f"{name}.{attr}" in reads.attributes:
                    return IdSource(f"{name}.{attr}", f"the id of the queue message `{name}`")
    run = _from_params(module, model, fn, ("run_id",))
    if run is not None:
        thread = _from_params(module, model, fn, ("thread_id",))
        if thread is not None:
            return IdSource(
                f'f"{{{thread.expr}}}:{{{run.expr}}}"',
                f"the LangGraph thread and run (`{thread.expr}`, `{run.expr}`)",
                thread.optional or run.optional,
            )
        return run
    return None


def _bound_celery_task(model: Model, fn: Function) -> bool:
    for dec in fn.decorators:
        text = (dec.callee or dec.dotted or "").rsplit(".", 1)[-1]
        if text in ("task", "shared_task") and dec.call is not None:
            bind = dec.call.kw("bind")
            if bind is not None and getattr(bind.node, "value", None) == "True":
                return True
    return False


def tool_call_id_only(fn: Function) -> str | None:
    """The per-turn id parameter (a tool-call, invocation or response id: DUP506) of a function
    that has no request id, for the refusal."""
    return next((p for p in TOOL_CALL_IDS if p in fn.params), None)


def session_id(module: cst.Module, model: Model, fn: Function) -> IdSource | None:
    """The session (or user) id of ``fn``: a conversation that outlives the request, or None."""
    return _from_params(module, model, fn, SESSION_ID_NAMES)
