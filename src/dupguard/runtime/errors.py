"""The runtime's error hierarchy.

Every error says whether retrying the same operation can succeed (``retryable``), so that
callers and retry libraries can tell "try again later" from "this will never work".
"""

from __future__ import annotations


class DupguardError(Exception):
    """Base of every error raised by ``dupguard.runtime``."""

    retryable: bool = False


class IdempotencyInProgress(DupguardError):
    """Another caller holds the key and has not finished; retry after it completes."""

    retryable = True


class IdempotencyPayloadMismatch(DupguardError):
    """The key was already used with a different payload: a client bug, never retry."""


class IdempotencyKeyMissing(DupguardError):
    """The key function returned nothing usable (None or an empty string)."""


class ConcurrentInvocationError(DupguardError):
    """An object that must not run concurrently (an agent) is already running."""

    retryable = True


class ToolCallIdReused(DupguardError):
    """A tool-call id was seen before with different arguments."""


class ToolLimitExceeded(DupguardError):
    """A per-tool or per-turn call limit was reached."""


class StaleBatchError(DupguardError):
    """A tool batch from an older turn tried to commit its results."""


class LeaseLost(DupguardError):
    """The lease expired or was taken over; the former owner must stop writing."""


class OutcomeUnknown(DupguardError):
    """The key's last holder stopped (killed, or stalled past its lease) before recording whether
    its call ran, and ``Idempotency(on_abandoned="raise")`` will not run it again: nobody knows
    whether the side effect happened. Every caller gets this until someone finds out and
    resolves the key: ``Idempotency.resolve(key, result, fence=exc.fence)`` (it ran) or
    ``Idempotency.release(key, fence=exc.fence)`` (it did not: the next call runs it).

    ``key`` is the caller's key, ``fence`` the fence of the holder whose outcome is unknown.
    Not retryable: retrying gives the same answer until the key is resolved.
    """

    def __init__(self, message: str, *, key: str | None = None, fence: int | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.fence = fence


class StoreError(DupguardError):
    """The backing store failed (connection refused, timeout, corrupt row)."""

    retryable = True


class StoreConfigError(StoreError):
    """The store is set up so that it cannot keep records as promised (a Redis server that may
    evict them): nothing was run; fix the store's configuration, retrying will not help."""

    retryable = False


__all__ = [
    "ConcurrentInvocationError",
    "DupguardError",
    "IdempotencyInProgress",
    "IdempotencyKeyMissing",
    "IdempotencyPayloadMismatch",
    "LeaseLost",
    "OutcomeUnknown",
    "StaleBatchError",
    "StoreConfigError",
    "StoreError",
    "ToolCallIdReused",
    "ToolLimitExceeded",
]
