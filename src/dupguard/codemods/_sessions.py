"""What the DUP101/DUP102 fix turns a shared memory into, per use.

* **keyed by the session, across workers** (a memory the framework can keep in a store every
  worker reads, read by handlers that have a session or user id): the module-level object
  becomes a factory of the framework's persistent history keyed by that id,
  ``make_session(session_id)`` → ``SQLiteSession(session_id, <the same file>)`` for the OpenAI
  Agents SDK, ``Memory.from_defaults(session_id=session_id, ..., chat_store=_chat_store)`` for
  LlamaIndex (a ``ChatMemoryBuffer`` becomes the ``Memory`` that replaces it, on one
  ``SQLAlchemyChatStore`` whose database ``DUPGUARD_HISTORY_URL`` names); each handler builds
  the user's one (``session = make_session(req.user_id)``) and runs its turn under
  ``asession_lease(_store, req.user_id)``, so two turns of one conversation never interleave,
  whichever worker they reach;
* **private**, for a use inside a fan-out (``asyncio.gather(*(run(m, memory=memory) ...))``):
  each task gets a fresh object of its own, the shared value without the arguments that give it
  a shared store (``SQLiteSession("support")``, an in-memory database), so concurrent tasks
  never write to one history.

The catalog says which arguments key a memory (``session_kwargs``) and which give it a shared
store (``store_kwargs``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from ..semantic.catalog_data import ASYNC_FANOUT, THREAD_CALLS
from ..semantic.vocabulary import ASYNC_SPAWN_METHODS, THREAD_METHODS
from ._runtime_setup import CHAT_STORE, Setup

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.catalog import Entry

CHAT_MEMORY_BUFFER = "llama_index.core.memory.ChatMemoryBuffer"
LI_MEMORY = "llama_index.core.memory.Memory"
# ChatMemoryBuffer.from_defaults arguments that Memory.from_defaults takes the same way
MEMORY_KWARGS = ("token_limit", "tokenizer_fn")
PARAM = "session_id"


def _arg_index(call: cst.Call, key: str) -> int | None:
    """Index in ``call.args`` of the catalog argument ``key`` (a keyword, or a position)."""
    if not key.isdigit():
        return next((i for i, a in enumerate(call.args) if a.keyword is not None and a.keyword.value == key), None)
    positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
    return positional[int(key)] if len(positional) > int(key) else None


def _has_store(call: cst.Call, entry: Entry) -> bool:
    return any(_arg_index(call, key) is not None for key in entry.store_kwargs)


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


def keyed_form(
    value: cst.BaseExpression, entry: Entry | None
) -> tuple[cst.BaseExpression, tuple[Setup, ...], list] | None:
    """The framework's persistent history keyed by ``session_id``, built like ``value``: (the
    factory's return expression, the module-level objects it needs, the imports it needs), or
    None when dupguard knows no such form for it."""
    if entry is None or not entry.session_kwargs or not entry.store_kwargs or not isinstance(value, cst.Call):
        return None
    key = cst.Name(PARAM)
    if _has_store(value, entry):
        # the user's own store: only the key changes
        args = list(value.args)
        for name in entry.session_kwargs:
            index = _arg_index(value, name)
            if index is not None:
                args[index] = args[index].with_changes(value=key)
                return value.with_changes(args=args), (), []
        named = next((k for k in entry.session_kwargs if not k.isdigit()), None)
        if named is None:
            return None
        return value.with_changes(args=[_keyword(named, key), *args]), (), []
    names = set(entry.names)
    func = value.func
    from_defaults = isinstance(func, cst.Attribute) and func.attr.value == "from_defaults"
    if not from_defaults or any(a.keyword is None or a.star for a in value.args):
        return None
    if CHAT_MEMORY_BUFFER in names or LI_MEMORY in names:
        if CHAT_MEMORY_BUFFER in names and any(a.keyword.value not in MEMORY_KWARGS for a in value.args):  # type: ignore[union-attr]
            return None
        kept = [a for a in value.args if a.keyword is not None and a.keyword.value != "session_id"]
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        call = cst.Call(
            cst.Attribute(cst.Name("Memory"), cst.Name("from_defaults")),
            [_keyword("session_id", key), *kept, _keyword("chat_store", cst.Name(CHAT_STORE.name))],
        )
        return call, (CHAT_STORE,), [("llama_index.core.memory", "Memory")]
    return None


def private_form(value: cst.BaseExpression, entry: Entry | None) -> cst.BaseExpression:
    """``value`` without the arguments that give it a shared store: an object of its own."""
    if entry is None or not entry.store_kwargs or not isinstance(value, cst.Call):
        return value
    drop = {_arg_index(value, key) for key in entry.store_kwargs} - {None}
    if not drop:
        return value
    args = [a for i, a in enumerate(value.args) if i not in drop]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return value.with_changes(args=args)


def in_fanout(ctx: FixContext, node: cst.CSTNode, stop: cst.CSTNode) -> bool:
    """Is ``node`` inside the arguments of a call that starts concurrent tasks or threads
    (``asyncio.gather``, ``create_task``, ``executor.submit``...), below ``stop`` (its function)?"""
    model = ctx.model
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            return False
        if isinstance(ancestor, cst.Call):
            call = model.call_for_node(ancestor)
            if call is None:
                continue
            if call.callee in ASYNC_FANOUT or call.callee in THREAD_CALLS:
                return True
            if call.method in ASYNC_SPAWN_METHODS or call.method in THREAD_METHODS:
                return True
    return False


def lease_wrap(
    fn: cst.FunctionDef, line: cst.BaseStatement, lease: str, is_async: bool, config
) -> Callable[[cst.IndentedBlock], cst.IndentedBlock]:
    """The update of ``fn``'s body that puts ``line`` (``session = make_session(...)``) first
    (after a docstring) and the rest of the body under ``[async ]with <lease>:``."""

    def wrap(block: cst.IndentedBlock) -> cst.IndentedBlock:
        statements = list(block.body)
        head = []
        if statements and _is_docstring(statements[0]):
            head.append(statements.pop(0))
        item = cst.WithItem(cst.parse_expression(lease, config=config))
        first = statements[0] if statements else None
        first_lines: Sequence[cst.EmptyLine] = getattr(first, "leading_lines", ())
        if first is not None:
            statements[0] = first.with_changes(leading_lines=[])
        held = cst.With(
            items=[item],
            body=cst.IndentedBlock(body=statements or [cst.SimpleStatementLine([cst.Pass()])]),
            asynchronous=cst.Asynchronous() if is_async else None,
            leading_lines=first_lines,
        )
        return block.with_changes(body=[*head, line, held])

    return wrap


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
