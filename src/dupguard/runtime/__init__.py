"""Runtime helpers that make agent tool calls execute once.

Standard library only, and names are resolved lazily so that ``import dupguard.runtime``
costs almost nothing and never imports libcst or any agent framework.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    # errors
    "DupguardError": "errors",
    "IdempotencyInProgress": "errors",
    "IdempotencyPayloadMismatch": "errors",
    "IdempotencyKeyMissing": "errors",
    "ConcurrentInvocationError": "errors",
    "ToolCallIdReused": "errors",
    "ToolLimitExceeded": "errors",
    "StaleBatchError": "errors",
    "LeaseLost": "errors",
    "OutcomeUnknown": "errors",
    "StoreError": "errors",
    "StoreConfigError": "errors",
    "NotOwnerError": "guard",
    "GuardTimeout": "guard",
    "TurnCompleted": "lease",
    # stores
    "MemoryBackend": "backends.memory",
    "SQLiteBackend": "backends.sqlite",
    "RedisBackend": "backends.redis",
    "PostgresBackend": "backends.postgres",
    "backend_from_url": "backends.url",
    "store_from_env": "backends.url",
    # once-per-key execution and leases
    "Idempotency": "idempotency",
    "idempotent": "idempotency",
    "MISSING": "idempotency",
    "ToolCallLedger": "ledger",
    "CallDecision": "ledger",
    "Lease": "lease",
    "turn_lease": "lease",
    "aturn_lease": "lease",
    # across processes: HTTP requests, queue messages, sessions
    "IdempotencyMiddleware": "http",
    "handle_once": "consumers",
    "ahandle_once": "consumers",
    "celery_once": "consumers",
    "Handled": "consumers",
    "session_lease": "sessions",
    "asession_lease": "sessions",
    # in-process guards
    "InvocationGuard": "guard",
    "Ticket": "guard",
    "TurnToolGuard": "turn_guard",
    "ToolPolicy": "turn_guard",
    "Reservation": "turn_guard",
    "TurnClock": "batch",
    "ToolBatch": "batch",
    "ToolResult": "batch",
    "ToolCall": "batch",
    "Orphan": "batch",
    "run_batch": "batch",
    "SessionRegistry": "registry",
    "dedupe_tools": "tools",
    "register_once": "tools",
    "similar": "similarity",
    "normalize_query": "similarity",
}

# written out for static analysers; tests/runtime checks it names exactly the lazy exports
__all__ = [
    "MISSING",
    "CallDecision",
    "ConcurrentInvocationError",
    "DupguardError",
    "GuardTimeout",
    "Handled",
    "Idempotency",
    "IdempotencyInProgress",
    "IdempotencyKeyMissing",
    "IdempotencyMiddleware",
    "IdempotencyPayloadMismatch",
    "InvocationGuard",
    "Lease",
    "LeaseLost",
    "MemoryBackend",
    "NotOwnerError",
    "Orphan",
    "OutcomeUnknown",
    "PostgresBackend",
    "RedisBackend",
    "Reservation",
    "SQLiteBackend",
    "SessionRegistry",
    "StaleBatchError",
    "StoreConfigError",
    "StoreError",
    "Ticket",
    "ToolBatch",
    "ToolCall",
    "ToolCallIdReused",
    "ToolCallLedger",
    "ToolLimitExceeded",
    "ToolPolicy",
    "ToolResult",
    "TurnClock",
    "TurnCompleted",
    "TurnToolGuard",
    "ahandle_once",
    "asession_lease",
    "aturn_lease",
    "backend_from_url",
    "celery_once",
    "dedupe_tools",
    "handle_once",
    "idempotent",
    "normalize_query",
    "register_once",
    "run_batch",
    "session_lease",
    "similar",
    "store_from_env",
    "turn_lease",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dupguard.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
