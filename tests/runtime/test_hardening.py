"""Runtime edge cases that once ran a side effect twice, or failed after it ran (issue 18, 11–15).

Each test runs on every backend where the case applies (the ``backend`` fixture: memory,
SQLite and a real ``redis-server``), because the bug was always one backend disagreeing with
another.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
import uuid
import warnings

import pytest

from dupguard.runtime import (
    Idempotency,
    Lease,
    MemoryBackend,
    SessionRegistry,
    SQLiteBackend,
    StoreConfigError,
    StoreError,
    ToolCallLedger,
    idempotent,
    turn_lease,
)
from dupguard.runtime import backends as contract
from dupguard.runtime.backends import Unstorable, compose_key, decode_result, encode_result


class Counter:
    """A side effect that counts its executions and returns ``value``."""

    def __init__(self, value) -> None:
        self.value = value
        self.runs = 0

    def __call__(self):
        self.runs += 1
        return self.value


# ---------------------------------------------------------------------- 11. unstorable results


def test_a_lone_surrogate_result_is_stored_and_replayed_identically(backend):
    text = "refund ok \udc80 (bytes that were not UTF-8)"
    effect = Counter({"reply": text, "items": [text]})
    idem = Idempotency(backend, lease=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert idem.run("order-1", effect) == {"reply": text, "items": [text]}
        assert idem.run("order-1", effect) == {"reply": text, "items": [text]}  # a replay, same value
    assert effect.runs == 1

    ledger = ToolCallLedger(backend, scope="conv")
    decision = ledger.begin("call-1", "echo", {"text": text})
    ledger.complete("call-1", text, fence=decision.fence)
    replay = ledger.begin("call-1", "echo", {"text": text})
    assert replay.replay and replay.result == text


def test_the_stored_text_is_the_same_utf8_safe_json_for_every_backend():
    assert encode_result("\udc80") == '"\\udc80"' and decode_result('"\\udc80"') == "\udc80"
    assert encode_result("é") == '"é"'  # ordinary text is not escaped
    encode_result("\udc80").encode("utf-8")  # storable as UTF-8 text anywhere
    # the marker is out of band: a function may return a value that looks like one
    lookalike = {"__dupguard_unstored_result__": "object"}
    assert decode_result(encode_result(lookalike)) == lookalike
    assert decode_result(encode_result(Unstorable("why \udc80"))) == Unstorable("why \udc80")
    with pytest.raises(StoreError):  # a corrupted row is a store failure, not a JSON traceback
        decode_result("{not json")


def deeply_nested(depth: int = 5000) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("kind", ["deep", "large", "object"])
def test_an_unstorable_result_is_recorded_so_a_retry_never_runs_it_again(backend, monkeypatch, kind):
    if kind == "large":
        monkeypatch.setattr(contract, "MAX_RESULT_BYTES", 1000)
        value = "x" * 2000
    else:
        value = deeply_nested() if kind == "deep" else object()
    effect = Counter(value)
    idem = Idempotency(backend, lease=0.2)
    with pytest.warns(RuntimeWarning, match="cannot be stored"):
        assert idem.run("k", effect) is value  # the caller that ran it still gets its value
    record = backend.get(contract.compose_key("idem", "k"))
    assert record.state == "done" and isinstance(record.result, Unstorable)
    for _ in range(2):
        with pytest.raises(TypeError, match="already ran, but its result could not be stored"):
            idem.run("k", effect)
    assert effect.runs == 1

    ledger = ToolCallLedger(backend, scope="conv", lease=0.2)
    decision = ledger.begin("c1", "tool", {})
    with pytest.warns(RuntimeWarning, match="cannot be stored"):
        ledger.complete("c1", value, fence=decision.fence)
    replay = ledger.begin("c1", "tool", {})
    assert replay.replay and isinstance(replay.result, Unstorable)
    assert "the call ran" in str(replay.result)
    assert ledger.pending([{"id": "c1", "name": "tool", "arguments": {}}]) == []


def test_async_unstorable_results_are_recorded_too(backend):
    effect_runs = []

    async def effect():
        effect_runs.append(1)
        return deeply_nested()

    idem = Idempotency(backend)

    async def main():
        with pytest.warns(RuntimeWarning):
            await idem.arun("k", effect)
        with pytest.raises(TypeError, match="already ran"):
            await idem.arun("k", effect)

    asyncio.run(main())
    assert effect_runs == [1]


def test_a_server_that_refuses_the_value_gets_a_marker_and_the_key_never_reruns(make_redis_server):
    """Redis with ``proto-max-bulk-len 1mb`` refuses a 2 MB result (the store, not the encoder):
    after ``lease`` seconds of retries the key is recorded done without its value."""
    from dupguard.runtime import RedisBackend

    server = make_redis_server("--save", "", "--appendonly", "no", "--proto-max-bulk-len", "1mb")
    store = RedisBackend(server.url, prefix="big:")
    effect = Counter("x" * 2_000_000)
    idem = Idempotency(store, lease=0.6)
    with pytest.warns(RuntimeWarning, match="cannot be stored"):
        assert idem.run("k", effect) == effect.value
    with pytest.raises(TypeError, match="could not be stored"):
        idem.run("k", effect)
    assert effect.runs == 1
    store.close()


@pytest.mark.parametrize("key", ["bad \udc80 key", "nul\x00key"])
def test_keys_no_backend_can_store_are_refused_before_anything_runs(backend, key):
    effect = Counter(1)
    with pytest.raises(ValueError, match="store key"):
        Idempotency(backend).run(key, effect)
    with pytest.raises(ValueError, match="store key"):
        backend.claim(key, lease=1)
    with pytest.raises(ValueError, match="store key"):
        backend.claim("k", lease=1, payload=key)
    assert effect.runs == 0


# ---------------------------------------------------------------------- 12. Redis eviction


def fill(store, idem: Idempotency, n: int, runs: dict) -> None:
    for i in range(n):

        def effect(i=i):
            runs[i] = runs.get(i, 0) + 1
            return "x" * 10_000

        idem.run(f"order-{i}", effect)


def test_an_evicting_redis_is_refused_before_anything_runs(make_redis_server):
    import redis

    from dupguard.runtime import RedisBackend

    server = make_redis_server("--save", "", "--maxmemory", "1mb", "--maxmemory-policy", "allkeys-lru")
    effect = Counter(1)
    store = RedisBackend(server.url)
    with pytest.raises(StoreConfigError, match="allkeys-lru") as info:
        Idempotency(store).run("k", effect)
    assert effect.runs == 0 and info.value.retryable is False and info.value.executed is False
    assert isinstance(info.value, StoreError) and "noeviction" in str(info.value)

    async def native():
        client = redis.asyncio.Redis.from_url(server.url)
        try:
            with pytest.raises(StoreConfigError):
                await RedisBackend(client).aclaim("k", lease=1)
        finally:
            await client.aclose()

    asyncio.run(native())

    # why: accepted with a warning, the server evicts completed records and their keys run again
    warned = RedisBackend(server.url, prefix="warned:", on_eviction="warn")
    runs: dict = {}
    with pytest.warns(RuntimeWarning, match="allkeys-lru"):
        fill(warned, Idempotency(warned), 300, runs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, not at every call
        fill(warned, Idempotency(warned), 300, runs)
    assert max(runs.values()) == 2  # 3 MB of results in 1 MB: evicted keys ran a second time
    for s in (store, warned):
        s.close()


def test_a_redis_without_config_is_checked_through_info_or_warned_about(make_redis_server):
    from dupguard.runtime import RedisBackend

    no_config = make_redis_server(
        "--save", "", "--maxmemory", "1mb", "--maxmemory-policy", "allkeys-lru", "--rename-command", "CONFIG", ""
    )
    with pytest.raises(StoreConfigError, match="allkeys-lru"):  # read from INFO memory instead
        RedisBackend(no_config.url).claim("k", lease=1)

    managed = make_redis_server("--save", "", "--rename-command", "CONFIG", "", "--rename-command", "INFO", "")
    store = RedisBackend(managed.url, prefix="m1:")
    with pytest.warns(RuntimeWarning, match="could not read the server's maxmemory-policy"):
        assert Idempotency(store).run("k", lambda: "ran") == "ran"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Idempotency(store).run("k", lambda: "again") == "ran"  # once per backend
        ignoring = RedisBackend(managed.url, prefix="m2:", on_eviction="ignore")
        assert Idempotency(ignoring).run("k", lambda: "ran") == "ran"  # no check, no warning
    with pytest.raises(ValueError, match="on_eviction"):
        RedisBackend(managed.url, on_eviction="sometimes")


def test_a_noeviction_redis_passes_silently(redis_url):
    from dupguard.runtime import RedisBackend

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = RedisBackend(redis_url, prefix=f"ok:{uuid.uuid4().hex[:6]}:")
        assert Idempotency(store).run("k", lambda: 1) == 1
        store.close()


# ---------------------------------------------------------------------- 13. key composition


def test_ledger_scopes_and_call_ids_never_collide(backend):
    executed = []
    pairs = [("user", "alice:c1"), ("user:alice", "c1"), ("user\\", "c1"), ("user", "\\c1"), ("user:", "c1")]
    for scope, call_id in pairs:
        ledger = ToolCallLedger(backend, scope=scope)
        decision = ledger.begin(call_id, "refund", {"order": 1})
        assert decision.execute, f"{scope!r}/{call_id!r} replayed another scope's call"
        executed.append((scope, call_id))
        ledger.complete(call_id, f"{scope}|{call_id}", fence=decision.fence)
    for scope, call_id in pairs:
        assert (
            ToolCallLedger(backend, scope=scope).begin(call_id, "refund", {"order": 1}).result == f"{scope}|{call_id}"
        )
    assert executed == pairs


def test_idempotent_scopes_and_keys_never_collide(backend):
    calls = []

    def make(scope):
        @idempotent(backend, key=lambda k: k, scope=scope)
        def charge(k):
            calls.append((scope, k))
            return scope

        return charge

    assert make("a")("b:c") == "a"
    assert make("a:b")("c") == "a:b"  # once the same store key "a:b:c"
    assert Idempotency(backend).run("a:b:c", lambda: "direct") == "direct"
    assert Idempotency(backend).run("a\\:b:c", lambda: "escaped") == "escaped"
    assert calls == [("a", "b:c"), ("a:b", "c")]


def test_compose_key_is_injective():
    alphabet = ["", "a", ":", "\\", "a:", ":a", "\\:", ":\\", "a\\"]
    seen: dict[str, tuple] = {}
    for n in (1, 2, 3):
        for parts in itertools.product(alphabet, repeat=n):
            key = compose_key("k", *parts)
            assert seen.setdefault(key, parts) == parts, (key, parts, seen[key])
    assert compose_key("idem", "order-7") == "idem:order-7"  # plain keys stay readable


def test_redis_records_and_counters_of_two_prefixes_never_share_a_key(redis_url):
    from dupguard.runtime import RedisBackend

    tag = uuid.uuid4().hex[:6]
    a = RedisBackend(redis_url, prefix=f"{tag}:")
    b = RedisBackend(redis_url, prefix=f"{tag}:n:")  # once: a's counter "k" was b's record "k"
    assert a.incr("k") == 1
    assert b.claim("k", lease=5).acquired
    assert a.incr("k") == 2 and b.get("k").state == "pending"
    with pytest.raises(ValueError, match="braces"):
        RedisBackend(redis_url, prefix="app{1}:")


# ---------------------------------------------------------------------- 14. SQLite file replaced

OTHER_PROCESS = r"""
import json, sys
from dupguard.runtime import SQLiteBackend
store = SQLiteBackend(sys.argv[1])
claim = store.claim("order-7", lease=30)
print(json.dumps(claim.status))
"""


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_sqlite_file_deleted_or_replaced_under_a_process_fails_closed(tmp_path, how):
    path = tmp_path / "store.sqlite3"
    old = SQLiteBackend(path)
    assert old.claim("warm-up", lease=5).acquired
    if how == "deleted":  # rm store.sqlite3*: the new process creates a new file
        for suffix in ("", "-wal", "-shm"):
            (tmp_path / f"store.sqlite3{suffix}").unlink(missing_ok=True)
    else:  # a restore by rename over the path
        SQLiteBackend(tmp_path / "restored.sqlite3").close()
        os.replace(tmp_path / "restored.sqlite3", path)
    newcomer = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(path)], capture_output=True, text=True, timeout=60
    )
    assert json.loads(newcomer.stdout) == "acquired", newcomer.stderr
    effect = Counter(1)
    with pytest.raises(StoreError, match=how) as info:
        Idempotency(old).run("order-7", effect)  # once: acquired too, in the old file
    assert effect.runs == 0 and info.value.retryable is False
    with pytest.raises(StoreError, match=how):
        old.get("warm-up")

    errors = []  # a thread's new connection would open the new file: refused as well
    thread = threading.Thread(target=lambda: errors.append(pytest.raises(StoreError, old.claim, "x", lease=1)))
    thread.start()
    thread.join()
    assert errors and how in str(errors[0].value)
    old.close()

    if how == "deleted":  # and with nobody else around, the old process does not create a file
        for suffix in ("", "-wal", "-shm"):
            (tmp_path / f"store.sqlite3{suffix}").unlink(missing_ok=True)
        survivor = SQLiteBackend(tmp_path / "gone.sqlite3")
        (tmp_path / "gone.sqlite3").unlink()
        thread = threading.Thread(target=lambda: errors.append(pytest.raises(StoreError, survivor.get, "x")))
        thread.start()
        thread.join()
        assert "deleted" in str(errors[-1].value) and not (tmp_path / "gone.sqlite3").exists()
        survivor.close()


def test_an_untouched_sqlite_file_keeps_working_across_threads(tmp_path):
    store = SQLiteBackend(tmp_path / "s.db")
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(store.claim(f"k{i}", lease=5))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(c.acquired for c in results) and len(results) == 4
    store.close()


# ---------------------------------------------------------------------- 15. durations

BAD_DURATIONS = [float("inf"), float("nan"), -1, 0, 1e12]


@pytest.mark.parametrize("value", BAD_DURATIONS, ids=repr)
@pytest.mark.parametrize("name", ["ttl", "lease"])
def test_idempotency_refuses_bad_durations_before_anything_runs(name, value):
    with pytest.raises(ValueError, match=name):
        Idempotency(MemoryBackend(), **{name: value})
    with pytest.raises(ValueError, match=name):
        idempotent(MemoryBackend(), key=lambda x: x, **{name: value})
    with pytest.raises(ValueError, match=name):
        ToolCallLedger(MemoryBackend(), scope="s", **{name: value})


def test_every_constructor_checks_its_durations(tmp_path, redis_url):
    from dupguard.runtime import RedisBackend

    store = MemoryBackend()
    cases = [
        (lambda: Idempotency(store, ttl="3600"), TypeError, "ttl"),
        (lambda: Idempotency(store, lease=True), TypeError, "lease"),
        (lambda: Lease(store, "k", 1, ttl=float("inf")), ValueError, "ttl"),
        (lambda: Lease(store, "k", 1, ttl=5, heartbeat=float("nan")), ValueError, "heartbeat"),
        (lambda: Lease(store, "k", 1, ttl=5, max_run=-1), ValueError, "max_run"),
        (lambda: SQLiteBackend(tmp_path / "a.db", busy_timeout=float("inf")), ValueError, "busy_timeout"),
        (lambda: SQLiteBackend(tmp_path / "b.db", sweep_every=0), ValueError, "sweep_every"),
        (lambda: RedisBackend(redis_url, socket_timeout=float("nan")), ValueError, "socket_timeout"),
        (lambda: SessionRegistry(dict, idle_ttl=float("nan")), ValueError, "idle_ttl"),
    ]
    for make, error, name in cases:
        with pytest.raises(error, match=name):
            make()
    # what stays allowed
    Lease(store, "k", 1, ttl=5, heartbeat=0)
    SQLiteBackend(tmp_path / "c.db", busy_timeout=0).close()
    SessionRegistry(dict, idle_ttl=None)


def test_turn_lease_checks_keep_before_claiming_the_turn(backend):
    ran = []
    with pytest.raises(ValueError, match="keep"), turn_lease(backend, "turn-1", keep=float("inf")):
        ran.append(1)
    assert ran == [] and backend.get("turn-1") is None  # nothing claimed, nothing left pending


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 0, -5, 1e12], ids=repr)
def test_backend_operations_refuse_bad_durations_and_change_nothing(backend, value):
    with pytest.raises(ValueError, match="lease"):
        backend.claim("k", lease=value)
    assert backend.get("k") is None
    claim = backend.claim("k", lease=5)
    with pytest.raises(ValueError, match="ttl"):
        backend.complete("k", claim.fence, "v", ttl=value)
    with pytest.raises(ValueError, match="lease"):
        backend.renew("k", claim.fence, lease=value)
    with pytest.raises(ValueError, match="ttl"):
        backend.incr("n", ttl=value)
    assert backend.get("k").state == "pending"  # still held: the caller decides
