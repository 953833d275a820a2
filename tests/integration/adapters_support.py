"""Helpers for the adapter integration tests (real framework packages, scripted models).

A framework that is not installed skips its tests, except under CI (``CI=true``), where a
missing framework is a failure: CI installs the extras, so a skip there would hide a broken
install step.
"""

from __future__ import annotations

import importlib
import os
import threading

import pytest


def require(module: str):
    """``pytest.importorskip`` that refuses to skip when ``CI=true``."""
    if os.environ.get("CI", "").lower() == "true":
        try:
            return importlib.import_module(module)
        except ImportError as exc:  # pragma: no cover - only on a broken CI install
            pytest.fail(f"CI=true but {module!r} cannot be imported: {exc}", pytrace=False)
    return pytest.importorskip(module)


class SideEffects:
    """A thread-safe counter of real tool executions (the side effect we must not repeat)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: list[dict] = []

    def record(self, **kwargs) -> int:
        with self._lock:
            self.calls.append(kwargs)
            return len(self.calls)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.calls)


SHAPES = ["new-turn-per-attempt", "retry-loop-inside-the-turn"]


async def retry_request(guard, turn_id: str, attempt, *, shape: str, attempts: int = 2):
    """Call ``attempt(n, turn_id)`` until one returns, as a caller retrying a request does.

    ``shape`` (one of :data:`SHAPES`): every attempt is its own turn, with the request's
    ``turn_id`` (a client re-sending the request; a redelivered queue message), or the
    handler runs a retry loop inside one ``guard.turn(turn_id)`` and passes no id to the
    attempts. Returns ``(result, errors)``: the exceptions of the failed attempts.
    """
    errors: list[BaseException] = []

    async def loop(tid):
        for n in range(attempts):
            try:
                return await attempt(n, tid)
            except Exception as exc:  # the caller retries on any failure
                errors.append(exc)
        raise AssertionError(f"all {attempts} attempts failed: {errors!r}")

    if shape == SHAPES[0]:
        return await loop(turn_id), errors
    async with guard.turn(turn_id):
        return await loop(None), errors
