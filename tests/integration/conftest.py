"""Fixtures and the async test runner for the adapter integration tests.

Coroutine tests run on a fresh event loop through ``asyncio.run`` (no pytest plugin needed).
"""

from __future__ import annotations

import asyncio
import inspect

import pytest
from adapters_support import SideEffects


@pytest.fixture
def effects() -> SideEffects:
    return SideEffects()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = inspect.signature(pyfuncitem.obj).parameters
        kwargs = {name: pyfuncitem.funcargs[name] for name in names}
        asyncio.run(pyfuncitem.obj(**kwargs))
        return True
    return None
