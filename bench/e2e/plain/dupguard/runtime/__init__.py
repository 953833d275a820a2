"""``dupguard.runtime`` as plain equivalents: nothing is keyed, leased or recorded."""

from __future__ import annotations

import contextlib
from typing import Any


def store_from_env(*_args: Any, **_kwargs: Any) -> None:
    return None


class ToolCallLedger:
    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass


@contextlib.asynccontextmanager
async def asession_lease(*_args: Any, **_kwargs: Any):
    yield None


@contextlib.contextmanager
def session_lease(*_args: Any, **_kwargs: Any):
    yield None


_registered: set[tuple[int, type]] = set()


def register_once(target: Any, handler: Any, *, method: str = "add_handler") -> bool:
    """Register one handler of each type per target, as an app would at startup."""
    key = (id(target), type(handler))
    if key in _registered:
        return False
    _registered.add(key)
    getattr(target, method)(handler)
    return True
