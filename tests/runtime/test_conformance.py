"""One conformance suite (``dupguard.runtime.conformance``), run on every backend against real
servers: memory, SQLite, a real redis-server and a real PostgreSQL cluster.

Each check is its own test, ``test_conformance[<backend>-<check>]``. The checks that cannot
apply are not generated: the process checks for the memory store (its records live in one
process) and the server crash for the stores without a server (memory, SQLite); a test below
checks that the suite itself reports those as not applicable. The crash check gets a server
of its own, durable (Redis with ``appendfsync always``; PostgreSQL as configured by default),
so that the session servers other tests use are never restarted.

``postgres-sync-off`` is ``PostgresBackend(..., synchronous_commit="off")``: the server answers
before its WAL flush, and every rule of the contract still holds between live clients. The
crash check is not run on it: surviving a crash of the server with the last claims intact is
exactly what that setting gives up (docs/runtime.md; test_round_trips.py checks the setting is
applied).
"""

from __future__ import annotations

import functools
import uuid

import pytest

from dupguard.runtime import MemoryBackend, PostgresBackend, RedisBackend, SQLiteBackend
from dupguard.runtime.conformance import CHECKS, Conformance, NotApplicable

KINDS = ("memory", "sqlite", "redis", "postgres", "postgres-sync-off")
PROCESS_CHECKS = {"processes_one_winner", "killed_holder"}
SERVER_CHECKS = {"server_restart"}


def applicable(kind: str, check: str) -> bool:
    if kind == "memory" and check in PROCESS_CHECKS:
        return False
    return not (kind in ("memory", "sqlite", "postgres-sync-off") and check in SERVER_CHECKS)


CASES = [
    pytest.param(kind, check, id=f"{kind}-{check}") for kind in KINDS for check in CHECKS if applicable(kind, check)
]


def factory_for(kind: str, request: pytest.FixtureRequest, tmp_path, *, server=None):
    """A picklable factory of clients of one fresh store of ``kind``."""
    unique = uuid.uuid4().hex[:8]
    if kind == "memory":
        store = MemoryBackend()
        return lambda: store
    if kind == "sqlite":
        return functools.partial(SQLiteBackend, str(tmp_path / "conformance.sqlite3"))
    if kind == "redis":
        url = server.url if server is not None else request.getfixturevalue("redis_url")
        return functools.partial(RedisBackend, url, prefix=f"conf:{unique}:")
    dsn = server.dsn if server is not None else request.getfixturevalue("postgres_dsn")
    if kind == "postgres-sync-off":
        return functools.partial(PostgresBackend, dsn, table=f"conf_{unique}", synchronous_commit="off")
    return functools.partial(PostgresBackend, dsn, table=f"conf_{unique}")


@pytest.mark.parametrize("kind,check", CASES)
def test_conformance(kind, check, request, tmp_path):
    server = None
    if check in SERVER_CHECKS:
        if kind == "redis":
            server = request.getfixturevalue("make_redis_server")("--appendonly", "yes", "--appendfsync", "always")
        else:
            server = request.getfixturevalue("make_postgres_server")()
    suite = Conformance(factory_for(kind, request, tmp_path, server=server), server=server)
    suite.run_check(check)  # NotApplicable here is a failure: only applicable cases are generated


def test_the_suite_says_which_checks_do_not_apply(tmp_path):
    store = MemoryBackend()
    report = Conformance(lambda: store).run()
    assert set(report) == set(CHECKS)
    skipped = {name for name, outcome in report.items() if outcome != "passed"}
    assert skipped == PROCESS_CHECKS | SERVER_CHECKS
    assert "local_only" in report["processes_one_winner"] and "server=" in report["server_restart"]
    with pytest.raises(NotApplicable):
        Conformance(functools.partial(SQLiteBackend, str(tmp_path / "s.db"))).run_check("server_restart")
    with pytest.raises(ValueError, match="no conformance check"):
        Conformance(lambda: store).run_check("nonsense")


class ForgetsFences(MemoryBackend):
    """A broken store: completion never checks the fence (a late write lands)."""

    def complete(self, key, fence, result=None, *, ttl):
        with self._lock:
            self._records.pop(key, None)
        super().complete(key, fence, result, ttl=ttl)


class TwoWinners(MemoryBackend):
    """A broken store: a check-then-act across two steps, so concurrent claims both win."""

    def claim(self, key, *, lease, payload=None, **options):
        found = self.get(key)
        if found is None:
            import time

            time.sleep(0.01)  # the window every check-then-act has
            with self._lock:
                self._records.pop(key, None)
        return super().claim(key, lease=lease, payload=payload, **options)


@pytest.mark.parametrize(
    "broken,failing",
    [
        (ForgetsFences, {"expiry_takeover_and_fencing", "late_completion_rejected", "renew_and_repeated_complete"}),
        (TwoWinners, {"threads_one_winner", "event_loops_one_winner"}),
    ],
)
def test_the_suite_fails_broken_backends(broken, failing):
    store = broken()
    with pytest.raises(AssertionError) as info:
        Conformance(lambda: store).run([c for c in CHECKS if c not in PROCESS_CHECKS | SERVER_CHECKS])
    message = str(info.value)
    for check in failing:
        assert f"\n{check}:" in message, message


FACTORIES = """
import os
from dupguard.runtime import MemoryBackend, SQLiteBackend


def sqlite():
    return SQLiteBackend(os.environ["CONFORMANCE_DB"])


class Forgetful(MemoryBackend):
    def complete(self, key, fence, result=None, *, ttl):
        with self._lock:
            self._records.pop(key, None)  # a late write lands: fencing is broken
        super().complete(key, fence, result, ttl=ttl)


_one = Forgetful()


def forgetful():
    return _one
"""


def test_the_command_line_runs_the_suite_on_a_users_factory(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "user_stores.py").write_text(FACTORIES)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), CONFORMANCE_DB=str(tmp_path / "s.db"))

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "dupguard.runtime", "conformance", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    ok = cli("user_stores:sqlite", "--check", "claim_busy_done", "--check", "processes_one_winner")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.splitlines() == ["claim_busy_done: passed", "processes_one_winner: passed"]

    bad = cli("user_stores:forgetful", "--check", "late_completion_rejected", "--check", "server_restart")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert bad.stdout.startswith("late_completion_rejected: FAILED: AssertionError")
    assert "server_restart: not applicable" in bad.stdout

    for args in (["nonsense"], ["no_such_module:f"], ["user_stores:sqlite", "--check", "nope"]):
        usage = cli(*args)
        assert usage.returncode == 2 and usage.stderr.startswith("error:") and "Traceback" not in usage.stderr
