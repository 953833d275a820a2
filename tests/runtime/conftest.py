"""Fixtures for the runtime tests: stores, and real ``redis-server`` and PostgreSQL servers.

``redis_server`` (session) starts ``redis-server`` on a free port without persistence, in a
temporary directory, and stops it at the end. ``postgres_server`` (session) makes a
throwaway PostgreSQL cluster (``initdb`` + ``pg_ctl``, see ``pgserver.py``) on a free port and
removes it at the end. When a server (or its client package) is missing the tests that need
it are skipped locally and fail on CI (``CI=true``), where ``.ci/run`` installs them: a CI run
must never pass by skipping them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from pgserver import PostgresServer
from pgserver import missing as postgres_missing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_redis() -> None:
    """Skip (locally) or fail (on CI) when a real Redis cannot be run."""
    reason = None
    if shutil.which("redis-server") is None:
        reason = "redis-server is not on PATH (apt-get install redis-server)"
    else:
        try:
            import redis  # noqa: F401
        except ImportError:
            reason = "the redis package is missing (pip install 'dupguard[test]')"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis tests cannot run on CI: {reason}")
        pytest.skip(reason)


class RedisServer:
    """A ``redis-server`` child process on a fixed port and directory, restartable."""

    def __init__(self, directory: Path, *options: str, port: int | None = None) -> None:
        self.directory = directory
        self.options = options or ("--save", "", "--appendonly", "no")
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                *self.options,
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            if self.ping():
                return self
            time.sleep(0.01)
        raise RuntimeError("redis-server did not answer PING within 10s")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: a crash, nothing is flushed beyond what the server already wrote."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                self.kill()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory):
    require_redis()
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url


@pytest.fixture
def make_redis_server(tmp_path: Path):
    """Start extra servers a test may crash and restart; all are stopped afterwards."""
    require_redis()
    servers: list[RedisServer] = []

    def make(*options: str) -> RedisServer:
        server = RedisServer(tmp_path / f"redis{len(servers)}", *options)
        servers.append(server)
        return server.start()

    yield make
    for server in servers:
        server.stop()


def require_postgres() -> None:
    """Skip (locally) or fail (on CI) when a real PostgreSQL cannot be run."""
    reason = postgres_missing()
    if reason is None:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            reason = "the psycopg package is missing (pip install 'dupguard[test]')"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL tests cannot run on CI: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server():
    require_postgres()
    server = PostgresServer().start()
    yield server
    server.cleanup()


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    return postgres_server.dsn


@pytest.fixture
def make_postgres_server():
    """Start extra clusters a test may crash and restart; all are removed afterwards."""
    require_postgres()
    servers: list[PostgresServer] = []

    def make(*settings: str) -> PostgresServer:
        server = PostgresServer(*settings)
        servers.append(server)
        return server.start()

    yield make
    for server in servers:
        server.cleanup()


def make_backend(kind: str, request: pytest.FixtureRequest, tmp_path: Path):
    """A fresh store of ``kind``; Redis ones get a unique prefix on the session server,
    PostgreSQL ones their own tables in the session cluster."""
    from dupguard.runtime import MemoryBackend, PostgresBackend, RedisBackend, SQLiteBackend

    if kind == "memory":
        return MemoryBackend()
    if kind == "sqlite":
        return SQLiteBackend(tmp_path / "store.sqlite3")
    if kind == "postgres":
        return PostgresBackend(request.getfixturevalue("postgres_dsn"), table=f"test_{uuid.uuid4().hex[:8]}")
    url = request.getfixturevalue("redis_url")
    return RedisBackend(url, prefix=f"test:{uuid.uuid4().hex[:8]}:")


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path):
    store = make_backend(request.param, request, tmp_path)
    yield store
    store.close()


@pytest.fixture(params=["sqlite", "redis"])
def shared_backend(request: pytest.FixtureRequest, tmp_path: Path):
    """A store other processes can open too: ``(backend, spec)``, where ``spec`` is the JSON
    a child process needs to open the same store."""
    store = make_backend(request.param, request, tmp_path)
    if request.param == "sqlite":
        spec = {"kind": "sqlite", "where": store.path}
    else:
        spec = {"kind": "redis", "where": request.getfixturevalue("redis_url"), "prefix": store.prefix}
    yield store, spec
    store.close()
