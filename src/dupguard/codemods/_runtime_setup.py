"""The module-level objects the runtime fixes share, added once after the imports.

The fixes that key work by a request (DUP501) or hold a session across workers (DUP101/DUP102)
need the same few objects, each bound once at module level, right after the imports:

* ``_store = store_from_env()``: the store, named by ``DUPGUARD_STORE`` (one process: memory;
  several workers: SQLite, Redis, PostgreSQL; docs/runtime.md);
* ``_guard = OpenAIAgentsGuard(ledger=ToolCallLedger(_store, scope=__name__))`` (or
  ``LlamaIndexGuard``): the framework adapter whose tools run once per request id;
* ``_chat_store = SQLAlchemyChatStore(...)``: LlamaIndex's persistent history, one engine for
  every session.

A fix asks for the ones it needs; those already bound the same way (by an earlier fix) are
reused, a name bound to anything else refuses the fix. Two fixes of one pass that add the
same objects make the same insertion, applied once (dupguard/edits.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ..fixes import Replacement, insert_after, insert_before

if TYPE_CHECKING:
    from ..fixes import FixContext
    from ..semantic.model import Model


@dataclass(frozen=True)
class Setup:
    """One module-level object: its name, its code, what it may already be bound to, and the
    imports its code needs."""

    name: str
    code: str
    callees: tuple[str, ...]
    imports: tuple[tuple[str, str | None], ...]


STORE = Setup(
    "_store",
    "store_from_env()",
    ("dupguard.runtime.store_from_env", "dupguard.runtime.backends.url.store_from_env"),
    (("dupguard.runtime", "store_from_env"),),
)

ADAPTERS = {
    "openai_agents": ("dupguard.runtime.adapters.openai_agents", "OpenAIAgentsGuard"),
    "llama_index": ("dupguard.runtime.adapters.llamaindex", "LlamaIndexGuard"),
}


def guard(framework: str, name: str = "_guard") -> Setup:
    module, cls = ADAPTERS[framework]
    return Setup(
        name,
        f"{cls}(ledger=ToolCallLedger(_store, scope=__name__))",
        (f"{module}.{cls}", f"dupguard.runtime.adapters.{cls}"),
        (("dupguard.runtime", "ToolCallLedger"), (module, cls)),
    )


def guard_for(model: Model, framework: str) -> Setup | None:
    """The adapter guard of ``framework``: ``_guard``, or ``_<framework>_guard`` when a module
    runs agents of two frameworks (``_guard`` is the other one's); None when both names are
    used for something else."""
    for name in ("_guard", f"_{framework}_guard"):
        candidate = guard(framework, name)
        if bound(model, candidate) is not None:
            return candidate
    return None


HISTORY_URL = 'os.environ.get("DUPGUARD_HISTORY_URL", "sqlite+aiosqlite:///chat_history.db")'
CHAT_STORE = Setup(
    "_chat_store",
    f'SQLAlchemyChatStore(\n{{indent}}table_name="llama_index_memory",\n{{indent}}async_database_uri={HISTORY_URL},\n)',
    ("llama_index.core.storage.chat_store.sql.SQLAlchemyChatStore",),
    (("os", None), ("llama_index.core.storage.chat_store.sql", "SQLAlchemyChatStore")),
)


def bound(model: Model, setup: Setup) -> bool | None:
    """True when the module binds ``setup.name`` once, at module level, to ``setup``'s kind of
    object; False when the name is free; None when it is used for something else."""
    found = [b for b in model.bindings if b.target == setup.name]
    if not found:
        taken = (
            setup.name in model.imports
            or setup.name in model.classes
            or any(f.name == setup.name for f in model.functions)
        )
        return None if taken else False
    if len(found) == 1:
        b = found[0]
        if b.scope == "module" and b.value_call is not None and b.value_call.callee in setup.callees:
            return True
    return None


def after_imports(module: cst.Module) -> int:
    """Index after the module's leading imports (and docstring, and ``from __future__``)."""
    index = 0
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            index = i + 1
        elif i == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr):
            index = 1
        else:
            break
    return index


def setup(ctx: FixContext, *needed: Setup) -> tuple[tuple[Replacement, ...], list[tuple[str, str | None]]] | str:
    """The replacement that adds the ``needed`` objects not bound yet and the imports they need
    (for the caller's one ``add_imports``, so that its own imports join the same lines), or the
    reason a name cannot be used."""
    model, module = ctx.model, ctx.module
    missing = []
    for item in needed:
        state = bound(model, item)
        if state is None:
            return f"the name `{item.name}` is already used in this module"
        if not state:
            missing.append(item)
    if not missing:
        return (), []
    config = module.config_for_parsing
    imports = [imp for item in missing for imp in item.imports]
    statements = [
        cst.parse_statement(
            f"{item.name} = {item.code.format(indent=module.default_indent)}\n".replace("\n", module.default_newline),
            config=config,
        )
        for item in missing
    ]
    blank = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(""), comment=None)
    statements[0] = statements[0].with_changes(leading_lines=[blank])
    # after the imports, and after the objects an earlier fix added (``_guard`` uses ``_store``)
    present = [i for i, stmt in enumerate(module.body) if _binds(stmt, SETUP_NAMES)]
    if present:
        statements[0] = statements[0].with_changes(leading_lines=[])
        return (insert_after(module.body[max(present)], *statements),), imports
    index = after_imports(module)
    if index < len(module.body):
        placed = insert_before(module.body[index], *statements)
    else:
        placed = insert_after(module.body[-1], *statements)
    return (placed,), imports


SETUP_NAMES = frozenset({"_store", "_guard", "_chat_store", *(f"_{f}_guard" for f in ADAPTERS)})


def _binds(stmt: cst.CSTNode, names: frozenset[str]) -> bool:
    """Is ``stmt`` a top-level ``name = ...`` of one of ``names``?"""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value in names
    )
