"""A store named by a URL, so that where an application keeps its keys is configuration.

The code ``dupguard fix`` writes, and the examples in docs/runtime.md, build their store with
``store_from_env()``: the same file then runs on one process with the default in-memory store,
on several uvicorn workers of one host with SQLite, and on several hosts with Redis or
PostgreSQL, by setting ``DUPGUARD_STORE``:

=========================================  ==========================================
``memory:`` (the default)                  :func:`~dupguard.runtime.backends.default_backend`, one process
``sqlite:///relative/path.db``             :class:`~dupguard.runtime.SQLiteBackend`, processes on one host
``sqlite:////absolute/path.db``            (three slashes, then the path: SQLAlchemy's spelling)
``redis://host:6379/0``, ``rediss://…``,   :class:`~dupguard.runtime.RedisBackend` (the URL as redis-py
``unix:///path/redis.sock``                reads it)
``postgresql://user@host/db``,             :class:`~dupguard.runtime.PostgresBackend` (a libpq URI)
``postgres://…``
=========================================  ==========================================

One backend per URL and process: every helper of a process that names the same URL shares
one store object (one connection pool, one set of in-process waiters, which wake each other at
once), and a process forked after the first call builds its own rather than inherit its
parent's connections. A URL that names no store raises ``ValueError`` saying which schemes
there are; the driver of a store that is not installed raises ``ImportError`` naming the extra.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import Backend

__all__ = ["DEFAULT_STORE", "STORE_VARIABLE", "backend_from_url", "store_from_env"]

STORE_VARIABLE = "DUPGUARD_STORE"
DEFAULT_STORE = "memory:"
SCHEMES = ("memory:", "sqlite:///", "redis://", "rediss://", "unix://", "postgresql://", "postgres://")

_built: dict[tuple[str, int], Backend] = {}
_lock = threading.Lock()


def _build(url: str) -> Backend:
    if url in ("memory:", "memory://"):
        from .memory import default_backend

        return default_backend()
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :].split("?", 1)[0]
        if not path:
            raise ValueError(f"{url!r} names no file: write sqlite:///relative.db or sqlite:////absolute.db")
        from .sqlite import SQLiteBackend

        return SQLiteBackend(path)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisBackend

        return RedisBackend(url)
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresBackend

        return PostgresBackend(url)
    raise ValueError(f"{url!r} is not a store URL; use one of: {', '.join(SCHEMES)}")


def backend_from_url(url: str) -> Backend:
    """The store ``url`` names (see the module docstring), one per URL and process."""
    if not isinstance(url, str):
        raise TypeError(f"a store URL is a str, not {type(url).__name__}")
    url = url.strip()
    key = (url, os.getpid())
    backend = _built.get(key)
    if backend is None:
        with _lock:
            backend = _built.get(key)
            if backend is None:
                backend = _built[key] = _build(url)
    return backend


def store_from_env(variable: str = STORE_VARIABLE, default: str = DEFAULT_STORE) -> Backend:
    """The store the environment variable ``variable`` (``DUPGUARD_STORE``) names, or ``default``
    (``memory:``: one process) when it is unset or empty. Set it to a shared store
    (``sqlite:///…``, ``redis://…``, ``postgresql://…``) when the application runs more than
    one process: keys, leases and tool-call records in memory are invisible to the others."""
    return backend_from_url(os.environ.get(variable) or default)
