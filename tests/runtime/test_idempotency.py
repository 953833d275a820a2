"""``Idempotency`` / ``@idempotent``: one execution per key, from threads, loops and processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from dupguard.runtime import (
    Idempotency,
    IdempotencyInProgress,
    IdempotencyKeyMissing,
    IdempotencyPayloadMismatch,
    LeaseLost,
    MemoryBackend,
    RedisBackend,
    StoreError,
    idempotent,
)

N = 64


def until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.001)


async def auntil(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.001)


class Crowd:
    """N identical calls; the one that executes holds on until every other one has either
    raised ``IdempotencyInProgress`` (raise mode) or is waiting (wait mode), so the test
    proves they really overlapped instead of arriving after the result was stored."""

    def __init__(self, store, mode: str) -> None:
        self.store, self.mode = store, mode
        self.executions = 0
        self.in_progress = 0
        self.results: list = []
        self.lock = threading.Lock()
        self.store_key = "idem:crowd:order-42"

    def others_overlapped(self) -> bool:
        if self.mode == "raise":
            return self.in_progress == N - 1
        return self.store.waiters.waiting(self.store_key) == N - 1

    def record(self, outcome) -> None:
        with self.lock:
            if outcome is IdempotencyInProgress:
                self.in_progress += 1
            else:
                self.results.append(outcome)

    def check(self) -> None:
        assert self.executions == 1
        if self.mode == "raise":
            assert self.in_progress == N - 1 and self.results == [{"order": "order-42", "charged": 1}]
        else:
            assert self.in_progress == 0
            assert self.results == [{"order": "order-42", "charged": 1}] * N

    def sync_function(self):
        @idempotent(self.store, key=lambda order: order, scope="crowd", on_in_progress=self.mode, lease=5)
        def charge(order: str) -> dict:
            with self.lock:
                self.executions += 1
            until(self.others_overlapped)
            return {"order": order, "charged": self.executions}

        def call() -> None:
            try:
                self.record(charge("order-42"))
            except IdempotencyInProgress:
                self.record(IdempotencyInProgress)

        return call

    def async_function(self):
        @idempotent(self.store, key=lambda order: order, scope="crowd", on_in_progress=self.mode, lease=5)
        async def charge(order: str) -> dict:
            with self.lock:
                self.executions += 1
            await auntil(self.others_overlapped)
            return {"order": order, "charged": self.executions}

        async def call() -> None:
            try:
                self.record(await charge("order-42"))
            except IdempotencyInProgress:
                self.record(IdempotencyInProgress)

        return call


MODES = ["wait", "raise"]


@pytest.mark.parametrize("mode", MODES)
def test_64_threads_execute_once(backend, mode):
    crowd = Crowd(backend, mode)
    call = crowd.sync_function()
    barrier = threading.Barrier(N)

    def thread() -> None:
        barrier.wait()
        call()

    threads = [threading.Thread(target=thread) for _ in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    crowd.check()


@pytest.mark.parametrize("mode", MODES)
def test_64_tasks_on_one_loop_execute_once(backend, mode):
    crowd = Crowd(backend, mode)
    call = crowd.async_function()

    async def main() -> None:
        await asyncio.wait_for(asyncio.gather(*(call() for _ in range(N))), 30)

    asyncio.run(main())
    crowd.check()


@pytest.mark.parametrize("mode", MODES)
def test_64_tasks_on_three_loops_in_three_threads_execute_once(backend, mode):
    crowd = Crowd(backend, mode)
    call = crowd.async_function()
    barrier = threading.Barrier(3)
    errors: list[BaseException] = []

    def loop_thread(tasks: int) -> None:
        async def main() -> None:
            await asyncio.wait_for(asyncio.gather(*(call() for _ in range(tasks))), 30)

        barrier.wait()
        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=loop_thread, args=(n,)) for n in (22, 21, 21)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    crowd.check()


# ---------------------------------------------------------------------- semantics


def test_results_replay_until_ttl_then_the_key_runs_again(backend):
    idem = Idempotency(backend, ttl=0.2)
    runs = []
    assert idem.run("k", lambda: runs.append(1) or len(runs)) == 1
    assert idem.run("k", lambda: runs.append(1) or len(runs)) == 1
    time.sleep(0.25)
    assert idem.run("k", lambda: runs.append(1) or len(runs)) == 2


def test_payload_mismatch_and_missing_keys(backend):
    idem = Idempotency(backend)
    assert idem.run("k", lambda: "charged", payload={"amount": 10, "cur": "EUR"}) == "charged"
    # same payload, keys in another order: a replay
    assert idem.run("k", lambda: "again", payload={"cur": "EUR", "amount": 10}) == "charged"
    with pytest.raises(IdempotencyPayloadMismatch) as info:
        idem.run("k", lambda: "again", payload={"amount": 11, "cur": "EUR"})
    assert info.value.retryable is False
    for empty in (None, ""):
        with pytest.raises(IdempotencyKeyMissing):
            idem.run(empty, lambda: 1)

    @idempotent(backend, key=lambda user, text: user)
    def reply(user: str, text: str) -> str:
        return text.upper()

    assert reply("ann", "hi") == "HI"
    with pytest.raises(IdempotencyPayloadMismatch):  # a key reused for another call
        reply("ann", "bye")

    @idempotent(backend, key=lambda req: req.get("id"))
    def handle(req: dict) -> int:
        return 1

    with pytest.raises(IdempotencyKeyMissing):
        handle({})
    with pytest.raises(IdempotencyKeyMissing):
        handle({"id": ""})


def test_a_failure_releases_the_key_so_a_retry_runs(backend):
    idem = Idempotency(backend)
    attempts = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("tool timed out")
        return "ok"

    with pytest.raises(ConnectionError):
        idem.run("k", flaky)
    assert backend.get("idem:k") is None
    assert idem.run("k", flaky) == "ok"
    assert idem.run("k", flaky) == "ok" and len(attempts) == 2


def test_async_cancellation_releases_the_key(backend):
    idem = Idempotency(backend)
    started = asyncio.Event

    async def main() -> None:
        began = started()

        async def slow() -> str:
            began.set()
            await asyncio.sleep(10)
            return "never"

        task = asyncio.create_task(idem.arun("k", slow))
        await began.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await idem.arun("k", lambda: asyncio.sleep(0, "second")) == "second"

    asyncio.run(main())


def test_the_heartbeat_keeps_a_long_call_alive_past_its_lease(backend):
    idem = Idempotency(backend, lease=0.3, on_in_progress="raise")
    release = threading.Event()
    outcome = []
    holder = threading.Thread(target=lambda: outcome.append(idem.run("k", lambda: release.wait(5) and "done")))
    holder.start()
    until(lambda: backend.get("idem:k") is not None)
    time.sleep(0.65)  # more than two leases: only renewals keep the key
    with pytest.raises(IdempotencyInProgress) as info:
        idem.run("k", lambda: "duplicate")
    assert info.value.retryable and 0 < info.value.retry_after <= 0.3
    release.set()
    holder.join(5)
    assert outcome == ["done"]
    assert idem.run("k", lambda: "duplicate") == "done"


def test_async_heartbeat_keeps_a_long_call_alive(backend):
    idem = Idempotency(backend, lease=0.3)

    async def main() -> None:
        async def slow() -> str:
            await asyncio.sleep(0.75)
            return "done"

        holder = asyncio.create_task(idem.arun("k", slow))
        await asyncio.sleep(0.65)
        with pytest.raises(IdempotencyInProgress):
            await idem.arun("k", slow)
        assert await holder == "done"

    asyncio.run(main())


def test_a_stuck_holder_is_taken_over_and_its_late_result_refused(backend):
    # a call that runs past ttl counts as stuck: its heartbeat stops, the lease runs out
    idem = Idempotency(backend, ttl=0.2, lease=0.3, on_in_progress="raise")
    release = threading.Event()
    errors = []

    def stuck() -> str:
        release.wait(5)
        return "late"

    def holder() -> None:
        try:
            idem.run("k", stuck)
        except LeaseLost as exc:
            errors.append(exc)

    t = threading.Thread(target=holder)
    t.start()
    until(lambda: backend.get("idem:k") is not None)
    old = backend.get("idem:k").fence
    until(lambda: backend.get("idem:k") is None, timeout=5)  # no more renewals: it expires
    taker = Idempotency(backend, ttl=30, lease=5)
    assert taker.run("k", lambda: "fresh") == "fresh"
    assert backend.get("idem:k").fence > old
    release.set()
    t.join(5)
    assert len(errors) == 1 and not errors[0].retryable
    assert taker.run("k", lambda: "again") == "fresh"


def test_unserialisable_results_run_once_and_are_not_replayed(backend):
    idem = Idempotency(backend)
    marker = object()
    with pytest.warns(RuntimeWarning, match="cannot be stored"):
        assert idem.run("k", lambda: marker) is marker
    with pytest.raises(TypeError, match="could not be stored"):
        idem.run("k", lambda: marker)


def test_decorator_scopes_async_functions_and_wait_mode(backend):
    seen = []

    @idempotent(backend, key=lambda n: n, on_in_progress="wait", lease=5)
    async def square(n: int) -> int:
        seen.append(n)
        await asyncio.sleep(0.05)
        return n * n

    @idempotent(backend, key=lambda n: n)
    def cube(n: int) -> int:
        return n**3

    async def main() -> list:
        return await asyncio.gather(square(3), square(3), square(4))

    assert asyncio.run(main()) == [9, 9, 16] and sorted(seen) == [3, 4]
    assert cube(3) == 27  # another function: another scope, the same key runs
    assert square.idempotency.store is backend
    with pytest.raises(TypeError):
        idempotent(lambda: 1)


def test_default_store_is_shared_by_every_helper():
    first = Idempotency()
    second = Idempotency()
    key = f"shared-{time.monotonic_ns()}"
    assert first.run(key, lambda: 1) == 1
    assert second.run(key, lambda: 2) == 1
    assert isinstance(first.store, MemoryBackend)


def test_store_failure_before_the_call_is_retryable_and_nothing_ran(tmp_path):
    from dupguard.runtime import SQLiteBackend

    store = SQLiteBackend(tmp_path / "s.db")
    store.close()
    ran = []
    with pytest.raises(StoreError) as info:
        Idempotency(store).run("k", lambda: ran.append(1))
    assert info.value.retryable and info.value.executed is False and ran == []


# ---------------------------------------------------------------------- processes

# One helper interpreter imports everything once, then forks the callers: each caller is a
# real process with its own store connection, and 16 of them start in milliseconds instead of
# paying 16 interpreter start-ups (which takes seconds on a loaded 2-core machine).
CALLERS = r"""
import json, os, sys, time
spec = json.loads(sys.argv[1])
from dupguard.runtime import Idempotency, IdempotencyInProgress, RedisBackend, SQLiteBackend
if spec["kind"] == "redis":
    import redis  # noqa: F401  (import before forking, not 16 times after)

