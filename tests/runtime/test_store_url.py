"""``backend_from_url`` / ``store_from_env``: the store is configuration (``DUPGUARD_STORE``).

Each URL builds the real store (a SQLite file, a running ``redis-server``, a PostgreSQL cluster),
one per URL and process, and the stores it returns keep records as the backend they name does:
a key claimed through one URL is busy for another object built from the same URL.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dupguard.runtime import (
    MemoryBackend,
    PostgresBackend,
    RedisBackend,
    SQLiteBackend,
    backend_from_url,
    store_from_env,
)
from dupguard.runtime.backends.memory import default_backend


def test_memory_is_the_process_wide_default(monkeypatch):
    monkeypatch.delenv("DUPGUARD_STORE", raising=False)
    assert store_from_env() is default_backend()
    assert backend_from_url("memory:") is default_backend()
    assert isinstance(store_from_env(), MemoryBackend)
    monkeypatch.setenv("DUPGUARD_STORE", "")
    assert store_from_env() is default_backend()


def test_sqlite_paths_relative_and_absolute(tmp_path, monkeypatch):
    absolute = tmp_path / "abs.db"
    store = backend_from_url(f"sqlite:///{absolute}")  # sqlite:////tmp/...: four slashes, absolute
    assert isinstance(store, SQLiteBackend)
    assert store.path == str(absolute) and absolute.exists()
    monkeypatch.chdir(tmp_path)
    relative = backend_from_url("sqlite:///rel.db")
    assert relative.path == "rel.db" and (tmp_path / "rel.db").exists()
    # one store per URL in a process: every helper naming it shares records and waiters
    assert backend_from_url(f"sqlite:///{absolute}") is store
    monkeypatch.setenv("DUPGUARD_STORE", f"sqlite:///{absolute}")
    assert store_from_env() is store
    assert store_from_env("OTHER_STORE", f"sqlite:///{absolute}") is store


def test_one_store_per_url_across_processes(tmp_path):
    """Two processes given the same URL share the records: a key one of them claims is busy
    for the other."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    code = (
        "import sys\n"
        "from dupguard.runtime import store_from_env\n"
        "claim = store_from_env().claim('k', lease=60)\n"
        "print(claim.status)\n"
    )
    env = {**os.environ, "DUPGUARD_STORE": url}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert (first.stdout.strip(), second.stdout.strip()) == ("acquired", "busy")


def test_redis_url(redis_url, monkeypatch):
    monkeypatch.setenv("DUPGUARD_STORE", redis_url)
    store = store_from_env()
    assert isinstance(store, RedisBackend)
    assert store.claim("url-key", lease=5).acquired
    assert not backend_from_url(redis_url).claim("url-key", lease=5).acquired


def test_postgres_url(postgres_dsn):
    parts = dict(item.split("=", 1) for item in postgres_dsn.split())
    url = f"postgresql://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"
    store = backend_from_url(url)
    assert isinstance(store, PostgresBackend)
    assert store.claim("url-key", lease=5).acquired
    assert not store.claim("url-key", lease=5).acquired


@pytest.mark.parametrize("url", ["mysql://db/x", "sqlite://", "sqlite:///", "", "/tmp/store.db"])
def test_a_url_that_names_no_store_says_which_do(url):
    with pytest.raises(ValueError, match="sqlite:///"):
        backend_from_url(url)


def test_not_a_string():
    with pytest.raises(TypeError):
        backend_from_url(None)  # type: ignore[arg-type]