def say(line):  # one write(2) per line: lines from 16 processes never interleave
    os.write(1, (line + "\n").encode())

def caller():
    if spec["kind"] == "sqlite":
        store = SQLiteBackend(spec["where"])
    else:
        store = RedisBackend(spec["where"], prefix=spec["prefix"])
    idem = Idempotency(store, lease=spec["lease"], on_in_progress=spec["mode"])

    def work():
        with open(spec["log"], "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(spec["hold"])
        return {"pid": os.getpid()}

    say(f"ready {os.getpid()}")
    while not os.path.exists(spec["go"]):
        time.sleep(0.002)
    try:
        out = {"result": idem.run(spec["key"], work)}
    except IdempotencyInProgress:
        out = {"in_progress": True}
    say(json.dumps(out))

children = []
for _ in range(spec["processes"]):
    pid = os.fork()
    if pid == 0:
        try:
            caller()
        finally:
            os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


def spawn(spec: dict, processes: int) -> tuple[subprocess.Popen, list[int]]:
    """Start ``processes`` callers; returns the helper and the callers' pids once all are ready."""
    helper = subprocess.Popen(
        [sys.executable, "-c", CALLERS, json.dumps({**spec, "processes": processes})], stdout=subprocess.PIPE, text=True
    )
    pids = []
    for _ in range(processes):
        line = helper.stdout.readline()
        assert line.startswith("ready "), line
        pids.append(int(line.split()[1]))
    return helper, pids


def executions(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().split()] if log.exists() else []


@pytest.mark.parametrize("mode", MODES)
def test_16_processes_execute_once(shared_backend, tmp_path, mode):
    store, spec = shared_backend
    log, go = tmp_path / "executions.log", tmp_path / "go"
    spec = {**spec, "key": "job-7", "mode": mode, "lease": 5, "hold": 0.5, "log": str(log), "go": str(go)}
    helper, pids = spawn(spec, 16)
    go.touch()  # all 16 are past start-up: they claim within milliseconds of each other
    outcomes = [json.loads(line) for line in helper.communicate(timeout=30)[0].splitlines()]
    assert len(outcomes) == 16 and len(set(pids)) == 16

    ran = executions(log)
    assert len(ran) == 1 and ran[0] in pids
    winner = {"pid": ran[0]}
    if mode == "wait":
        assert outcomes == [{"result": winner}] * 16
    else:
        assert {"result": winner} in outcomes
        assert all(o in ({"result": winner}, {"in_progress": True}) for o in outcomes)
        assert sum(o == {"in_progress": True} for o in outcomes) >= 4  # they did overlap
    assert store.get("idem:job-7").result == winner


def test_a_killed_holder_loses_its_lease_and_its_late_write_is_refused(shared_backend, tmp_path):
    store, spec = shared_backend
    log, go = tmp_path / "executions.log", tmp_path / "go"
    go.touch()
    spec = {**spec, "key": "job-9", "mode": "raise", "lease": 1.0, "hold": 60, "log": str(log), "go": str(go)}
    helper, (holder,) = spawn(spec, 1)
    until(lambda: executions(log) == [holder])
    old = store.get("idem:job-9")
    assert old.state == "pending"
    time.sleep(1.2)  # longer than the lease: the live holder's heartbeat keeps it
    assert store.get("idem:job-9").fence == old.fence
    with pytest.raises(IdempotencyInProgress):
        Idempotency(store, lease=1.0).run("job-9", lambda: "duplicate")

    os.kill(holder, signal.SIGKILL)  # dies mid-run: no release, no heartbeat any more
    helper.wait(5)
    t0 = time.monotonic()
    result = Idempotency(store, lease=5, on_in_progress="wait").run("job-9", lambda: "rerun")
    waited = time.monotonic() - t0
    assert result == "rerun" and waited < 2.5  # taken over once the 1 s lease ran out
    new = store.get("idem:job-9")
    assert new.state == "done" and new.fence > old.fence

    with pytest.raises(LeaseLost):  # the killed owner's late write, with its old fence
        store.complete("idem:job-9", old.fence, {"pid": holder}, ttl=60)
    assert store.get("idem:job-9").result == "rerun"
    assert Idempotency(store).run("job-9", lambda: "third") == "rerun"
    helper.stdout.close()


# ---------------------------------------------------------------------- Redis outages


def _outage(server, restart: bool, lease: float = 2.0):
    """A call runs while its Redis server is killed (and maybe restarted)."""
    store = RedisBackend(server.url, prefix="outage:")
    idem = Idempotency(store, lease=lease, on_in_progress="raise")
    runs: dict[str, int] = {}

    def work(name: str):
        def fn() -> str:
            runs[name] = runs.get(name, 0) + 1
            if name == "inflight":
                started.set()
                proceed.wait(10)
            return f"{name}-result"

        return fn

    started, proceed = threading.Event(), threading.Event()
    assert idem.run("before", work("before")) == "before-result"
    outcome: list = []

    def holder() -> None:
        try:
            outcome.append(idem.run("inflight", work("inflight")))
        except StoreError as exc:
            outcome.append(exc)

    t = threading.Thread(target=holder)
    t.start()
    assert started.wait(5)
    server.kill()

    # while the server is down: callers get StoreError (never a redis exception), and
    # nothing runs for them
    import redis

    for key in ("inflight", "other"):
        with pytest.raises(StoreError) as info:
            idem.run(key, work(key))
        assert not isinstance(info.value, redis.RedisError)
        assert info.value.retryable and info.value.executed is False
    assert "other" not in runs

    proceed.set()  # the holder's function returns while the store is unreachable
    time.sleep(0.3)
    if restart:
        server.start()
    t.join(10)
    return idem, runs, outcome


def test_redis_crash_and_restart_with_aof_never_runs_a_key_twice(make_redis_server):
    server = make_redis_server("--appendonly", "yes", "--appendfsync", "always", "--save", "")
    idem, runs, outcome = _outage(server, restart=True)
    assert outcome == ["inflight-result"]  # recorded once the server was back
    assert idem.run("inflight", lambda: "again") == "inflight-result"
    assert idem.run("before", lambda: "again") == "before-result"  # survived the crash (AOF)
    assert runs == {"before": 1, "inflight": 1}
    assert idem.run("other", lambda: "first run") == "first run"


def test_redis_restart_without_persistence_keeps_the_inflight_key(make_redis_server):
    server = make_redis_server()  # --save '' --appendonly no: a restart forgets everything
    idem, runs, outcome = _outage(server, restart=True)
    # the holder re-created its record under its fence when the empty server came back
    assert outcome == ["inflight-result"]
    assert idem.run("inflight", lambda: "again") == "inflight-result"
    assert runs["inflight"] == 1


def test_redis_down_for_good_tells_the_caller_the_function_ran(make_redis_server):
    server = make_redis_server()
    _idem, runs, outcome = _outage(server, restart=False, lease=0.5)
    (error,) = outcome
    assert isinstance(error, StoreError) and runs["inflight"] == 1
    assert error.executed is True and error.retryable is False and error.result == "inflight-result"


def test_sync_run_waits_for_a_holder_on_an_event_loop():
    store = MemoryBackend()
    idem = Idempotency(store, on_in_progress="wait", lease=5)
    started = threading.Event()

    async def holder() -> str:
        started.set()
        await asyncio.sleep(0.2)
        return "from the loop"

    t = threading.Thread(target=lambda: asyncio.run(idem.arun("k", holder)))
    t.start()
    assert started.wait(5)
    t0 = time.monotonic()
    assert idem.run("k", lambda: "duplicate") == "from the loop"
    assert time.monotonic() - t0 < 1.0  # woken by the completion, not by the 5 s lease
    t.join(5)


def test_no_warnings_on_the_happy_path(backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Idempotency(backend).run("k", lambda: [1, "two", {"3": 4.0}]) == [1, "two", {"3": 4.0}]


def test_payload_hash_is_canonical_and_stable_for_non_json_values():
    import dataclasses
    import uuid

    from dupguard.runtime.idempotency import payload_hash

    @dataclasses.dataclass
    class Order:
        id: int

    assert payload_hash(None) is None
    assert payload_hash({"a": 1, "b": [1, 2]}) == payload_hash({"b": (1, 2), "a": 1})
    assert payload_hash(b"abc") != payload_hash(b"abd")  # bytes by content, not by type
    assert payload_hash({3, 1, 2}) == payload_hash({1, 2, 3})
    assert payload_hash(Order(1)) != payload_hash(Order(2))
    assert payload_hash(uuid.UUID(int=1)) != payload_hash(uuid.UUID(int=2))
    assert payload_hash({1: "int key", "s": "str key"})  # unsortable keys still hash
    # an object with no stable content compares by type: same type, same payload
    assert payload_hash(object()) == payload_hash(object())
    code = "from dupguard.runtime.idempotency import payload_hash; print(payload_hash({'k': b'v', 'n': 1.5}))"
    other_process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other_process.stdout.strip() == payload_hash({"n": 1.5, "k": b"v"})


def test_idempotent_passes_its_key_to_reconcile_and_resolves_by_that_key():
    """``@idempotent(on_abandoned=…)``: ``reconcile`` gets what ``key(...)`` returned (the key the
    payment API was given), and ``.resolve``/``.release`` take that key too, not the store's."""
    from dupguard.runtime import MISSING, OutcomeUnknown
    from dupguard.runtime.backends import compose_key

    store = MemoryBackend()
    asked = []

    def reconcile(key):
        asked.append(key)
        return {"refund": f"re_{key}"} if key == "refund:1" else MISSING

    @idempotent(store, key=lambda order_id: f"refund:{order_id}", scope="refunds", on_abandoned=reconcile)
    def refund(order_id):
        return {"refund": "ran"}

    @idempotent(store, key=lambda order_id: f"refund:{order_id}", scope="strict", on_abandoned="raise")
    def strict_refund(order_id):
        return {"refund": "ran"}

    for scope, k in (("refunds", "refund:1"), ("refunds", "refund:2"), ("strict", "refund:3"), ("strict", "refund:4")):
        store.claim(compose_key("idem", scope, k), lease=0.05, keep=60)  # a worker killed mid-call
    time.sleep(0.1)
    assert refund(1) == {"refund": "re_refund:1"} and refund(2) == {"refund": "ran"}
    assert asked == ["refund:1", "refund:2"]
    with pytest.raises(OutcomeUnknown) as info:
        strict_refund(3)
    assert info.value.key == "refund:3"  # the key resolve and release take
    strict_refund.resolve("refund:3", {"refund": "re_3"}, fence=info.value.fence)
    assert strict_refund(3) == {"refund": "re_3"}
    with pytest.raises(OutcomeUnknown) as info:
        strict_refund(4)
    assert strict_refund.release("refund:4", fence=info.value.fence) is True
    assert strict_refund(4) == {"refund": "ran"}
    with pytest.raises(ValueError, match="on_abandoned"):
        Idempotency(store, on_abandoned="ignore")
